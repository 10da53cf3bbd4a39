// Openings over stdio: every revision opens in a process of its own (stdio/conversation.ts), with
// the message its era's client sends first: `server/discover` (2026-07-28) or `initialize` proposing
// the revision (every legacy revision: stdio has no HTTP+SSE or session generation), then
// `notifications/initialized` for a complete opening. The answer is judged by the same functions
// as over HTTP (discoverOpening, initializeAnswer); only the era signals are stdio's own
// (era-signals.ts). The process is shut down before the opening returns.
import { CLIENT_INFO } from '../client-info';
import type { ProbeContext } from '../context';
import { pipeDiscoverSignal } from '../era-signals';
import { emptyExchange } from '../exchange';
import { failed, judge, type Opening, opened } from '../opening';
import { type Revision, revisionInfo } from '../revisions';
import { PipeConversation } from '../stdio/conversation';
import { initializeAnswer } from './sessions';
import { discoverOpening, discoverParams } from './stateless';

export interface StdioOpeningOptions {
  complete: boolean;
  /** Wait at most this long for the first answer: a lookup's discover probe must leave time for initialize. */
  maxMs?: number | undefined;
}

export async function openStdio(ctx: ProbeContext, revision: Revision, opts: StdioOpeningOptions): Promise<Opening> {
  // No process is started for a request the probe's bounds would refuse anyway.
  const refused =
    ctx.remainingMs() <= 0
      ? 'the time budget is spent'
      : ctx.requestsLeft <= 0
        ? 'the request budget is spent'
        : undefined;
  if (refused) {
    const failure = ctx.remainingMs() <= 0 ? 'timeout' : 'request_budget';
    const ex = emptyExchange({ method: 'STDIN', url: ctx.displayTarget() }, failure, refused);
    return failed(revisionInfo(revision).generation, revision, ex, judge(ex, 'stdio'), false);
  }
  const pipe = await PipeConversation.start(ctx);
  try {
    return await openOn(pipe, revision, opts);
  } finally {
    // The probe goes on while this process shuts down (ctx.settle() awaits it before the report).
    ctx.inBackground(pipe.close());
  }
}

/** The opening exchange on a conversation that stays open (a conformance connection keeps it). */
export async function openOn(pipe: PipeConversation, revision: Revision, opts: StdioOpeningOptions): Promise<Opening> {
  const generation = revisionInfo(revision).generation;
  if (revisionInfo(revision).era === 'modern') {
    const id = pipe.nextId();
    const ex = await pipe.request('server/discover', discoverParams(revision), { id, maxMs: opts.maxMs });
    return discoverOpening(ex, id, revision, pipeDiscoverSignal(ex));
  }
  const id = pipe.nextId();
  const params = { protocolVersion: revision, capabilities: {}, clientInfo: CLIENT_INFO };
  const ex = await pipe.request('initialize', params, { id, maxMs: opts.maxMs });
  const answer = initializeAnswer(ex, id);
  // A legacy server over stdio has no other opening to move to: a failed initialize is no era signal.
  if ('failure' in answer) return failed(generation, revision, ex, answer.failure, false);
  if (opts.complete) await pipe.notify('notifications/initialized');
  return opened(generation, revision, ex, answer.protocolVersion, answer.serverInfo);
}
