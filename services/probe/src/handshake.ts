// A handshake run (docs/protocol.md#newest-supported-and-pinned): speak one revision, the newest
// the server accepts or a pinned one. A newest-supported run adopts what the server answers with
// (a downgrade when older: docs/protocol.md#downgrades-and-era-moves) and looks the revision up
// again only on an era signal (docs/protocol.md#era-signals); a pinned run fails
// `mcp.protocol.revision` when the server does not (or, having spoken it, no longer) speaks its
// revision (docs/protocol.md#pin-failures). A run keeps at most one lookup; its timeout covers it.
import { boundRun, excerpt } from './bounds';
import { causeOf, causeSentence } from './cause';
import { DEFAULT_TIMEOUT_MS, ProbeContext, type ProbeOptions } from './context';
import { eraMove } from './era-move';
import { type Evidence, evidenceOf, storable } from './evidence';
import type { Exchange } from './exchange';
import { type Lookup, lookup, NOT_IDENTIFIED } from './lookup';
import type { Opening, ServerInfo } from './opening';
import { openRevision } from './openings';
import { STREAMABLE_HTTP } from './openings/sessions';
import { OUTCOMES, type Outcome } from './outcomes';
import { redact, redactStrings } from './redact';
import { compareRevisions, type Era, type Generation, isRevision, type Revision, revisionInfo } from './revisions';
import { type Target, targetOf } from './stdio/command';
import { type StdioReport, stdioReport } from './stdio/report';

export type RevisionChoice = 'newest' | Revision;

export interface HandshakeOptions extends ProbeOptions {
  /** `newest` (Newest supported) or a dated revision to pin. */
  revision: RevisionChoice;
  /**
   * The revision the test spoke last time. A newest-supported run reports a move from it; a pinned
   * run that fails says the server *no longer* speaks its pin only when this is the pin (it spoke it
   * before), else that it *does not* speak it (a first run, or a pin never passed).
   */
  current?: Revision | undefined;
  /**
   * A newest-supported run looks the revision up again (newest first) before it speaks, with no era
   * signal: a server that added a newer revision while keeping the current one is noticed (its
   * answer to the current revision would never say so). The move is still judged from `current`.
   */
  recheck?: boolean | undefined;
}

export interface Assertion {
  /** mcp.script.step: a script test's first failed step (the agent's; a failing scripted check fails its run). */
  name: 'mcp.protocol.revision' | 'mcp.initialize' | 'mcp.script.step';
  expected: string;
  actual: string;
  message: string;
}

export interface HandshakeRun {
  mode: 'newest' | 'pinned';
  /** The revision the run offered first. */
  requested: Revision | null;
  /** The revision the server answered with, when it answered. */
  negotiated: string | null;
  generation: Generation | null;
  era: Era | null;
  outcome: Outcome;
  message: string;
  /** The revision a newest-supported test spoke before, when this run moved it. */
  previousRevision: Revision | null;
  requests: number;
  millis: number;
  serverInfo: ServerInfo | null;
  assertion: Assertion | null;
  lookup: { performed: boolean; found: Revision | null; requests: number };
  evidence: Evidence | null;
  /** stdio targets only: processes started, findings (stdout_only_protocol…) and the end of stderr. */
  stdio?: StdioReport;
}

/** Budget: an opening (≤ 3) + a lookup (≤ 4) + the repeat after it (≤ 3). */
export const HANDSHAKE_MAX_REQUESTS = 10;

export async function handshake(target: Target, opts: HandshakeOptions): Promise<HandshakeRun> {
  const ctx = new ProbeContext(targetOf(target), opts, {
    maxRequests: HANDSHAKE_MAX_REQUESTS,
    totalMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const run = await speak(ctx, opts);
  if (!ctx.command) return run;
  // Over stdio: every process has ended before the run reports how they behaved.
  await ctx.settle();
  return storable({ ...run, stdio: stdioReport(ctx) });
}

async function speak(ctx: ProbeContext, opts: HandshakeOptions): Promise<HandshakeRun> {
  const pinned = opts.revision === 'newest' ? undefined : opts.revision;
  const current = pinned ? undefined : opts.current;
  const run = new RunBuilder(
    ctx,
    pinned ? 'pinned' : 'newest',
    current,
    pinned !== undefined && opts.current === pinned,
  );

  let looked: Lookup | undefined;
  let requested: Revision | undefined = pinned ?? (opts.recheck ? undefined : current);
  if (!requested) {
    // A newest-supported test with no current revision looks it up before its first run (a recheck too).
    looked = await lookup(ctx);
    if (!looked.found) return run.failLookup(looked, undefined);
    requested = looked.found;
  }
  run.requested = requested;

  // A revision the lookup found is opened the way it was found (`over`): its own generation's
  // opening, but the sessions opening for 2024-11-05 on a server between generations.
  let opening = looked?.completed ?? (await openRevision(ctx, requested, { complete: true, over: looked?.generation }));
  if (!opening.ok && opening.eraSignal && !looked) {
    looked = await lookup(ctx);
    run.lookup = looked;
    if (pinned) {
      // The pin's own opening failed, but the lookup heard the server speak the pin over another
      // generation's opening (2024-11-05 over Streamable HTTP): speak it there and judge as usual.
      const elsewhere =
        looked.found === pinned && looked.generation !== undefined && looked.generation !== opening.generation;
      if (!elsewhere)
        return looked.found ? run.pinFailed(pinned, looked.found, opening) : run.failLookup(looked, pinned);
      opening = await openRevision(ctx, pinned, { complete: true, over: looked.generation });
    } else {
      if (!looked.found) return run.failLookup(looked, undefined);
      opening =
        looked.completed ?? (await openRevision(ctx, looked.found, { complete: true, over: looked.generation }));
    }
  }
  run.lookup ??= looked;
  if (!opening.ok) {
    // A pinned stateless revision turned away with -32022 names what the server offers instead.
    if (pinned && opening.failure?.outcome === 'unsupported_version')
      return run.pinFailed(pinned, opening.answered ?? 'unsupported', opening);
    return run.fail(opening.failure ?? { outcome: 'protocol_error', message: 'the opening failed' }, opening.decisive);
  }

  const negotiated = opening.answered ?? 'unsupported';
  if (pinned && negotiated !== pinned) return run.pinFailed(pinned, negotiated, opening);
  if (!isRevision(negotiated)) {
    return run.fail(
      {
        outcome: 'unsupported_version',
        message: `the server answered with protocol ${excerpt(negotiated, ctx.secrets, 40)}, which mcp-fleet does not know`,
      },
      opening.decisive,
      excerpt(negotiated, ctx.secrets, 40),
    );
  }
  return run.succeed(negotiated, opening);
}

/** Assembles the run's answer; one place decides previousRevision, era and the messages. */
class RunBuilder {
  requested: Revision | undefined;
  lookup: Lookup | undefined;

  constructor(
    private readonly ctx: ProbeContext,
    private readonly mode: 'newest' | 'pinned',
    private readonly current: Revision | undefined,
    /** A pinned test that spoke its pin before: its failure is a loss, not a first refusal. */
    private readonly spokePin = false,
  ) {}

  succeed(negotiated: Revision, opening: Opening): HandshakeRun {
    const older = this.requested !== undefined && compareRevisions(negotiated, this.requested) < 0;
    const outcome: Outcome = older ? 'downgrade' : 'success';
    const move = eraMove(this.current, negotiated);
    const message = move ? `now ${move.to}, was ${move.from}` : OUTCOMES[outcome];
    const answered = older ? `${message}; the server answered ${negotiated} to an offer of ${this.requested}` : message;
    // A server between generations: the run reports the opening it spoke (sessions), not the revision's table row.
    const between =
      !this.ctx.command &&
      opening.generation !== revisionInfo(negotiated).generation &&
      opening.generation === 'sessions';
    return this.#build({
      outcome,
      message: between ? `${answered.replace(/\.$/, '')}; ${negotiated} spoken over ${STREAMABLE_HTTP}` : answered,
      generation: between ? opening.generation : undefined,
      negotiated,
      serverInfo: opening.serverInfo ?? null,
      previousRevision: move?.from ?? null,
    });
  }

  pinFailed(pinned: Revision, actual: string, opening: Opening): HandshakeRun {
    const message = this.spokePin
      ? `Server no longer speaks protocol ${pinned}`
      : `Server does not speak protocol ${pinned}`;
    return this.#build({
      outcome: 'unsupported_version',
      message,
      negotiated: opening.ok ? (opening.answered ?? null) : null,
      serverInfo: opening.ok ? (opening.serverInfo ?? null) : null,
      assertion: { name: 'mcp.protocol.revision', expected: pinned, actual, message },
      evidence: evidenceOf(
        opening.decisive,
        opening.failure?.message ?? `the server answered with protocol ${actual}`,
        this.ctx.secrets,
      ),
    });
  }

  failLookup(looked: Lookup, pinned: Revision | undefined): HandshakeRun {
    this.lookup = looked;
    const failure = looked.failure ?? { outcome: 'not_mcp' as const, message: NOT_IDENTIFIED };
    const evidence = evidenceOf(looked.decisive, failure.message, this.ctx.secrets);
    const message = leadingWithCause(failure.message, evidence);
    return this.#build({
      outcome: failure.outcome,
      message,
      assertion: {
        name: 'mcp.initialize',
        expected: pinned ?? 'an MCP server',
        actual: 'unsupported',
        message: failure.outcome === 'not_mcp' ? NOT_IDENTIFIED : message,
      },
      evidence,
    });
  }

  /**
   * Every other failed run: the opening did not complete, so the run fails `mcp.initialize` (the
   * assertion is never empty). Expected: the pin, or an MCP server; actual: the outcome that stood instead.
   */
  fail(
    failure: { outcome: Outcome; message: string },
    decisive: Exchange | undefined,
    actual: string = failure.outcome,
  ): HandshakeRun {
    const evidence = evidenceOf(decisive, failure.message, this.ctx.secrets);
    const message = leadingWithCause(failure.message, evidence);
    return this.#build({
      outcome: failure.outcome,
      message,
      assertion: {
        name: 'mcp.initialize',
        expected: this.mode === 'pinned' && this.requested ? this.requested : 'an MCP server',
        actual,
        message,
      },
      evidence,
    });
  }

  #build(parts: Partial<HandshakeRun> & { outcome: Outcome; message: string }): HandshakeRun {
    const negotiated = parts.negotiated ?? null;
    const about = isRevision(negotiated) ? negotiated : this.requested;
    const info = about ? revisionInfo(about) : undefined;
    const secrets = this.ctx.secrets;
    // Redacted whole, then cut to the bounds (bounds.ts), then made storable.
    return storable(
      boundRun({
        mode: this.mode,
        requested: this.requested ?? null,
        // What the server answered is the server's to choose: it may answer with the credential it was sent.
        negotiated: negotiated === null ? null : redact(negotiated, secrets),
        generation: parts.generation ?? info?.generation ?? null,
        era: info?.era ?? null,
        outcome: parts.outcome,
        message: redact(parts.message, this.ctx.secrets),
        previousRevision: parts.previousRevision ?? null,
        requests: this.ctx.requests,
        millis: this.ctx.millis(),
        serverInfo: redactStrings(parts.serverInfo ?? null, secrets),
        assertion: redactStrings(parts.assertion ?? null, secrets),
        lookup: {
          performed: this.lookup !== undefined,
          found: this.lookup?.found ?? null,
          requests: this.lookup?.requests ?? 0,
        },
        evidence: parts.evidence ?? null,
      }),
    );
  }
}

/** A failure whose reply shows a cause (a 401, a refused connection…: cause.ts) is told by that cause. */
function leadingWithCause(message: string, evidence: Evidence): string {
  const cause = causeOf(evidence);
  return cause ? causeSentence(cause, evidence) : message;
}
