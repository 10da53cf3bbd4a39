// History, newest first and a page at a time: a server's runs, and the era moves across the fleet.

import { regionName } from '@mcp-fleet/config';
import { ERA_MOVE_VIEWS, encodeCursor, eraMovesList, isEraMoveView, runsOfServer } from '@mcp-fleet/store';
import { HttpError, type Router } from '../http';
import type { ApiContext } from './context';
import { serverOr404, uuid } from './lookups';
import { cursorParam, intParam, sinceParam } from './params';

export function runRoutes(router: Router, ctx: ApiContext): void {
  router
    .on('GET', '/api/servers/:id/runs', async (req) => {
      const server = await serverOr404(ctx.db, req.params.id!);
      const limit = intParam(req.query, 'limit', 50, 1, 500);
      const before = req.query.get('before');
      const cursor = before ? cursorParam(before) : undefined;
      const page = await runsOfServer(ctx.db, server.id, {
        limit,
        before: cursor && { finishedAt: cursor.at, id: cursor.id },
      });
      return { json: { runs: page.runs, next: page.next ? encodeCursor(page.next.finishedAt, page.next.id) : null } };
    })
    .on('GET', '/api/era-moves', async (req) => {
      const serverId = req.query.get('server') ?? undefined;
      if (serverId && !uuid.safeParse(serverId).success) throw new HttpError(400, 'server: a server id');
      const region = req.query.get('region') ?? undefined;
      if (region !== undefined && !regionName.safeParse(region).success)
        throw new HttpError(400, 'region: a region name');
      // A query string is the caller's to write: only a known view, else 400 (no silent default).
      const view = req.query.get('view') ?? 'confirmed';
      if (!isEraMoveView(view)) throw new HttpError(400, `view: one of ${ERA_MOVE_VIEWS.join(', ')}`);
      const before = req.query.get('before');
      const page = await eraMovesList(ctx.db, {
        since: sinceParam(req.query),
        serverId,
        region,
        view,
        limit: intParam(req.query, 'limit', 50, 1, 500),
        before: before ? cursorParam(before) : undefined,
      });
      return { json: { moves: page.moves, next: page.next ? encodeCursor(page.next.at, page.next.id) : null } };
    });
}
