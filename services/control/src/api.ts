// The management API (JSON) on MCP_FLEET_API_PORT, beside control's /metrics. Validation errors
// are 400 with a message, unknown ids 404, changes to a retired server 409 (it stays readable);
// a pinned test is run once before it is saved. Each resource's routes are in api/; here they are
// put together with the process's own: /metrics and the health checks.
import { checkRoutes } from './api/check';
import { conformanceRoutes } from './api/conformance';
import type { ApiContext } from './api/context';
import { credentialRoutes } from './api/credentials';
import { detectRoutes } from './api/detect';
import { fleetRoutes } from './api/fleet';
import { OwnProbes } from './api/own-probes';
import { regionRoutes } from './api/regions';
import { runRoutes } from './api/runs';
import { serverRoutes } from './api/servers';
import { surfaceRoutes } from './api/surface';
import { testRoutes } from './api/tests';
import { HttpError, Router } from './http';

export function createApi(ctx: ApiContext): Router {
  const router = new Router();
  const probes = new OwnProbes(ctx);
  serverRoutes(router, ctx, probes);
  testRoutes(router, ctx, probes);
  runRoutes(router, ctx);
  fleetRoutes(router, ctx);
  conformanceRoutes(router, ctx);
  surfaceRoutes(router, ctx);
  regionRoutes(router, ctx);
  detectRoutes(router, ctx, probes);
  checkRoutes(router, ctx, probes);
  credentialRoutes(router, ctx);
  router
    .on('GET', '/metrics', async () => {
      const m = await ctx.metricsText();
      return { text: m.text, contentType: m.contentType };
    })
    // Both say whether this replica schedules: a follower is as healthy and as ready (it ingests and serves).
    .on('GET', '/healthz', async () => ({ json: { ok: true, scheduling: ctx.scheduling() } }))
    .on('GET', '/readyz', async () => {
      if (!ctx.ready()) throw new HttpError(503, 'not ready');
      return { json: { ok: true, scheduling: ctx.scheduling() } };
    });
  return router;
}
