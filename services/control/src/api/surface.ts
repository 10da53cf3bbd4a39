// What servers offer and how it changed: a server's surface now (per region and era) with its
// latest changes, and the surface changes across the fleet, newest first, a page at a time.
// Read routes, tokens as the other reads; every query parameter is checked, or a 400 names it.
import { regionName } from '@mcp-fleet/config';
import { SURFACE_KINDS, SURFACE_SEVERITIES, type SurfaceKind, type SurfaceSeverity } from '@mcp-fleet/probe';
import { listSurfaceChanges, SurfaceCursorError, storableTime, surfaceNow } from '@mcp-fleet/store';
import { HttpError, type Router } from '../http';
import type { ApiContext } from './context';
import { serverOr404, uuid } from './lookups';
import { intParam, sinceParam } from './params';

/** How many of a server's latest changes its surface page shows. */
const LATEST_CHANGES = 20;

export function surfaceRoutes(router: Router, ctx: ApiContext): void {
  router
    .on('GET', '/api/servers/:id/surface', async (req) => {
      const server = await serverOr404(ctx.db, req.params.id!);
      const [now, latest] = await Promise.all([
        surfaceNow(ctx.db, server.id),
        listSurfaceChanges(ctx.db, { serverId: server.id, limit: LATEST_CHANGES }),
      ]);
      return { json: { serverId: server.id, surfaces: now, changes: latest.changes, next: latest.next } };
    })
    .on('GET', '/api/surface-changes', async (req) => {
      const q = req.query;
      const serverId = q.get('server') ?? undefined;
      if (serverId !== undefined && !uuid.safeParse(serverId).success) throw new HttpError(400, 'server: a server id');
      const region = q.get('region') ?? undefined;
      if (region !== undefined && !regionName.safeParse(region).success)
        throw new HttpError(400, 'region: a region name');
      const severity = q.get('severity') ?? undefined;
      if (severity !== undefined && !(SURFACE_SEVERITIES as readonly string[]).includes(severity))
        throw new HttpError(400, `severity: one of ${SURFACE_SEVERITIES.join(', ')}`);
      const kind = q.get('kind') ?? undefined;
      if (kind !== undefined && !(SURFACE_KINDS as readonly string[]).includes(kind))
        throw new HttpError(400, `kind: one of ${SURFACE_KINDS.join(', ')}`);
      const untilRaw = q.get('until');
      const until = untilRaw === null ? undefined : new Date(untilRaw);
      if (until && !storableTime(until)) throw new HttpError(400, 'until: an ISO time');
      const cursor = q.get('cursor') ?? undefined;
      if (cursor !== undefined && cursor.length > 200) throw new HttpError(400, 'cursor: not a cursor this API gave');
      try {
        const page = await listSurfaceChanges(ctx.db, {
          serverId,
          region,
          severity: severity as SurfaceSeverity | undefined,
          kind: kind as SurfaceKind | undefined,
          since: sinceParam(q),
          until,
          limit: intParam(q, 'limit', 50, 1, 500),
          cursor,
        });
        return { json: page };
      } catch (err) {
        if (err instanceof SurfaceCursorError) throw new HttpError(400, err.message);
        throw err;
      }
    });
}
