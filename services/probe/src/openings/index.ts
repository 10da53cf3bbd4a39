import type { ProbeContext } from '../context';
import type { Opening } from '../opening';
import { type Revision, revisionInfo } from '../revisions';
import { openHttpSse } from './http-sse';
import { openSessions } from './sessions';
import { openStateless } from './stateless';

/** Open a conversation at `revision` the way its generation opens. */
export function openRevision(ctx: ProbeContext, revision: Revision, opts: { complete: boolean }): Promise<Opening> {
  switch (revisionInfo(revision).generation) {
    case 'stateless':
      return openStateless(ctx, revision);
    case 'sessions':
      return openSessions(ctx, revision, opts);
    case 'HTTP+SSE transport':
      return openHttpSse(ctx, revision, opts);
  }
}
