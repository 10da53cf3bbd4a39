// Multi-region truth (docs/regions.md): a server's judgement, each test's consensus state, its region
// disagreements (open, and the latest ones ended) and its uptime and reachability; and the region
// disagreements across the fleet. Read routes (a read token, as the other reads). Query parameters
// are hostile input: each is checked and a bad one is a 400 naming it, never passed on as a filter.
import { storedJudgement } from '@mcp-fleet/config';
import {
  type Db,
  disagreementText,
  type RegionDisagreement,
  regionDisagreementList,
  serverAvailability,
  testAvailability,
  testConsensus,
} from '@mcp-fleet/store';
import { HttpError, type Router } from '../http';
import type { ApiContext } from './context';
import { serverOr404, uuid } from './lookups';
import { intParam, sinceParam } from './params';

/** How many ended disagreements a server's page shows. */
const HISTORY = 50;

/** A disagreement as the API shows it: with the sentence on-call reads and the test's key when it is live. */
function shown(d: RegionDisagreement, tests: ReadonlyMap<string, string>, now: Date) {
  return {
    id: d.id,
    serverId: d.serverId,
    server: d.server,
    testId: d.testId,
    test: tests.get(d.testId) ?? null,
    revisions: d.revisions,
    startedAt: d.startedAt,
    endedAt: d.endedAt,
    updatedAt: d.updatedAt,
    lastedMs: Math.max(0, (d.endedAt ?? now).getTime() - d.startedAt.getTime()),
    text: disagreementText(d, now),
  };
}

/** `open`: true (the default: the ones lasting now) or false (every one, ended ones too). */
function openParam(q: URLSearchParams): boolean {
  const raw = q.get('open');
  if (raw === null || raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new HttpError(400, 'open: true or false');
}

/** Test id → its key (config's testKey), for the live tests of one server or of the fleet. */
async function testKeys(db: Db, serverId?: string): Promise<Map<string, string>> {
  return new Map((await testConsensus(db, { serverId })).map((t) => [t.testId, t.test]));
}

export function regionRoutes(router: Router, ctx: ApiContext): void {
  router
    .on('GET', '/api/servers/:id/regions', async (req) => {
      const server = await serverOr404(ctx.db, req.params.id!);
      const now = new Date();
      const [consensus, open, history, availability, tests] = await Promise.all([
        // Only the fleet's regions count, as for the gauges and ingest.
        testConsensus(ctx.db, { serverId: server.id, regions: ctx.regions() }),
        regionDisagreementList(ctx.db, { serverId: server.id, open: true }),
        regionDisagreementList(ctx.db, { serverId: server.id, open: false, limit: HISTORY }),
        serverAvailability(ctx.db, { serverIds: [server.id], now }),
        testAvailability(ctx.db, server.id, now),
      ]);
      const keys = new Map(consensus.map((c) => [c.testId, c.test]));
      return {
        json: {
          serverId: server.id,
          server: server.name,
          judgement: storedJudgement(server.judgement),
          consensus: consensus.map((c) => ({
            testId: c.testId,
            test: c.test,
            revision: c.revision,
            mode: c.mode,
            depth: c.depth,
            regionsTotal: c.regionsTotal,
            regionsFailing: c.regionsFailing,
            needed: c.needed,
            failing: c.failing,
            failingRegions: c.failingRegions,
          })),
          disagreements: {
            // An open one of a retired test lasts on in the table, but nothing will end it: not open here.
            open: open.filter((d) => keys.has(d.testId)).map((d) => shown(d, keys, now)),
            history: history.map((d) => shown(d, keys, now)),
          },
          availability: {
            server: availability.get(server.id) ?? null,
            tests: Object.fromEntries(tests),
          },
        },
      };
    })
    .on('GET', '/api/disagreements', async (req) => {
      const q = req.query;
      const serverId = q.get('server') ?? undefined;
      if (serverId !== undefined && !uuid.safeParse(serverId).success) throw new HttpError(400, 'server: a server id');
      const open = openParam(q);
      const since = sinceParam(q);
      const limit = intParam(q, 'limit', 100, 1, 500);
      const now = new Date();
      const [list, keys] = await Promise.all([
        regionDisagreementList(ctx.db, { serverId, open, since, limit }),
        testKeys(ctx.db, serverId),
      ]);
      // As on a server's page and in the gauges: an open one of a retired test is not lasting now.
      const shownList = open ? list.filter((d) => keys.has(d.testId)) : list;
      return { json: { open, since: since ?? null, disagreements: shownList.map((d) => shown(d, keys, now)) } };
    });
}
