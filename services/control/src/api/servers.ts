// /api/servers: list, add (its pinned tests run once first), read, change and retire a server.

import { DEFAULT_INTERVAL_MS, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_INTERVAL_MS, testKey } from '@mcp-fleet/config';
import { isRevision, type Revision } from '@mcp-fleet/probe';
import {
  createServer,
  createTest,
  DuplicateNameError,
  listActiveTests,
  retireServer,
  serverConformance,
  serversOverview,
  updateServer,
} from '@mcp-fleet/store';
import { HttpError, parseBody, type Router } from '../http';
import { CreateServer, headersOf, judgementOf, PatchServer, timingOf } from '../server-body';
import type { ApiContext } from './context';
import { liveServer, serverDetail, serverOr404 } from './lookups';
import { checkTarget, type OwnProbes } from './own-probes';
import { noKey } from './params';

export function serverRoutes(router: Router, ctx: ApiContext, probes: OwnProbes): void {
  const checkRegions = (regions: string[] | null | undefined) => {
    for (const r of regions ?? [])
      if (!ctx.regions().includes(r))
        throw new HttpError(400, `regions: "${r}" is not one of the fleet's regions (${ctx.regions().join(', ')})`);
  };

  router
    .on('GET', '/api/servers', async () => ({ json: { servers: await serversOverview(ctx.db) } }))
    .on('POST', '/api/servers', async (req) => {
      const body = parseBody(CreateServer, req.body);
      const headers = headersOf(body.headers);
      checkRegions(body.regions);
      checkTarget(body.url, ctx.policy());
      const given = timingOf(body);
      const intervalMs = given.intervalMs ?? DEFAULT_INTERVAL_MS;
      const timeoutMs = given.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      checkTiming(intervalMs, timeoutMs);
      // Over the defaults; none given is stored as none (null: the defaults, whatever they become).
      const judgement = judgementOf(body);
      const keys = body.tests.map((t) =>
        testKey({ mode: t.revision === 'newest' ? 'newest' : 'pinned', pinnedRevision: t.revision, ...t }),
      );
      if (new Set(keys).size !== keys.length)
        throw new HttpError(400, 'tests: a revision is listed twice at the same depth');
      for (const t of body.tests) checkTestTiming(t, timeoutMs);
      for (const t of body.tests)
        if (isRevision(t.revision)) await probes.runPinFirst(body.url, headers, timeoutMs, t.revision);
      try {
        const server = await ctx.db.transaction(async (tx) => {
          const s = await createServer(tx, {
            name: body.name,
            url: body.url,
            headers,
            regions: body.regions,
            intervalMs,
            timeoutMs,
            detectionIntervalMs: given.detectionIntervalMs ?? null,
            source: 'api',
            ...(judgement ? { judgement } : {}),
          });
          for (const t of body.tests)
            await createTest(tx, {
              ...(t.revision === 'newest'
                ? { serverId: s.id, mode: 'newest' }
                : { serverId: s.id, mode: 'pinned', pinnedRevision: t.revision as Revision }),
              depth: t.depth,
              intervalMs: t.intervalMs,
              script: t.script,
            });
          return s;
        });
        ctx.changed({ event: 'server_created', server: server.name });
        return { status: 201, json: { server: await serverDetail(ctx.db, server.id) } };
      } catch (err) {
        if (err instanceof DuplicateNameError) throw new HttpError(409, err.message);
        throw noKey(err);
      }
    })
    .on('GET', '/api/servers/:id', async (req) => ({
      json: { server: await serverDetail(ctx.db, (await serverOr404(ctx.db, req.params.id!)).id) },
    }))
    // Its conformance tests: each check's state per region (since when), and each region's last run's checks.
    .on('GET', '/api/servers/:id/conformance', async (req) => {
      const server = await serverOr404(ctx.db, req.params.id!);
      return { json: { serverId: server.id, tests: await serverConformance(ctx.db, server.id) } };
    })
    .on('PATCH', '/api/servers/:id', async (req) => {
      const server = await liveServer(ctx.db, req.params.id!);
      const body = parseBody(PatchServer, req.body);
      const headers = body.headers && headersOf(body.headers, { ...server, url: body.url });
      checkRegions(body.regions);
      if (body.url) checkTarget(body.url, ctx.policy());
      if (body.tests) {
        // What GET showed comes back unchanged; a different set is for the tests' own routes.
        const now = (await listActiveTests(ctx.db, server.id)).map((t) => `${testKey(t)}/${t.testIntervalMs}`).sort();
        const given = body.tests
          .map(
            (t) =>
              `${testKey({ mode: t.revision === 'newest' ? 'newest' : 'pinned', pinnedRevision: t.revision, ...t })}/${t.intervalMs}`,
          )
          .sort();
        if (JSON.stringify(now) !== JSON.stringify(given))
          throw new HttpError(
            400,
            'tests: add one with POST /api/servers/:id/tests, change its interval with PATCH /api/tests/:id and retire one with DELETE /api/tests/:id (a pinned test runs once before it is saved)',
          );
      }
      const given = timingOf(body);
      const intervalMs = given.intervalMs ?? server.intervalMs;
      const timeoutMs = given.timeoutMs ?? server.timeoutMs;
      checkTiming(intervalMs, timeoutMs);
      const updated = await updateServer(ctx.db, server.id, {
        name: body.name,
        url: body.url,
        headers,
        regions: body.regions,
        intervalMs,
        timeoutMs,
        detectionIntervalMs: given.detectionIntervalMs,
        // Keys given change, the others keep the stored judgement.
        judgement: judgementOf(body, server.judgement),
      }).catch((err) => {
        if (err instanceof DuplicateNameError) throw new HttpError(409, err.message);
        throw noKey(err);
      });
      if (!updated) throw new HttpError(404, `no server ${server.id}`);
      ctx.changed();
      // A URL moved to another origin took no stored header with it: the answer names what went.
      const { headersDropped } = updated;
      return {
        json: {
          server: await serverDetail(ctx.db, server.id),
          headersDropped,
          ...(headersDropped.length
            ? {
                notice: `the URL moved to another origin, so the stored headers ${headersDropped.join(', ')} were dropped: give them again to send them there`,
              }
            : {}),
        },
      };
    })
    .on('DELETE', '/api/servers/:id', async (req) => {
      const server = await liveServer(ctx.db, req.params.id!);
      await retireServer(ctx.db, server.id);
      ctx.changed({ event: 'server_retired', server: server.name });
      return { status: 204 };
    });
}

/** A test's own interval leaves room for its run: at least its server's timeout. */
export function checkTestTiming(t: { intervalMs: number | null }, serverTimeoutMs: number): void {
  if (t.intervalMs !== null && t.intervalMs < serverTimeoutMs)
    throw new HttpError(400, `tests: interval: at least the server's timeout (${serverTimeoutMs / 1000}s)`);
}

function checkTiming(intervalMs: number, timeoutMs: number): void {
  if (intervalMs < MIN_INTERVAL_MS) throw new HttpError(400, `interval: at least ${MIN_INTERVAL_MS / 1000}s`);
  if (timeoutMs > MAX_TIMEOUT_MS || timeoutMs > intervalMs)
    throw new HttpError(400, `timeout: at most the interval and at most ${MAX_TIMEOUT_MS / 1000}s`);
}
