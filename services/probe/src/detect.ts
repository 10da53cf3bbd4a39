// A detection (docs/protocol.md#detection): which of the five revisions does this server accept?
// Each revision is probed on its own, never stopping at the first answer, in at most eight
// requests and 20 s. A detection is not a run: it changes no test.
import { boundDetection, excerpt } from './bounds';
import { type Cause, sharedCause } from './cause';
import { DEFAULT_TIMEOUT_MS, ProbeContext, type ProbeOptions } from './context';
import { type Evidence, evidenceOf, storable } from './evidence';
import type { Opening, ServerInfo } from './opening';
import { openRevision } from './openings';
import { deleteSession, STREAMABLE_HTTP } from './openings/sessions';
import { redact, redactStrings } from './redact';
import { type Generation, isRevision, REVISIONS, type Revision, revisionInfo } from './revisions';
import { type Target, targetOf } from './stdio/command';
import { type StdioReport, stdioReport } from './stdio/report';

export const DETECTION_MAX_REQUESTS = 8;
export const DETECTION_MAX_MS = 20_000;

export type DetectionOutcome = 'DETECTED' | 'NONE' | 'RATE_LIMITED';

export interface RevisionDetection {
  revision: Revision;
  generation: Generation;
  supported: boolean;
  note: string;
  sentence: string;
  serverInfo?: ServerInfo;
  evidence?: Evidence;
}

export interface Detection {
  outcome: DetectionOutcome;
  /**
   * What explains every revision when one thing does (a refused connection, a 401, a 503…, cause.ts),
   * so nothing was learnt about any: lead with it. Null when detected, or when the revisions differ.
   */
  cause: Cause | null;
  retryAfterHeader: string | null;
  newestSupported: Revision | null;
  serverInfo: ServerInfo | null;
  /** HTTP requests the detection sent (stdio: lines written). */
  requests: number;
  millis: number;
  revisions: RevisionDetection[];
  /** stdio targets only: processes started (one per revision), findings and the end of stderr. */
  stdio?: StdioReport;
}

/**
 * Detect the revisions a server accepts. `timeoutMs` bounds each request; the whole detection
 * is bounded by 20 s. The openings run side by side; sessions the server minted are deleted
 * afterwards while the request budget lasts.
 */
export async function detect(target: Target, opts: ProbeOptions = {}): Promise<Detection> {
  const ctx = new ProbeContext(targetOf(target), opts, {
    maxRequests: DETECTION_MAX_REQUESTS,
    totalMs: DETECTION_MAX_MS,
    perRequestMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const openings = await Promise.all(REVISIONS.map((r) => openRevision(ctx, r.revision, { complete: false })));
  for (const o of openings) {
    if (o.openSession && ctx.requestsLeft > 0) await deleteSession(ctx, o.answered ?? '', o.openSession);
  }

  // A server between generations answers a sessions `initialize` with 2024-11-05: it speaks that
  // revision over Streamable HTTP, which stands for the 2024-11-05 row when HTTP+SSE found nothing.
  const between = openings.find(
    (o) =>
      !ctx.command &&
      o.ok &&
      o.generation === 'sessions' &&
      isRevision(o.answered) &&
      revisionInfo(o.answered).generation === 'HTTP+SSE transport',
  );
  const revisions = openings.map((o) =>
    describe(spokenElsewhere(o, between) ?? o, ctx.secrets, ctx.command !== undefined),
  );
  const newest = [...revisions].reverse().find((r) => r.supported);
  const limited = ctx.exchanges.find((e) => e.status === 429);
  const outcome: DetectionOutcome = limited ? 'RATE_LIMITED' : newest ? 'DETECTED' : 'NONE';
  const cause = outcome === 'NONE' ? sharedCause(revisions.map((r) => r.evidence)) : null;
  // Over stdio: every process has ended before the detection reports how they behaved.
  await ctx.settle();
  const stdio = stdioReport(ctx);
  // Redacted, then cut to the bounds (bounds.ts), then made storable.
  return storable(
    boundDetection({
      ...(stdio ? { stdio } : {}),
      outcome,
      cause,
      retryAfterHeader: limited?.headers.retryAfter ? redact(limited.headers.retryAfter, ctx.secrets) : null,
      newestSupported: newest?.revision ?? null,
      serverInfo: newest?.serverInfo ?? null,
      requests: ctx.requests,
      millis: ctx.millis(),
      revisions,
    }),
  );
}

/**
 * The opening that stands for `o`'s row instead: one of another generation that the server answered
 * with `o`'s revision (2024-11-05 over Streamable HTTP), when `o`'s own opening failed.
 */
function spokenElsewhere(o: Opening, between: Opening | undefined): Opening | undefined {
  if (o.ok || !between || between.answered !== o.proposed || between.generation === o.generation) return undefined;
  return { ...between, proposed: o.proposed };
}

function describe(o: Opening, secrets: readonly string[], overStdio: boolean): RevisionDetection {
  const info = revisionInfo(o.proposed);
  const elsewhere = o.generation !== info.generation;
  // Only 2024-11-05 is ever spoken elsewhere (spokenElsewhere); its note names the transport, within BOUNDS.label.
  const note = elsewhere ? `deprecated; spoken over ${STREAMABLE_HTTP}` : info.note;
  const base = { revision: o.proposed, generation: info.generation, note };
  // Over stdio every revision opens in a process by its era's first message: no HTTP generation applies.
  const head = `${info.revision} (${overStdio ? `${info.era}, over stdio` : info.generation})`;
  if (o.ok && o.answered === o.proposed) {
    const over = elsewhere ? ` over ${STREAMABLE_HTTP}; the server has no HTTP+SSE endpoint` : '';
    const entry: RevisionDetection = {
      ...base,
      supported: true,
      sentence: `${head}: supported${over}. ${noteSentence(info.note)}`,
    };
    // The server describes itself as it likes, the credentials it was sent included.
    if (o.serverInfo) entry.serverInfo = redactStrings(o.serverInfo, secrets);
    return entry;
  }
  const message = o.ok
    ? `The server answered with protocol ${excerpt(String(o.answered), secrets, 40)} instead.`
    : (o.failure?.message ?? 'The opening failed.');
  // A row's evidence carries no stderr: the detection's stdio report has the last words once.
  const { stderr: _once, ...evidence } = evidenceOf(o.decisive, message, secrets);
  const sentence = redact(`${head}: not supported (${why(o, evidence, secrets)}).`, secrets);
  return { ...base, supported: false, sentence, evidence };
}

function noteSentence(note: string): string {
  if (note === 'current') return 'This is the current protocol revision.';
  if (note.startsWith('deprecated')) return 'This revision is deprecated and eligible for removal.';
  return 'This is not the current revision.';
}

/** The parenthesis of a "not supported" sentence: the reply's status and type, or what happened instead. */
function why(o: Opening, e: Evidence, secrets: readonly string[]): string {
  if (o.ok) return `the server answered with ${excerpt(String(o.answered), secrets, 40)}`;
  if (e.reachabilityFailure === 'timeout') return `no answer within ${e.millis ?? 0} ms`;
  if (e.reachabilityFailure) return e.reachabilityFailure.replace(/_/g, ' ');
  if (
    e.status !== null &&
    o.generation === 'HTTP+SSE transport' &&
    e.status >= 200 &&
    e.status < 300 &&
    e.contentType?.startsWith('text/event-stream')
  )
    return e.message.replace(/^GET: /, '');
  if (e.status !== null) return `HTTP ${e.status}${e.contentType ? `, ${e.contentType.split(';')[0]}` : ''}`;
  return e.message;
}
