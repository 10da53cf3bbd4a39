// Opening the conversation a script or a replay talks in: one revision, pinned (a script runs in
// its test's revision; a replay in the recording's or the one asked for). A server that answers
// with another revision does not speak this one, and the run says so.
import { BOUNDS, excerpt } from '../bounds';
import { causeOf, causeSentence } from '../cause';
import { type Connected, type Connection, connectLegacy, connectModern } from '../conformance/connection';
import type { ProbeContext } from '../context';
import { evidenceOf } from '../evidence';
import type { Outcome } from '../outcomes';
import { type Revision, revisionInfo } from '../revisions';

export type Opened = { ok: true; connection: Connection } | { ok: false; outcome: Outcome; message: string };

export async function openPinned(ctx: ProbeContext, revision: Revision): Promise<Opened> {
  const connected: Connected =
    revisionInfo(revision).generation === 'stateless'
      ? await connectModern(ctx, revision)
      : await connectLegacy(ctx, revision);
  if (connected.ok && connected.opening.answered === revision) return { ok: true, connection: connected.connection };
  if (connected.ok) {
    await connected.connection.close();
    const answered = excerpt(connected.opening.answered ?? 'another version', ctx.secrets, 40);
    return {
      ok: false,
      outcome: 'unsupported_version',
      message: `Server does not speak protocol ${revision} (it answered ${answered})`,
    };
  }
  const failure = connected.opening.failure ?? { outcome: 'protocol_error' as const, message: 'the opening failed' };
  const evidence = evidenceOf(connected.opening.decisive, failure.message, ctx.secrets);
  const cause = causeOf(evidence);
  return {
    ok: false,
    outcome: failure.outcome,
    message: excerpt(cause ? causeSentence(cause, evidence) : failure.message, ctx.secrets, BOUNDS.message),
  };
}
