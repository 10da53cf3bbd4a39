// From a job to a result: run the probe the job names, inside its span, within its timeout.
// The probe bounds itself (per request and per run); a hard guard on top makes sure that even a
// probe bug cannot hold a job (and a concurrency slot) forever: past it, the job ends as a
// timeout and whatever the probe still does is ignored.
import type { Job, Result } from '@mcp-fleet/bus';
import {
  DETECTION_MAX_MS,
  type Detection,
  detect,
  type Exchange,
  type HandshakeRun,
  handshake,
  isRevision,
  REVISIONS,
  type RevisionChoice,
} from '@mcp-fleet/probe';
import type { Tracer } from '@opentelemetry/api';
import type { Dispatcher } from 'undici';
import { ProbeSpan } from './spans';

/** Past the probe's own budget, how long the guard waits before giving up on it. */
export const GUARD_GRACE_MS = 5_000;

export interface JobContext {
  agent: string;
  tracer: Tracer;
  /** The longest a job may ask for; longer timeouts are cut to this. */
  timeoutCapMs: number;
  /** Where probes connect (the address policy); the probe's default when undefined. */
  dispatcher?: Dispatcher;
  /** Telemetry must never break a probe: a span fault is reported here and swallowed. */
  onTelemetryError?: (err: unknown) => void;
}

export type JobAnswer =
  | { ok: true; result: Result; run: HandshakeRun | null; detection: Detection | null }
  /** The job can never succeed (it names nothing to run): terminate it. */
  | { ok: false; poison: string };

export async function runJob(job: Job, ctx: JobContext): Promise<JobAnswer> {
  const choice: RevisionChoice | undefined =
    job.revision === 'newest' ? 'newest' : isRevision(job.revision) ? job.revision : undefined;
  if (job.kind === 'handshake' && !choice) return { ok: false, poison: 'a handshake job must name a revision' };

  const startedAt = new Date();
  const span = new ProbeSpan(ctx.tracer, job, ctx.agent);
  let ended = false;
  const onExchange = (ex: Exchange) => {
    if (ended) return;
    try {
      span.exchange(ex);
    } catch (err) {
      ctx.onTelemetryError?.(err);
    }
  };
  const timeoutMs = Math.max(1, Math.min(job.timeoutMs, ctx.timeoutCapMs));
  const base = {
    headers: job.headers,
    timeoutMs,
    onExchange,
    ...(ctx.dispatcher ? { dispatcher: ctx.dispatcher } : {}),
  };

  let run: HandshakeRun | null = null;
  let detection: Detection | null = null;
  try {
    if (job.kind === 'handshake') {
      const current = isRevision(job.currentRevision) ? job.currentRevision : undefined;
      const guardMs = timeoutMs + GUARD_GRACE_MS;
      run =
        (await guarded(handshake(job.url, { ...base, revision: choice ?? 'newest', current }), guardMs)) ??
        hungRun(job, choice ?? 'newest', guardMs);
      run = fitRun(run);
      span.endHandshake(run);
    } else {
      const guardMs = DETECTION_MAX_MS + GUARD_GRACE_MS;
      detection = (await guarded(detect(job.url, base), guardMs)) ?? hungDetection(guardMs);
      span.endDetection(detection);
    }
  } catch (err) {
    span.endWithError('agent_error', 'the probe failed inside the agent');
    throw err;
  } finally {
    ended = true;
  }

  const result: Result = {
    jobId: job.jobId,
    kind: job.kind,
    region: job.region,
    agent: ctx.agent,
    serverId: job.serverId,
    testId: job.testId,
    slot: job.slot,
    scheduledAt: job.scheduledAt,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    traceId: span.traceId,
    run,
    detection,
    conformance: null,
  };
  return { ok: true, result, run, detection };
}

/** The probe's answer, or undefined when it did not come within `ms`. */
async function guarded<T>(probe: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([probe, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function hungMessage(ms: number): string {
  return `the probe did not finish within ${ms} ms and was abandoned`;
}

function hungRun(job: Job, choice: RevisionChoice, ms: number): HandshakeRun {
  const pinned = choice === 'newest' ? undefined : choice;
  const current = isRevision(job.currentRevision) ? job.currentRevision : undefined;
  return {
    mode: pinned ? 'pinned' : 'newest',
    requested: pinned ?? current ?? null,
    negotiated: null,
    generation: null,
    era: null,
    outcome: 'timeout',
    message: hungMessage(ms),
    previousRevision: null,
    requests: 0,
    millis: ms,
    serverInfo: null,
    assertion: null,
    lookup: { performed: false, found: null, requests: 0 },
    evidence: null,
  };
}

function hungDetection(ms: number): Detection {
  return {
    outcome: 'NONE',
    // Every revision timed out (below): one cause, as probe's cause.ts would name it.
    cause: 'timeout',
    retryAfterHeader: null,
    newestSupported: null,
    serverInfo: null,
    requests: 0,
    millis: ms,
    revisions: REVISIONS.map((r) => ({
      revision: r.revision,
      generation: r.generation,
      supported: false,
      note: r.note,
      sentence: `${r.revision} (${r.generation}): not supported (${hungMessage(ms)}).`,
      evidence: {
        status: null,
        contentType: null,
        bodyPreview: null,
        jsonRpcErrorCode: null,
        jsonRpcErrorMessage: null,
        millis: ms,
        reachabilityFailure: 'timeout',
        message: hungMessage(ms),
      },
    })),
  };
}

/** A server can answer with any string as its protocol version; the result message keeps 64 characters of it. */
function fitRun(run: HandshakeRun): HandshakeRun {
  return run.negotiated !== null && run.negotiated.length > 64
    ? { ...run, negotiated: run.negotiated.slice(0, 64) }
    : run;
}
