import type { ProbeContext } from '../context';
import type { Opening } from '../opening';
import { type Generation, type Revision, revisionInfo } from '../revisions';
import { openHttpSse } from './http-sse';
import { openSessions } from './sessions';
import { openStateless } from './stateless';
import { openStdio } from './stdio';

/**
 * Open a conversation at `revision` the way its generation opens, or over `over` when a lookup
 * found the server speaking it there: a server between generations (SDK 1.10.x) speaks 2024-11-05
 * over Streamable HTTP, the sessions opening, and has no HTTP+SSE endpoint (docs/protocol.md#servers-between-generations).
 */
export function openRevision(
  ctx: ProbeContext,
  revision: Revision,
  opts: { complete: boolean; over?: Generation | undefined },
): Promise<Opening> {
  // A stdio target opens every revision in a process of its own, by its era's first message.
  if (ctx.command) return openStdio(ctx, revision, opts);
  switch (opts.over ?? revisionInfo(revision).generation) {
    case 'stateless':
      return openStateless(ctx, revision);
    case 'sessions':
      return openSessions(ctx, revision, opts);
    case 'HTTP+SSE transport':
      return openHttpSse(ctx, revision, opts);
  }
}
