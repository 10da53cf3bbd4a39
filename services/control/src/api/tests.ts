// A server's tests: list them, add one (a pinned one runs once first; `depth` and `interval`
// optional), read one with its states, change its interval, retire one. A body is hostile input
// (the API's trust boundary): depth and interval are checked here, before anything is written.

import { testKey } from '@mcp-fleet/config';
import { isRevision, type Revision } from '@mcp-fleet/probe';
import { createTest, getTest, getTestStates, listActiveTests, retireTest, updateTest } from '@mcp-fleet/store';
import { HttpError, parseBody, type Router } from '../http';
import { scriptOfWrite, testIntervalOf, testWrite } from '../server-body';
import type { ApiContext } from './context';
import { liveServer, serverDetail, serverOr404, uuid } from './lookups';
import type { OwnProbes } from './own-probes';
import { checkStdioTests, checkTestTiming } from './servers';

const CreateTest = testWrite;
/** Only the interval changes in place: another revision or depth is another test (its own history). */
const PatchTest = testWrite.pick({ interval: true, intervalMs: true });

export function testRoutes(router: Router, ctx: ApiContext, probes: OwnProbes): void {
  router
    .on('GET', '/api/servers/:id/tests', async (req) => {
      const server = await serverOr404(ctx.db, req.params.id!);
      return { json: { tests: (await serverDetail(ctx.db, server.id)).tests } };
    })
    .on('POST', '/api/servers/:id/tests', async (req) => {
      const server = await liveServer(ctx.db, req.params.id!);
      const body = parseBody(CreateTest, req.body);
      const intervalMs = testIntervalOf(body) ?? null;
      checkTestTiming({ intervalMs }, server.timeoutMs);
      const given = scriptOfWrite(body);
      if ('problem' in given) throw new HttpError(400, `steps: ${given.problem}`);
      const existing = await listActiveTests(ctx.db, server.id);
      const wanted = testKey({
        mode: body.revision === 'newest' ? 'newest' : 'pinned',
        pinnedRevision: body.revision,
        depth: body.depth,
        script: given.script,
      });
      if (existing.some((t) => testKey(t) === wanted))
        throw new HttpError(
          409,
          `the server already has a ${body.revision} ${body.depth} test${given.script ? ' with these steps' : ''}`,
        );
      if (server.command) checkStdioTests([body]);
      // Control never starts a stdio server (agents do, under their own allowlists): no first run here.
      if (isRevision(body.revision) && !server.command)
        await probes.runPinFirst(server.target, server.headers, server.timeoutMs, body.revision, server.id);
      const test = await createTest(ctx.db, {
        ...(body.revision === 'newest'
          ? { serverId: server.id, mode: 'newest' }
          : { serverId: server.id, mode: 'pinned', pinnedRevision: body.revision as Revision }),
        depth: body.depth,
        intervalMs,
        script: given.script,
      });
      ctx.changed();
      return { status: 201, json: { test: shown(test) } };
    })
    .on('PATCH', '/api/tests/:id', async (req) => {
      const id = req.params.id!;
      const test = uuid.safeParse(id).success ? await getTest(ctx.db, id) : null;
      if (!test || test.retiredAt) throw new HttpError(404, `no test ${id}`);
      const server = await liveServer(ctx.db, test.serverId);
      const body = parseBody(PatchTest, req.body);
      const intervalMs = testIntervalOf(body);
      if (intervalMs !== undefined) checkTestTiming({ intervalMs }, server.timeoutMs);
      const updated = await updateTest(ctx.db, id, { intervalMs });
      if (!updated) throw new HttpError(404, `no test ${id}`);
      ctx.changed();
      return { json: { test: shown(updated) } };
    })
    .on('DELETE', '/api/tests/:id', async (req) => {
      const id = req.params.id!;
      const test = uuid.safeParse(id).success ? await getTest(ctx.db, id) : null;
      if (!test || test.retiredAt) throw new HttpError(404, `no test ${id}`);
      await liveServer(ctx.db, test.serverId);
      await retireTest(ctx.db, id);
      ctx.changed();
      return { status: 204 };
    })
    .on('GET', '/api/tests/:id', async (req) => {
      const id = req.params.id!;
      const test = uuid.safeParse(id).success ? await getTest(ctx.db, id) : null;
      if (!test) throw new HttpError(404, `no test ${id}`);
      return {
        json: {
          test: {
            id: test.id,
            serverId: test.serverId,
            mode: test.mode,
            pinnedRevision: test.pinnedRevision,
            depth: test.depth,
            intervalMs: test.intervalMs,
            retiredAt: test.retiredAt,
            states: await getTestStates(ctx.db, id),
          },
        },
      };
    });
}

/** A test as a write answers it. */
function shown(t: {
  id: string;
  mode: string;
  pinnedRevision: string | null;
  depth: string;
  intervalMs: number | null;
  script: unknown;
}) {
  return {
    id: t.id,
    mode: t.mode,
    pinnedRevision: t.pinnedRevision,
    depth: t.depth,
    intervalMs: t.intervalMs,
    script: t.script ?? null,
  };
}
