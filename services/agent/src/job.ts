// From a job to a result: run the probe the job names, inside its span, within its timeout.
// The probe bounds itself (per request and per run); a hard guard on top makes sure that even a
// probe bug cannot hold a job (and a concurrency slot) forever: past it, the job ends as a
// timeout and whatever the probe still does is ignored. A conformance-depth job runs the era's
// checks after a handshake that passed, on the revision it negotiated, within a guard of its own,
// then reads the surface of that revision. A surface-depth job reads the surface of each era after
// its handshake; a script-depth job runs the test's steps in the revision its handshake negotiated.
// Each phase has a guard of its own (the probe's own deadline and request budget, then the grace).
import type { Job, Result } from '@mcp-fleet/bus';
import {
  BOUNDS,
  type CheckResult,
  CONFORMANCE_CHECKS,
  CONFORMANCE_MAX_MS,
  type ConformanceRun,
  conformance,
  cut,
  DETECTION_MAX_MS,
  type Detection,
  detect,
  displayCommand,
  type Exchange,
  type HandshakeRun,
  handshake,
  isPassing,
  isRevision,
  maskUrl,
  REVISIONS,
  type Revision,
  type RevisionChoice,
  readSurfaceAt,
  readSurfaces,
  revisionInfo,
  runScript,
  SCRIPT_MAX_MS,
  SCRIPT_MAX_STEPS,
  type ScriptRun,
  SURFACE_MAX_CHARS,
  SURFACE_READ_MAX_MS,
  type SurfaceRead,
  type SurfaceSnapshot,
  type Target,
} from '@mcp-fleet/probe';
import type { Tracer } from '@opentelemetry/api';
import type { Dispatcher } from 'undici';
import { ProbeSpan } from './spans';
import type { Admission } from './stdio-gate';
import { type Traffic, TrafficLog } from './traffic';

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
  /**
   * A stdio job's admission by the agent's own allowlist (stdio-gate.ts): the spec that runs, or
   * why nothing runs. A refused job becomes a run that says why (never a spawn, never a retry).
   */
  stdio?: Admission;
}

export type JobAnswer =
  | {
      ok: true;
      result: Result;
      run: HandshakeRun | null;
      detection: Detection | null;
      conformance: ConformanceRun | null;
      /** The surface reads the job made (each era's, with or without a snapshot). */
      surfaceReads: SurfaceRead[];
      script: ScriptRun | null;
      /** What every request of the job met, for the method-not-found and transport-error metrics. */
      traffic: Traffic;
    }
  /** The job can never succeed (it names nothing to run): terminate it. */
  | { ok: false; poison: string };

export async function runJob(job: Job, ctx: JobContext): Promise<JobAnswer> {
  const choice: RevisionChoice | undefined =
    job.revision === 'newest' ? 'newest' : isRevision(job.revision) ? job.revision : undefined;
  if (job.kind === 'handshake' && !choice) return { ok: false, poison: 'a handshake job must name a revision' };

  const startedAt = new Date();
  const span = new ProbeSpan(ctx.tracer, job, ctx.agent);
  // What the probe talks to: the URL, or the command the agent admitted (never the job's as given).
  let target: Target | undefined = job.url;
  let refused: string | undefined;
  if (job.command) {
    const admission: Admission = ctx.stdio ?? { ok: false, reason: 'this agent runs no stdio commands' };
    if (admission.ok) target = admission.spec;
    else refused = admission.reason;
    // Surface reads and scripts speak HTTP only (the fleet refuses them for stdio; a foreign control might not).
    if (job.depth === 'surface' || job.depth === 'script')
      refused = `a ${job.depth} test does not run over stdio; it was not started`;
  }
  if (target === undefined) refused ??= 'the job names no target';
  const shown = job.command ? displayCommand(job.command) : maskUrl(job.url ?? '');
  const traffic = new TrafficLog();
  let ended = false;
  const onExchange = (ex: Exchange) => {
    if (ended) return;
    traffic.add(ex);
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
  let checked: ConformanceRun | null = null;
  let surfaceReads: SurfaceRead[] = [];
  let script: ScriptRun | null = null;
  try {
    if (refused !== undefined) {
      // Nothing was started: the run (or detection) says why, in the operator's words.
      if (job.kind === 'handshake') {
        run = refusedRun(job, choice ?? 'newest', refused);
        span.endHandshake(run, null, 0);
      } else {
        detection = failedDetection(0, 'policy', 'policy', refused);
        span.endDetection(detection);
      }
    } else if (job.kind === 'handshake') {
      const current = isRevision(job.currentRevision) ? job.currentRevision : undefined;
      const guardMs = timeoutMs + GUARD_GRACE_MS;
      traffic.speaking(choice === 'newest' ? (current ?? null) : (choice ?? null));
      run =
        (await guarded(
          // A recheck (the scheduler's first slot of a recheck window) looks the revision up newest
          // first though a current one is known; the move is still judged from `current`.
          handshake(target!, { ...base, revision: choice ?? 'newest', current, recheck: job.recheck === true }),
          guardMs,
        )) ?? hungRun(job, choice ?? 'newest', guardMs);
      run = fitRun(run);
      const negotiated = isRevision(run.negotiated) ? run.negotiated : undefined;
      if (job.depth === 'conformance' && isPassing(run.outcome) && negotiated) {
        traffic.speaking(negotiated);
        checked = await runConformance(target!, shown, negotiated, base, span, ctx, () => ended);
        // The surface of the era it negotiated, once the checks connected: what it offers is worth
        // keeping even when a check failed; a run that could not connect has nothing to read.
        if (isPassing(checked.outcome) && job.url)
          surfaceReads = await readSurface(() => readSurfaceAt(job.url!, negotiated, base), SURFACE_READ_MAX_MS);
      }
      if (job.depth === 'surface' && isPassing(run.outcome) && job.url)
        surfaceReads = await readSurface(() => readSurfaces(job.url!, base), 2 * SURFACE_READ_MAX_MS);
      for (const read of surfaceReads) safely(ctx, () => span.surfaceRead(read));
      if (job.depth === 'script' && job.script && isPassing(run.outcome) && negotiated && job.url) {
        traffic.speaking(negotiated);
        script =
          (await guarded(
            runScript(job.url, { ...base, protocol: negotiated, script: job.script }),
            SCRIPT_MAX_MS + GUARD_GRACE_MS,
          )) ?? hungScript(negotiated, SCRIPT_MAX_MS + GUARD_GRACE_MS);
        script = fitScript(script);
        safely(ctx, () => span.script(script!));
        run = scriptedRun(run, script);
      }
      const otherRequests = surfaceReads.reduce((n, r) => n + r.requests, 0) + (script?.requests ?? 0);
      span.endHandshake(run, checked, otherRequests);
    } else {
      const guardMs = DETECTION_MAX_MS + GUARD_GRACE_MS;
      detection =
        (await guarded(detect(target!, base), guardMs)) ??
        failedDetection(guardMs, 'timeout', 'timeout', hungMessage(guardMs));
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
    conformance: checked,
    surfaces: surfaceReads.flatMap((r) => (r.snapshot ? [r.snapshot] : [])),
    script,
  };
  return {
    ok: true,
    result,
    run,
    detection,
    conformance: checked,
    surfaceReads,
    script,
    traffic: traffic.summary(run?.requested ?? run?.negotiated ?? null),
  };
}

/** Telemetry never breaks a probe. */
function safely(ctx: JobContext, record: () => void): void {
  try {
    record();
  } catch (err) {
    ctx.onTelemetryError?.(err);
  }
}

/**
 * The surface reads, within their guard (the reader's own deadline per era, then the grace); a
 * reader that hangs leaves no snapshot (a missing read is no change: the head stays). At most one
 * snapshot per era, and only those the bus may carry.
 */
async function readSurface(read: () => Promise<SurfaceRead | SurfaceRead[]>, maxMs: number): Promise<SurfaceRead[]> {
  const got = await guarded(read(), maxMs + GUARD_GRACE_MS);
  if (got === undefined) return [];
  const reads = Array.isArray(got) ? got : [got];
  const eras = new Set<string>();
  return reads.map((r) => {
    if (!r.snapshot || eras.has(r.snapshot.era) || !fitsBus(r.snapshot)) return { ...r, snapshot: null };
    eras.add(r.snapshot.era);
    return r;
  });
}

/** A snapshot the bus schema takes (the reader fits it; this is the last line, as fitConformance is). */
function fitsBus(s: SurfaceSnapshot): boolean {
  return (
    s.body.length <= SURFACE_MAX_CHARS &&
    /^[\x20-\x7e]*$/.test(s.body) &&
    /^[0-9a-f]{64}$/.test(s.hash) &&
    s.revision.length <= BOUNDS.revision
  );
}

function hungScript(negotiated: Revision, ms: number): ScriptRun {
  return {
    protocol: { requested: negotiated, negotiated: null, era: null },
    pass: false,
    outcome: 'timeout',
    message: hungMessage(ms),
    steps: [],
    requests: 0,
    millis: ms,
  };
}

/** A script run within the bus schema's bounds. */
function fitScript(run: ScriptRun): ScriptRun {
  return {
    ...run,
    protocol: {
      ...run.protocol,
      negotiated: run.protocol.negotiated === null ? null : cut(run.protocol.negotiated, BOUNDS.revision),
    },
    message: cut(run.message, BOUNDS.message),
    steps: run.steps.slice(0, SCRIPT_MAX_STEPS).map((s) => ({
      ...s,
      method: cut(s.method, 100),
      name: s.name === null ? null : cut(s.name, BOUNDS.name),
      message: cut(s.message, BOUNDS.check),
    })),
  };
}

/**
 * A script test's run: the handshake's, unless the script failed. A surface change is not a run
 * failure (issue 16), but a scripted check that fails is a check that fails: the run takes the
 * script's outcome and message, and its first failed step is the run's assertion.
 */
export function scriptedRun(run: HandshakeRun, script: ScriptRun): HandshakeRun {
  if (script.pass) return run;
  const failed = script.steps.find((s) => s.status === 'fail');
  const outcome = isPassing(script.outcome as HandshakeRun['outcome']) ? 'protocol_error' : script.outcome;
  return {
    ...run,
    outcome: outcome as HandshakeRun['outcome'],
    message: cut(`script: ${script.message}`, BOUNDS.message),
    assertion: failed
      ? {
          name: 'mcp.script.step',
          expected: cut(
            `step ${failed.index + 1} ${failed.method}${failed.name ? ` ${failed.name}` : ''} passes`,
            BOUNDS.revision,
          ),
          actual: 'failed',
          message: cut(failed.message, BOUNDS.message),
        }
      : run.assertion,
  };
}

/** How long the guard waits for a conformance run: the runner's own deadline, then the grace. */
export const CONFORMANCE_GUARD_MS = CONFORMANCE_MAX_MS + GUARD_GRACE_MS;

/**
 * The era's checks on the revision the handshake negotiated (`probe: true`: the raw negative probes
 * too, each marked deliberate). One span per check, as each ends.
 */
async function runConformance(
  target: Target,
  shown: string,
  negotiated: Revision,
  base: {
    headers: Record<string, string>;
    timeoutMs: number;
    onExchange: (ex: Exchange) => void;
    dispatcher?: Dispatcher;
  },
  span: ProbeSpan,
  ctx: JobContext,
  ended: () => boolean,
): Promise<ConformanceRun> {
  const startedAt = Date.now();
  const era = revisionInfo(negotiated).era;
  const onCheck = (check: CheckResult, checkStartedAt: number) => {
    if (ended()) return;
    try {
      span.check(check, checkStartedAt, era);
    } catch (err) {
      ctx.onTelemetryError?.(err);
    }
  };
  // tools_list_stable_across_connections needs a second TCP connection: the runner asks for it with
  // `reset` (the first answer closes its connection), so the job's pooled, policy-guarded dispatcher
  // serves it too; no dispatcher of its own, and the floor and the job's policy hold for it.
  const run =
    (await guarded(
      conformance(target, { ...base, protocol: negotiated, probe: true, onCheck }),
      CONFORMANCE_GUARD_MS,
    )) ?? hungConformance(shown, negotiated, Date.now() - startedAt);
  return fitConformance(run);
}

function hungConformance(shown: string, negotiated: Revision, ms: number): ConformanceRun {
  return {
    target: cut(shown, BOUNDS.message),
    protocol: { requested: negotiated, negotiated, era: revisionInfo(negotiated).era },
    pass: false,
    outcome: 'timeout',
    message: hungMessage(ms),
    serverInfo: null,
    checks: [],
    requests: 0,
    millis: ms,
    evidence: null,
  };
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

/**
 * A stdio job the agent would not start (stdio-gate.ts): a run that fails with the reason, its
 * evidence a policy refusal (probe's cause.ts reads it as "refused by policy"), and a stdio report
 * of no process: nothing was spawned.
 */
function refusedRun(job: Job, choice: RevisionChoice, reason: string): HandshakeRun {
  const message = cut(reason, BOUNDS.message);
  return {
    ...hungRun(job, choice, 0),
    outcome: 'unreachable',
    message,
    evidence: { ...failedEvidence(0, 'policy', message) },
    stdio: { processes: 0, stdoutNotJson: 0, findings: [], stderr: null },
  };
}

function failedEvidence(ms: number, failure: 'timeout' | 'policy', message: string) {
  return {
    status: null,
    contentType: null,
    bodyPreview: null,
    jsonRpcErrorCode: null,
    jsonRpcErrorMessage: null,
    millis: ms,
    reachabilityFailure: failure,
    message,
  };
}

/** A detection that learnt nothing, each revision failing for one cause (a hung probe, a refused command). */
function failedDetection(
  ms: number,
  cause: 'timeout' | 'policy',
  failure: 'timeout' | 'policy',
  why: string,
): Detection {
  const message = cut(why, BOUNDS.message);
  return {
    outcome: 'NONE',
    // Every revision failed alike (below): one cause, as probe's cause.ts would name it.
    cause,
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
      sentence: cut(`${r.revision} (${r.generation}): not supported (${message}).`, BOUNDS.message),
      evidence: failedEvidence(ms, failure, message),
    })),
  };
}

const CHECK_IDS: ReadonlySet<string> = new Set(CONFORMANCE_CHECKS.map((c) => c.id));

/**
 * A conformance run within the bus schema's bounds (a result over them is refused, and the job would
 * come back forever): the runner bounds its strings itself, this is the last line. Only checks of
 * probe's table, each once; a server's text cut to its bound.
 */
export function fitConformance(run: ConformanceRun): ConformanceRun {
  const seen = new Set<string>();
  const checks: CheckResult[] = [];
  for (const c of run.checks) {
    if (!CHECK_IDS.has(c.id) || seen.has(c.id)) continue;
    seen.add(c.id);
    const fitted: CheckResult = { ...c, message: cut(c.message, BOUNDS.check) };
    if (c.evidence) fitted.evidence = { ...fitEvidence(c.evidence), message: cut(c.evidence.message, BOUNDS.check) };
    checks.push(fitted);
  }
  return {
    ...run,
    target: cut(run.target, BOUNDS.message),
    protocol: {
      ...run.protocol,
      negotiated: run.protocol.negotiated === null ? null : cut(run.protocol.negotiated, BOUNDS.revision),
    },
    message: cut(run.message, BOUNDS.message),
    serverInfo: run.serverInfo
      ? {
          name: cut(run.serverInfo.name, BOUNDS.name),
          version: cut(run.serverInfo.version, BOUNDS.version),
          ...(run.serverInfo.title !== undefined ? { title: cut(run.serverInfo.title, BOUNDS.name) } : {}),
        }
      : null,
    checks,
    evidence: run.evidence ? fitEvidence(run.evidence) : null,
  };
}

function fitEvidence<E extends NonNullable<ConformanceRun['evidence']>>(e: E): E {
  const opt = (v: string | null, max: number) => (v === null ? null : cut(v, max));
  return {
    ...e,
    contentType: opt(e.contentType, BOUNDS.header),
    bodyPreview: opt(e.bodyPreview, BOUNDS.preview),
    jsonRpcErrorMessage: opt(e.jsonRpcErrorMessage, BOUNDS.preview),
    message: cut(e.message, BOUNDS.message),
  };
}

/** A server can answer with any string as its protocol version; the result message keeps 64 characters of it. */
function fitRun(run: HandshakeRun): HandshakeRun {
  return run.negotiated !== null && run.negotiated.length > 64
    ? { ...run, negotiated: run.negotiated.slice(0, 64) }
    : run;
}
