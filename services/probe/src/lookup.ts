// The short lookup a run makes when it meets an era signal (or has no revision yet): newest
// generation first, stop at the first that answers, at most four requests. A 401, 403 or 5xx
// ends it with no server found; so do a 429, a timeout and a connection failure, because
// pressing on would only spend the run's time on a server that is not answering now.
import type { ProbeContext } from './context';
import type { Exchange } from './exchange';
import { isNeverSignalStatus, judge, type Opening, type ServerInfo } from './opening';
import { awaitEndpoint } from './openings/http-sse';
import { deleteSession, openSessions } from './openings/sessions';
import { openStateless } from './openings/stateless';
import { openStdio } from './openings/stdio';
import type { Outcome } from './outcomes';
import { CURRENT_REVISION, type Generation, isRevision, newestOf, type Revision, revisionInfo } from './revisions';

export const LOOKUP_MAX_REQUESTS = 4;
export const NOT_IDENTIFIED = 'the target did not identify itself as an MCP server';

export interface Lookup {
  found: Revision | undefined;
  /**
   * The generation whose opening found it. Its own, but for a server between generations: a
   * sessions `initialize` answered with 2024-11-05 (SDK 1.10.x), so the run opens 2024-11-05 that way.
   */
  generation: Generation | undefined;
  serverInfo: ServerInfo | undefined;
  requests: number;
  /** Why it found nothing: the reply that ended it, or `not_mcp` after trying every generation. */
  failure: { outcome: Outcome; message: string } | undefined;
  decisive: Exchange | undefined;
  /**
   * stdio only: the opening that found the revision, complete (initialize was followed by
   * notifications/initialized). Its process was the conversation, so the run adopts it rather than
   * starting another process to say the same thing again.
   */
  completed?: Opening;
}

export async function lookup(ctx: ProbeContext): Promise<Lookup> {
  const before = ctx.requests;
  const result = await ctx.withBudget(LOOKUP_MAX_REQUESTS, () => search(ctx));
  return { ...result, requests: ctx.requests - before };
}

async function search(ctx: ProbeContext): Promise<Omit<Lookup, 'requests'>> {
  if (ctx.command) return searchStdio(ctx);
  const discover = await openStateless(ctx, CURRENT_REVISION);
  if (discover.ok && isRevision(discover.answered) && revisionInfo(discover.answered).generation === 'stateless')
    return foundIn(discover);
  const stop = ended(discover.decisive);
  if (stop) return stop;

  const init = await openSessions(ctx, newestOf('sessions'), { complete: false });
  if (init.openSession) await deleteSession(ctx, init.answered ?? '', init.openSession);
  // Any revision answered counts, 2024-11-05 included: a server between generations speaks it over
  // Streamable HTTP; the run then opens it over sessions (foundIn keeps the generation).
  if (init.ok && isRevision(init.answered)) return foundIn(init);
  const stop2 = ended(init.decisive);
  if (stop2) return stop2;

  const wait = await awaitEndpoint(ctx);
  if (wait.ok) {
    wait.reader.close();
    return {
      found: newestOf('HTTP+SSE transport'),
      generation: 'HTTP+SSE transport',
      serverInfo: undefined,
      failure: undefined,
      decisive: wait.get,
    };
  }
  return (
    ended(wait.get) ?? {
      found: undefined,
      generation: undefined,
      serverInfo: undefined,
      failure: { outcome: 'not_mcp', message: NOT_IDENTIFIED },
      decisive: wait.get,
    }
  );
}

/**
 * Over stdio (seed 004): `server/discover` in one process, then `initialize` in another when the
 * first said legacy (an error, silence, or an exit: era-signals.ts). The discover probe gets at most
 * half the time left, so a legacy server that never answers it still has time to be found. Each
 * opening is complete, so the run can adopt the one that found the revision (`completed`).
 */
async function searchStdio(ctx: ProbeContext): Promise<Omit<Lookup, 'requests'>> {
  const discover = await openStdio(ctx, CURRENT_REVISION, { complete: true, maxMs: ctx.remainingMs() / 2 });
  if (discover.ok && isRevision(discover.answered) && revisionInfo(discover.answered).era === 'modern')
    return { ...foundIn(discover), ...(discover.answered === CURRENT_REVISION ? { completed: discover } : {}) };
  if (!discover.ok && !discover.eraSignal) return notFound(discover);
  const init = await openStdio(ctx, newestOf('sessions'), { complete: true });
  if (init.ok && isRevision(init.answered)) return { ...foundIn(init), completed: init };
  return notFound(init);
}

function notFound(o: Opening): Omit<Lookup, 'requests'> {
  return {
    found: undefined,
    generation: undefined,
    serverInfo: undefined,
    failure: o.failure ?? { outcome: 'not_mcp', message: NOT_IDENTIFIED },
    decisive: o.decisive,
  };
}

function foundIn(o: Opening): Omit<Lookup, 'requests'> {
  return {
    found: o.answered as Revision,
    generation: o.generation,
    serverInfo: o.serverInfo,
    failure: undefined,
    decisive: o.decisive,
  };
}

/** A reply that ends the lookup early, with the outcome its status calls for. */
function ended(ex: Exchange | undefined): Omit<Lookup, 'requests'> | undefined {
  if (!ex || !(ex.failure || isNeverSignalStatus(ex.status))) return undefined;
  const { outcome, message } = judge(ex, 'lookup');
  // A reply not in HTTP did not identify itself; a 401, a 429, a 5xx or a refused connection says
  // nothing about MCP, so its own words stand (the run leads with its cause: cause.ts).
  const notHttp = ex.failure === 'malformed_http' || ex.failure === 'request_budget';
  return {
    found: undefined,
    generation: undefined,
    serverInfo: undefined,
    failure: { outcome, message: notHttp ? `${NOT_IDENTIFIED} (${message})` : message },
    decisive: ex,
  };
}
