// A conformance run (docs/protocol.md#conformance-by-era): open a connection at the requested
// protocol (auto: discover first, legacy fallback), run the checks of the era it negotiated in the
// table's order — those that send requests first, then those judged over every answer — and say
// whether a client on that era will keep working: no MUST failed. Bounded like every probe: a
// request budget, a deadline for the run and one per request, every word redacted and cut.
import { BOUNDS, boundServerInfo, cut, excerpt } from '../bounds';
import { causeOf, causeSentence } from '../cause';
import { type CheckDefinition, type CheckScope, checksFor, skipReason } from '../conformance-checks';
import { DEFAULT_TIMEOUT_MS, ProbeContext } from '../context';
import { pipeDiscoverSignal } from '../era-signals';
import { type Evidence, evidenceOf, storable } from '../evidence';
import { isNeverSignalStatus, type Opening } from '../opening';
import { redactStrings } from '../redact';
import { CURRENT_REVISION, eraOf, type Revision, revisionInfo } from '../revisions';
import { type Target, targetOf } from '../stdio/command';
import { aliveAfterBadInput, BOTH_CHECKS } from './both';
import { CheckContext, type CheckRunner } from './check-context';
import { type Connected, connectLegacy, connectModern, connectNewestLegacy } from './connection';
import { LEGACY_CHECKS } from './legacy';
import { MODERN_CHECKS } from './modern';
import { OBSERVED_CHECKS } from './observed';
import {
  type CheckResult,
  CONFORMANCE_MAX_MS,
  CONFORMANCE_MAX_REQUESTS,
  type ConformanceOptions,
  type ConformanceProtocol,
  type ConformanceRun,
  tally,
} from './run';
import { STDIO_CHECKS } from './stdio';
import type { Verdict } from './verdict';

const ACTIVE: Record<string, CheckRunner> = { ...LEGACY_CHECKS, ...MODERN_CHECKS, ...BOTH_CHECKS };

export async function conformance(target: Target, opts: ConformanceOptions = {}): Promise<ConformanceRun> {
  const requested: ConformanceProtocol = opts.protocol ?? 'auto';
  const ctx = new ProbeContext(targetOf(target), opts, {
    maxRequests: CONFORMANCE_MAX_REQUESTS,
    totalMs: CONFORMANCE_MAX_MS,
    perRequestMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const connected = await connect(ctx, requested);
  const base = {
    target: ctx.displayTarget(),
    serverInfo: connected.opening.serverInfo
      ? boundServerInfo(redactStrings(connected.opening.serverInfo, ctx.secrets))
      : null,
  };
  if (!connected.ok) {
    await ctx.settle();
    const failure = connected.opening.failure ?? { outcome: 'protocol_error' as const, message: 'the opening failed' };
    const evidence = evidenceOf(connected.opening.decisive, failure.message, ctx.secrets);
    const cause = causeOf(evidence);
    return storable({
      ...base,
      protocol: { requested, negotiated: null, era: null },
      pass: false,
      outcome: failure.outcome,
      message: excerpt(cause ? causeSentence(cause, evidence) : failure.message, ctx.secrets, BOUNDS.message),
      checks: [],
      requests: ctx.requests,
      millis: ctx.millis(),
      evidence,
    });
  }

  const conn = connected.connection;
  const c = new CheckContext(conn, ctx.secrets);
  const scope: CheckScope = { transport: ctx.command ? 'stdio' : 'http', probe: opts.probe ?? true };
  const definitions = checksFor(conn.era, scope.transport);
  const results = new Map<string, CheckResult>();
  const record = (def: CheckDefinition, verdict: Verdict, startedAt: number, requestsBefore: number) => {
    const result = checkResult(def, verdict, startedAt, ctx.requests - requestsBefore, ctx.secrets);
    results.set(def.id, result);
    opts.onCheck?.(result, startedAt);
  };
  try {
    // Those that send requests first, in the table's order…
    for (const def of definitions) {
      const run = ACTIVE[def.id];
      if (!run) continue;
      const startedAt = Date.now();
      const before = ctx.requests;
      record(def, await judged(def, scope, ctx, () => run(c)), startedAt, before);
    }
  } finally {
    await conn.close();
    // Over stdio: every process has ended (and how is known) before the stdio checks judge them.
    await ctx.settle();
  }
  // …then those judged over every answer the run received.
  for (const def of definitions) {
    if (results.has(def.id)) continue;
    const observe = OBSERVED_CHECKS[def.id] ?? STDIO_CHECKS[def.id];
    const startedAt = Date.now();
    const verdict =
      skipReasonVerdict(def, scope) ??
      (observe
        ? observe(c, ctx.exchanges)
        : def.id === 'server_alive_after_bad_input'
          ? aliveAfterBadInput(c)
          : undefined);
    record(
      def,
      verdict ?? { status: 'skip', message: 'not judged by this version of mcp-fleet' },
      startedAt,
      ctx.requests,
    );
  }

  const checks = definitions.map((d) => results.get(d.id)!);
  const t = tally({ checks });
  return storable({
    ...base,
    protocol: { requested, negotiated: conn.revision, era: eraOf(conn.revision) },
    pass: t.failedMust === 0,
    outcome: 'success',
    message: `${t.passed} passed, ${t.failedMust} MUST failed, ${t.warnings} warnings, ${t.skipped} skipped`,
    checks,
    requests: ctx.requests,
    millis: ctx.millis(),
    evidence: null,
  });
}

/** Open the connection the protocol asks for; a pinned revision the server does not speak is a failure. */
async function connect(ctx: ProbeContext, requested: ConformanceProtocol): Promise<Connected> {
  if (requested === 'legacy') return connectNewestLegacy(ctx);
  if (requested === 'auto') {
    const modern = await connectModern(ctx, CURRENT_REVISION);
    if (modern.ok) return modern;
    // A wall (401, 403, 429, 5xx, no answer) would stand in front of the legacy opening too. Over
    // stdio silence and an exit say legacy instead (era-signals.ts), unless the process never ran.
    const ex = modern.opening.decisive;
    const wall = ctx.command
      ? ex !== undefined && ex.failure !== null && !pipeDiscoverSignal(ex)
      : ex !== undefined && (ex.failure !== null || isNeverSignalStatus(ex.status));
    if (wall) return modern;
    return connectNewestLegacy(ctx);
  }
  const opened =
    revisionInfo(requested).generation === 'stateless'
      ? await connectModern(ctx, requested)
      : await connectLegacy(ctx, requested);
  if (!opened.ok || opened.opening.answered === requested) return opened;
  await opened.connection.close();
  return { ok: false, opening: notSpoken(opened.opening, requested) };
}

function notSpoken(opening: Opening, requested: Revision): Opening {
  const answered = excerpt(opening.answered ?? 'another version', [], 40);
  return {
    ...opening,
    ok: false,
    failure: {
      outcome: 'unsupported_version',
      message: `Server does not speak protocol ${requested} (it answered ${answered})`,
    },
  };
}

function skipReasonVerdict(def: CheckDefinition, scope: CheckScope): Verdict | undefined {
  const reason = skipReason(def, scope);
  return reason ? { status: 'skip', message: reason } : undefined;
}

/** Skip what cannot run here or any more; a check that throws is our fault, never the server's. */
async function judged(
  def: CheckDefinition,
  scope: CheckScope,
  ctx: ProbeContext,
  run: () => Promise<Verdict>,
): Promise<Verdict> {
  const skipped = skipReasonVerdict(def, scope);
  if (skipped) return skipped;
  if (ctx.requestsLeft <= 0) return { status: 'skip', message: "not run: the run's request budget is spent" };
  if (ctx.remainingMs() <= 0) return { status: 'skip', message: "not run: the run's deadline has passed" };
  try {
    return await run();
  } catch (err) {
    return {
      status: 'skip',
      message: `not judged: the check failed inside mcp-fleet (${(err as Error)?.message ?? err})`,
    };
  }
}

function checkResult(
  def: CheckDefinition,
  verdict: Verdict,
  startedAt: number,
  requests: number,
  secrets: readonly string[],
): CheckResult {
  const message = excerpt(verdict.message, secrets, BOUNDS.check);
  const result: CheckResult = {
    id: def.id as CheckResult['id'],
    level: def.level,
    status: verdict.status,
    message,
    millis: Date.now() - startedAt,
    requests,
  };
  if (verdict.status === 'fail' && verdict.decisive)
    result.evidence = checkEvidence(evidenceOf(verdict.decisive, message, secrets));
  return result;
}

/** One line of evidence under a check: no stderr (the run's own evidence keeps the process's last words). */
function checkEvidence({ stderr: _run, ...e }: Evidence): Evidence {
  return { ...e, message: cut(e.message, BOUNDS.check) };
}
