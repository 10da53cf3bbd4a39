// Replaying a recorded session (session.ts) against a server, in the recording's revision or
// another one: open a conversation, send each recorded request again and judge each answer against
// the recorded one (compare.ts). The recorded opening is not sent (the replay opens its own);
// a tools/call of a tool the server does not mark readOnlyHint is refused unless writes are
// allowed, as for a script: replaying `create_order` against production must be a choice.
import { BOUNDS, cut, excerpt } from '../bounds';
import { DEFAULT_TIMEOUT_MS, ProbeContext, type ProbeOptions } from '../context';
import { storable } from '../evidence';
import { judge } from '../opening';
import type { Outcome } from '../outcomes';
import { displayUrl, redactStrings } from '../redact';
import { type Era, eraOf, type Revision } from '../revisions';
import { wholeAnswer } from './answer';
import { compareAnswer, type Recorded, type ReplayVerdict } from './compare';
import { openPinned } from './connect';
import { type ReadOnlyTools, readOnlyTools } from './read-only';
import { OPENING_METHODS, SESSION_MAX_EXCHANGES, type Session } from './session';

export type { ReplayVerdict } from './compare';

export interface ReplayStep {
  /** The exchange's place in the session (0: the first line after the header). */
  index: number;
  method: string;
  name: string | null;
  /** `refused`: not sent, a write the replay was not allowed to make. */
  verdict: ReplayVerdict | 'refused';
  reason: string;
  millis: number;
}

export interface ReplayRun {
  target: string;
  protocol: { recorded: Revision; requested: Revision; negotiated: string | null; era: Era | null };
  /** Connected, and no step broken. */
  pass: boolean;
  /** `success` when the conversation opened; else the opening's outcome. */
  outcome: Outcome;
  message: string;
  steps: ReplayStep[];
  requests: number;
  millis: number;
}

export interface ReplayOptions extends ProbeOptions {
  session: Session;
  /** The revision to replay in; default the recording's. */
  protocol?: Revision;
  allowWrites?: boolean;
}

export const REPLAY_MAX_MS = 120_000;

export async function replaySession(url: string | URL, opts: ReplayOptions): Promise<ReplayRun> {
  const { session } = opts;
  const requested = opts.protocol ?? session.header.revision;
  const exchanges = session.exchanges.slice(0, SESSION_MAX_EXCHANGES);
  const ctx = new ProbeContext(new URL(url), opts, {
    maxRequests: exchanges.length + 12,
    totalMs: REPLAY_MAX_MS,
    perRequestMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const finish = (outcome: Outcome, message: string, steps: ReplayStep[], negotiated: string | null): ReplayRun =>
    storable(
      redactStrings(
        {
          target: displayUrl(ctx.target),
          protocol: { recorded: session.header.revision, requested, negotiated, era: eraOf(negotiated) },
          pass: outcome === 'success' && steps.every((s) => s.verdict !== 'broken'),
          outcome,
          message: excerpt(message, ctx.secrets, BOUNDS.message),
          steps: steps.map((s) => ({ ...s, reason: excerpt(s.reason, ctx.secrets, BOUNDS.check) })),
          requests: ctx.requests,
          millis: ctx.millis(),
        },
        ctx.secrets,
      ),
    );

  const opened = await openPinned(ctx, requested);
  if (!opened.ok) return finish(opened.outcome, opened.message, [], null);
  const conn = opened.connection;
  const steps: ReplayStep[] = [];
  try {
    let tools: ReadOnlyTools | undefined;
    if (!opts.allowWrites && exchanges.some((x) => x.method === 'tools/call')) tools = await readOnlyTools(conn);
    for (const [index, x] of exchanges.entries()) {
      if (OPENING_METHODS.includes(x.method) || x.method.startsWith('notifications/')) continue;
      const rawName = x.method === 'resources/read' ? x.params?.uri : x.params?.name;
      const name = typeof rawName === 'string' ? cut(rawName, BOUNDS.name) : null;
      const base = { index, method: x.method, name };
      if (x.method === 'tools/call' && !opts.allowWrites && !(name !== null && tools?.ok && tools.readOnly.has(name))) {
        steps.push({
          ...base,
          verdict: 'refused',
          reason: `not sent: tool ${name ?? '(unnamed)'} is not marked readOnlyHint: true (--allow-writes to replay it)`,
          millis: 0,
        });
        continue;
      }
      const ex = await conn.call(x.method, x.params ?? {});
      const recorded: Recorded = x.error ? { error: x.error } : { result: x.result ?? {} };
      const judged = compareAnswer(recorded, wholeAnswer(ex), judge(ex, x.method).message, ex.status);
      steps.push({ ...base, verdict: judged.verdict, reason: judged.reason, millis: ex.millis });
    }
  } finally {
    await conn.close();
  }
  const count = (v: ReplayStep['verdict']) => steps.filter((s) => s.verdict === v).length;
  const message = [
    `${count('same')} same`,
    `${count('newer_equivalent')} newer equivalent`,
    `${count('protocol_error')} protocol error`,
    `${count('broken')} broken`,
    ...(count('refused') ? [`${count('refused')} refused`] : []),
  ].join(', ');
  return finish('success', message, steps, conn.revision);
}
