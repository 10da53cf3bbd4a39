// A server's tests: list them, add one (a pinned one runs once first), read one with its states, retire one.

import { revisionChoice } from '@mcp-fleet/config';
import { isRevision, type Revision } from '@mcp-fleet/probe';
import { createTest, getTest, getTestStates, listActiveTests, retireTest } from '@mcp-fleet/store';
import { z } from 'zod';
import { HttpError, parseBody, type Router } from '../http';
import type { ApiContext } from './context';
import { liveServer, serverDetail, serverOr404, uuid } from './lookups';
import type { OwnProbes } from './own-probes';

const CreateTest = z.strictObject({ revision: revisionChoice });

export function testRoutes(router: Router, ctx: ApiContext, probes: OwnProbes): void {
  router
    .on('GET', '/api/servers/:id/tests', async (req) => {
      const server = await serverOr404(ctx.db, req.params.id!);
      return { json: { tests: (await serverDetail(ctx.db, server.id)).tests } };
    })
    .on('POST', '/api/servers/:id/tests', async (req) => {
      const server = await liveServer(ctx.db, req.params.id!);
      const body = parseBody(CreateTest, req.body);
      const existing = await listActiveTests(ctx.db, server.id);
      const key = (mode: string, pin: string | null) => (mode === 'newest' ? 'newest' : pin);
      if (existing.some((t) => key(t.mode, t.pinnedRevision) === body.revision))
        throw new HttpError(409, `the server already has a ${body.revision} test`);
      if (isRevision(body.revision))
        await probes.runPinFirst(server.target, server.headers, server.timeoutMs, body.revision, server.id);
      const test = await createTest(
        ctx.db,
        body.revision === 'newest'
          ? { serverId: server.id, mode: 'newest' }
          : { serverId: server.id, mode: 'pinned', pinnedRevision: body.revision as Revision },
      );
      ctx.changed();
      return { status: 201, json: { test: { id: test.id, mode: test.mode, pinnedRevision: test.pinnedRevision } } };
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
            retiredAt: test.retiredAt,
            states: await getTestStates(ctx.db, id),
          },
        },
      };
    });
}
