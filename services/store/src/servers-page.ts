// The servers table: search, filters, sorting and one page at a time. Filtering happens in SQL
// over one row per server (its tests' states folded together), so a page of a fleet of thousands
// loads only its own servers' details.
import { type Era, REVISION_NAMES, revisionInfo } from '@mcp-fleet/probe';
import { and, asc, desc, eq, ilike, isNotNull, isNull, or, type SQL, sql } from 'drizzle-orm';
import { type TestConsensus, testConsensus } from './consensus';
import type { Db } from './db';
import { type RegionDisagreement, regionDisagreementList } from './disagreements';
import { type ServerOverview, serversOverview } from './reads';
import { servers, testStates, tests } from './schema';
import { healthOf, type ServerHealth, serverHealth } from './server-health';
import { shownTests } from './shown-tests';
import { type UpgradeAvailable, upgradesAvailable } from './upgrades';
import { type ServerAvailability, serverAvailability } from './uptime';

export const SERVER_SORTS = ['name', 'lastRun', 'failing'] as const;
export type ServerSort = (typeof SERVER_SORTS)[number];

export interface ServersPageQuery {
  /** Live servers (default), or the retired ones, whose history stays viewable. */
  status?: 'live' | 'retired' | undefined;
  /** Part of the name or URL, any case. */
  search?: string | undefined;
  /** The newest-supported test speaks this revision in some region. */
  revision?: string | undefined;
  era?: Era | undefined;
  /** The server is probed in this region. */
  region?: string | undefined;
  /** Some test's last run ended so. */
  outcome?: string | undefined;
  /** Only servers in this health (failing, degraded, up, not run yet: server-health.ts). */
  health?: ServerHealth | undefined;
  sort?: ServerSort | undefined;
  descending?: boolean | undefined;
  /** 1-based. */
  page?: number | undefined;
  pageSize?: number | undefined;
  /** The fleet's regions: a test state left by a region no longer in the fleet does not count towards consensus. */
  fleetRegions?: readonly string[] | undefined;
  now?: Date | undefined;
}

/** What on-call reads beside a server's row: its regions' verdicts, loaded for the page's servers only. */
export interface ServerJudged {
  /** Its open region disagreements (one per newest-supported test at most). */
  disagreements: RegionDisagreement[];
  /** Uptime and reachability per window, and its SLO line. */
  availability: ServerAvailability | null;
  /** Its newest-supported tests with an upgrade available. */
  upgrades: UpgradeAvailable[];
  /** Each live test's consensus across its regions. */
  consensus: TestConsensus[];
}

export interface ServersPage {
  servers: ServerOverview[];
  total: number;
  page: number;
  pageSize: number;
  pages: number;
  /** Every live and every retired server, whatever the filters: counted apart, never added up. */
  counts: { live: number; retired: number };
  /** By server id, for the page's servers. */
  judged: Record<string, ServerJudged>;
}

const list = (values: string[]) =>
  sql`array[${sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  )}]::text[]`;

export async function serversPage(db: Db, q: ServersPageQuery): Promise<ServersPage> {
  const pageSize = Math.max(1, Math.min(200, Math.floor(q.pageSize ?? 50)));
  const search = q.search?.trim();
  const pattern = search ? `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;

  const health = serverHealth(db);
  const folded = db
    .select({
      id: servers.id,
      name: sql<string>`${servers.name}`.as('name'),
      revisions: sql<string[]>`coalesce(array_agg(distinct ${testStates.currentRevision})
        filter (where ${tests.mode} = 'newest' and ${testStates.currentRevision} is not null), '{}')`.as('revisions'),
      regions: sql<string[]>`coalesce(array_agg(distinct ${testStates.region})
        filter (where ${testStates.region} is not null), '{}')`.as('regions'),
      outcomes: sql<string[]>`coalesce(array_agg(distinct ${testStates.lastOutcome})
        filter (where ${testStates.lastOutcome} is not null), '{}')`.as('outcomes'),
      failing: sql<boolean>`coalesce(bool_or(${testStates.failing}), false)`.as('failing'),
      lastRunAt: sql<Date | null>`max(${testStates.lastRunAt})`.as('last_run_at'),
      // One row per server on the join, so any aggregate of it is the server's health.
      health: sql<ServerHealth>`min(${healthOf(health)})`.as('health'),
    })
    .from(servers)
    .leftJoin(health, eq(health.serverId, servers.id))
    .leftJoin(tests, shownTests)
    .leftJoin(testStates, eq(testStates.testId, tests.id))
    .where(
      and(
        q.status === 'retired' ? isNotNull(servers.retiredAt) : isNull(servers.retiredAt),
        pattern ? or(ilike(servers.name, pattern), ilike(servers.url, pattern)) : undefined,
      ),
    )
    .groupBy(servers.id)
    .as('folded');

  const eraRevisions = q.era ? REVISION_NAMES.filter((r) => revisionInfo(r).era === q.era) : [];
  const filters: (SQL | undefined)[] = [
    q.revision ? sql`${q.revision} = any(${folded.revisions})` : undefined,
    q.era ? sql`${folded.revisions} && ${list(eraRevisions)}` : undefined,
    q.region ? sql`${q.region} = any(${folded.regions})` : undefined,
    q.outcome ? sql`${q.outcome} = any(${folded.outcomes})` : undefined,
    q.health ? sql`${folded.health} = ${q.health}` : undefined,
  ];
  const where = and(...filters);
  const direction = q.descending ? desc : asc;
  const order: SQL[] =
    q.sort === 'lastRun'
      ? [sql`${folded.lastRunAt} ${q.descending ? sql`desc nulls last` : sql`asc nulls first`}`, asc(folded.name)]
      : q.sort === 'failing'
        ? [direction(folded.failing), asc(folded.name)]
        : [direction(folded.name)];

  const [counted] = await db
    .select({ n: sql<number>`count(*)`.mapWith(Number) })
    .from(folded)
    .where(where);
  const total = counted?.n ?? 0;
  const [counts] = await db
    .select({
      live: sql<number>`count(*) filter (where ${servers.retiredAt} is null)`.mapWith(Number),
      retired: sql<number>`count(*) filter (where ${servers.retiredAt} is not null)`.mapWith(Number),
    })
    .from(servers);
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const page = Math.max(1, Math.min(pages, Math.floor(q.page ?? 1)));
  const ids = await db
    .select({ id: folded.id })
    .from(folded)
    .where(where)
    .orderBy(...order, asc(folded.id))
    .limit(pageSize)
    .offset((page - 1) * pageSize);

  const pageIds = ids.map((r) => r.id);
  const [details, judged] = await Promise.all([
    serversOverview(db, { ids: pageIds }),
    serversJudged(db, pageIds, { fleetRegions: q.fleetRegions, now: q.now }),
  ]);
  const byId = new Map(details.map((s) => [s.id, s]));
  return {
    judged,
    servers: ids.map((r) => byId.get(r.id)).filter((s): s is ServerOverview => s !== undefined),
    total,
    page,
    pageSize,
    pages,
    counts: { live: counts?.live ?? 0, retired: counts?.retired ?? 0 },
  };
}

/**
 * The verdicts of these servers (a page of them): open disagreements, availability, upgrades and
 * consensus, in six queries whatever the page's size.
 */
export async function serversJudged(
  db: Db,
  serverIds: readonly string[],
  opts: { fleetRegions?: readonly string[] | undefined; now?: Date | undefined } = {},
): Promise<Record<string, ServerJudged>> {
  const out: Record<string, ServerJudged> = {};
  if (serverIds.length === 0) return out;
  const ids = [...new Set(serverIds)];
  const [disagreements, availability, upgrades, consensus] = await Promise.all([
    // At most one open disagreement per test (the region_disagreements_open index): a page's worth.
    regionDisagreementList(db, { serverIds: ids, open: true, limit: 500 }),
    serverAvailability(db, { serverIds: ids, now: opts.now }),
    upgradesAvailable(db, ids),
    testConsensus(db, { serverIds: ids, regions: opts.fleetRegions }),
  ]);
  for (const id of ids)
    out[id] = {
      disagreements: disagreements.filter((d) => d.serverId === id),
      availability: availability.get(id) ?? null,
      upgrades: upgrades.filter((u) => u.serverId === id),
      consensus: consensus.filter((c) => c.serverId === id),
    };
  return out;
}
