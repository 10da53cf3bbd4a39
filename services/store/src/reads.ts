// What the API and the dashboard read. Every query walks an index: the current picture comes from
// test_states (one row per test and region), history pages by cursor, and only the fleet summary
// counts runs, over a time range of the runs_finished index.
import { storedJudgement } from '@mcp-fleet/config';
import { type Era, REVISION_NAMES, revisionInfo, type Script, type TestDepth } from '@mcp-fleet/probe';
import { and, asc, desc, eq, gte, inArray, isNotNull, isNull, lt, or, type SQL, sql } from 'drizzle-orm';
import { type AnyPgColumn, alias } from 'drizzle-orm/pg-core';
import type { Db } from './db';
import { outcomeCounts } from './rollups';
import { detections, eraMoves, runs, servers, testStates, tests } from './schema';
import {
  healthOf,
  SERVER_HEALTHS,
  type ServerHealth,
  serverHealth,
  type WorstState,
  worstState,
} from './server-health';
import { shownTests } from './shown-tests';

export type Run = typeof runs.$inferSelect;
export type EraMoveRecord = typeof eraMoves.$inferSelect;
export type DetectionRecord = typeof detections.$inferSelect;

/** How a test, or a server as a whole, stands in one region. */
export interface RegionState {
  region: string;
  currentRevision: string | null;
  lastOutcome: string | null;
  lastMessage: string | null;
  /** The last run's failed assertion (a pin: "Server no longer speaks protocol …"). */
  lastAssertion: unknown;
  lastRunAt: Date | null;
  failing: boolean;
}

/** How a server stands in one region: as RegionState, plus the worst state across its tests there. */
export interface ServerRegionState extends RegionState {
  /** The worst last outcome of any of its tests in the region, and which test (server-health.ts). */
  state: WorstState | null;
}

export interface TestOverview {
  id: string;
  mode: 'newest' | 'pinned';
  pinnedRevision: string | null;
  /** handshake, conformance (its checks: serverConformance), surface or script. */
  depth: TestDepth;
  /** The test's own interval; null = its depth's default. */
  intervalMs: number | null;
  /** A script test's steps (and allowWrites); null for every other depth. */
  script: Script | null;
  states: RegionState[];
}

export interface ServerOverview {
  id: string;
  name: string;
  url: string;
  /** Regions that probe it; null = every region. */
  regions: string[] | null;
  intervalMs: number;
  timeoutMs: number;
  detectionIntervalMs: number | null;
  /** When it was retired (read-only from then on, history kept), or null while it is live. */
  retiredAt: Date | null;
  tests: TestOverview[];
  /** Failing, degraded, up or not run yet, across its tests and regions (server-health.ts). */
  health: ServerHealth;
  /**
   * Per region: the revision its newest-supported test speaks (a pinned test's when it has none),
   * the outcome of its latest run of any test, whether any test is failing there, and the worst
   * state across its tests (`state`), which is the one to judge the server by.
   */
  byRegion: ServerRegionState[];
}

/**
 * Every live server with its tests and how they stand per region; no credentials. Given `ids`,
 * those servers, retired ones included: a retired server is still shown (its history stays
 * reachable from era moves and runs), with the tests it had when it was retired.
 */
export async function serversOverview(db: Db, opts: { ids?: string[] } = {}): Promise<ServerOverview[]> {
  if (opts.ids?.length === 0) return [];
  const health = serverHealth(db, { serverIds: opts.ids });
  const rows = await db
    .select({
      id: servers.id,
      name: servers.name,
      url: servers.url,
      regions: servers.regions,
      intervalMs: servers.intervalMs,
      timeoutMs: servers.timeoutMs,
      detectionIntervalMs: servers.detectionIntervalMs,
      retiredAt: servers.retiredAt,
      health: healthOf(health),
      testId: tests.id,
      mode: tests.mode,
      pinnedRevision: tests.pinnedRevision,
      depth: tests.depth,
      testIntervalMs: tests.intervalMs,
      script: sql<Script | null>`${tests.script}`,
      region: testStates.region,
      currentRevision: testStates.currentRevision,
      lastOutcome: testStates.lastOutcome,
      lastMessage: testStates.lastMessage,
      lastAssertion: testStates.lastAssertion,
      lastRunAt: testStates.lastRunAt,
      failing: testStates.failing,
    })
    .from(servers)
    .leftJoin(health, eq(health.serverId, servers.id))
    .leftJoin(tests, shownTests)
    .leftJoin(testStates, eq(testStates.testId, tests.id))
    .where(opts.ids ? inArray(servers.id, opts.ids) : isNull(servers.retiredAt))
    .orderBy(asc(servers.name), asc(tests.createdAt), asc(tests.id), asc(testStates.region));

  const overview = new Map<string, ServerOverview>();
  const testsById = new Map<string, TestOverview>();
  for (const r of rows) {
    let server = overview.get(r.id);
    if (!server) {
      const { id, name, url, regions, intervalMs, timeoutMs, detectionIntervalMs, retiredAt, health } = r;
      server = {
        id,
        name,
        url,
        regions,
        intervalMs,
        timeoutMs,
        detectionIntervalMs,
        retiredAt,
        tests: [],
        health,
        byRegion: [],
      };
      overview.set(r.id, server);
    }
    if (!r.testId || !r.mode) continue;
    let test = testsById.get(r.testId);
    if (!test) {
      test = {
        id: r.testId,
        mode: r.mode,
        pinnedRevision: r.pinnedRevision,
        depth: r.depth ?? 'handshake',
        intervalMs: r.testIntervalMs,
        script: r.script ?? null,
        states: [],
      };
      testsById.set(r.testId, test);
      server.tests.push(test);
    }
    if (r.region === null) continue;
    test.states.push({
      region: r.region,
      currentRevision: r.currentRevision,
      lastOutcome: r.lastOutcome,
      lastMessage: r.lastMessage,
      lastAssertion: r.lastAssertion,
      lastRunAt: r.lastRunAt,
      failing: r.failing ?? false,
    });
  }
  for (const server of overview.values()) server.byRegion = byRegion(server.tests);
  return [...overview.values()];
}

function byRegion(serverTests: TestOverview[]): ServerRegionState[] {
  const regions = new Map<string, ServerRegionState>();
  // Newest-supported tests first: theirs is the revision the server speaks.
  const ordered = [...serverTests].sort((a, b) => Number(a.mode === 'pinned') - Number(b.mode === 'pinned'));
  for (const test of ordered) {
    for (const s of test.states) {
      const r = regions.get(s.region);
      if (!r) {
        regions.set(s.region, { ...s, state: null });
        continue;
      }
      r.currentRevision ??= s.currentRevision;
      r.failing ||= s.failing;
      if (s.lastRunAt && (!r.lastRunAt || s.lastRunAt > r.lastRunAt)) {
        r.lastOutcome = s.lastOutcome;
        r.lastMessage = s.lastMessage;
        r.lastAssertion = s.lastAssertion;
        r.lastRunAt = s.lastRunAt;
      }
    }
  }
  for (const r of regions.values())
    r.state = worstState(
      serverTests.flatMap((test) => test.states.filter((s) => s.region === r.region).map((state) => ({ test, state }))),
    );
  return [...regions.values()].sort((a, b) => a.region.localeCompare(b.region));
}

export interface RunCursor {
  finishedAt: Date;
  id: number;
}

/** A server's runs, newest first; pass `next` back as `before` for the page after. */
export async function runsOfServer(
  db: Db,
  serverId: string,
  opts: { limit: number; before?: RunCursor | undefined },
): Promise<{ runs: Run[]; next: RunCursor | null }> {
  const limit = clampLimit(opts.limit);
  const rows = await db
    .select()
    .from(runs)
    .where(
      and(
        eq(runs.serverId, serverId),
        opts.before ? before(runs.finishedAt, runs.id, opts.before.finishedAt, opts.before.id) : undefined,
      ),
    )
    .orderBy(desc(runs.finishedAt), desc(runs.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { runs: page, next: rows.length > limit && last ? { finishedAt: last.finishedAt, id: last.id } : null };
}

export interface EraMoveCursor {
  at: Date;
  id: number;
}

/**
 * Which moves a list shows. `confirmed` (what dashboards and counters use): confirmed moves, and each
 * flap once, as its move back (state `flapping`, `flap_of` set: "A→B→A"), its first half hidden.
 * `raw`: every move recorded, pending and superseded ones too (the history).
 */
export const ERA_MOVE_VIEWS = ['confirmed', 'raw'] as const;
export type EraMoveView = (typeof ERA_MOVE_VIEWS)[number];

export function isEraMoveView(v: unknown): v is EraMoveView {
  return typeof v === 'string' && (ERA_MOVE_VIEWS as readonly string[]).includes(v);
}

/** The moves the confirmed view counts: confirmed ones and the move back of each flap. */
export function countedMove(): SQL {
  return or(eq(eraMoves.state, 'confirmed'), and(eq(eraMoves.state, 'flapping'), isNotNull(eraMoves.flapOf))) as SQL;
}

export interface EraMoveQuery {
  since?: Date | undefined;
  serverId?: string | undefined;
  region?: string | undefined;
  /** Only moves to an older revision (in the confirmed view, confirmed ones: a flap is not a downgrade). */
  downgrade?: boolean | undefined;
  /** Only moves across eras (legacy ↔ modern; in the confirmed view, confirmed ones). */
  eraChanged?: boolean | undefined;
  /** `confirmed` (default) or `raw`. */
  view?: EraMoveView | undefined;
  limit: number;
  before?: EraMoveCursor | undefined;
}

export interface EraMoveItem extends EraMoveRecord {
  serverName: string;
  /** The runs its server's judgement wants to confirm a move (what "seen in 1 of 2 runs" counts to). */
  confirmAfter: number;
  /** A move confirmed by regions: how many regions' moves alike were confirmed with it. */
  confirmedRegions: number | null;
  /** A flap's move back: when the move it undid happened (null otherwise, or once that row is gone). */
  flapStartedAt: Date | null;
}

/** Era moves, newest first, with the server's name; the confirmed view by default. */
export async function eraMovesList(
  db: Db,
  q: EraMoveQuery,
): Promise<{ moves: EraMoveItem[]; next: EraMoveCursor | null }> {
  const limit = clampLimit(q.limit);
  const view = q.view ?? 'confirmed';
  const first = alias(eraMoves, 'flap_first');
  const alike = alias(eraMoves, 'alike');
  const rows = await db
    .select({
      id: eraMoves.id,
      serverId: eraMoves.serverId,
      testId: eraMoves.testId,
      region: eraMoves.region,
      runId: eraMoves.runId,
      fromRevision: eraMoves.fromRevision,
      toRevision: eraMoves.toRevision,
      downgrade: eraMoves.downgrade,
      eraChanged: eraMoves.eraChanged,
      at: eraMoves.at,
      state: eraMoves.state,
      seenRuns: eraMoves.seenRuns,
      confirmedAt: eraMoves.confirmedAt,
      confirmedBy: eraMoves.confirmedBy,
      flapOf: eraMoves.flapOf,
      serverName: servers.name,
      judgement: servers.judgement,
      flapStartedAt: first.at,
      // Regions confirm together: ingest confirms every alike move of a quorum at one instant.
      confirmedRegions: sql<number | null>`case when ${eraMoves.confirmedBy} = 'regions' then (
        select count(distinct ${alike.region})::int from ${eraMoves} as alike
        where ${alike.testId} = ${eraMoves.testId} and ${alike.fromRevision} = ${eraMoves.fromRevision}
          and ${alike.toRevision} = ${eraMoves.toRevision} and ${alike.state} = 'confirmed'
          and ${alike.confirmedAt} = ${eraMoves.confirmedAt}) end`,
    })
    .from(eraMoves)
    .innerJoin(servers, eq(servers.id, eraMoves.serverId))
    .leftJoin(first, eq(first.id, eraMoves.flapOf))
    .where(
      and(
        view === 'confirmed' ? countedMove() : undefined,
        q.since ? gte(eraMoves.at, q.since) : undefined,
        q.serverId ? eq(eraMoves.serverId, q.serverId) : undefined,
        q.region ? eq(eraMoves.region, q.region) : undefined,
        q.downgrade ? eq(eraMoves.downgrade, true) : undefined,
        q.eraChanged ? eq(eraMoves.eraChanged, true) : undefined,
        // A flap went back where it was: no downgrade, no era change, in the view that counts.
        view === 'confirmed' && (q.downgrade || q.eraChanged) ? eq(eraMoves.state, 'confirmed') : undefined,
        q.before ? before(eraMoves.at, eraMoves.id, q.before.at, q.before.id) : undefined,
      ),
    )
    .orderBy(desc(eraMoves.at), desc(eraMoves.id))
    .limit(limit + 1);
  const moves = rows.slice(0, limit).map(({ judgement, confirmedRegions, ...m }) => ({
    ...m,
    confirmAfter: storedJudgement(judgement).confirmAfter,
    confirmedRegions: confirmedRegions === null ? null : Number(confirmedRegions),
  }));
  const last = moves[moves.length - 1];
  return { moves, next: rows.length > limit && last ? { at: last.at, id: last.id } : null };
}

/** How a move reads on the dashboard: "flapping: A→B→A", else "A→B". */
export function moveText(m: Pick<EraMoveRecord, 'state' | 'flapOf' | 'fromRevision' | 'toRevision'>): string {
  return m.state === 'flapping' && m.flapOf !== null
    ? `flapping: ${m.toRevision}→${m.fromRevision}→${m.toRevision}`
    : `${m.fromRevision}→${m.toRevision}`;
}

/** A move's state as a badge says it: "seen in 1 of 2 runs", "confirmed by 2 regions", "confirmed in 2 runs", "flapping". */
export function moveStateText(
  m: Pick<EraMoveItem, 'state' | 'seenRuns' | 'confirmAfter' | 'confirmedBy' | 'confirmedRegions' | 'flapOf'>,
): string {
  switch (m.state) {
    case 'pending':
      return `pending: seen in ${m.seenRuns} of ${m.confirmAfter} runs`;
    case 'confirmed':
      return m.confirmedBy === 'regions'
        ? m.confirmedRegions === null
          ? 'confirmed by a quorum of regions'
          : `confirmed by ${m.confirmedRegions} ${m.confirmedRegions === 1 ? 'region' : 'regions'}`
        : `confirmed in ${m.seenRuns} ${m.seenRuns === 1 ? 'run' : 'runs'}`;
    case 'flapping':
      return m.flapOf === null ? 'flapping (undone)' : 'flapping';
    case 'superseded':
      return 'superseded';
  }
}

export interface FleetSummary {
  since: Date;
  until: Date | null;
  /** Active servers. */
  servers: number;
  /** Servers by the revision their newest-supported tests speak, per region (null: none yet). */
  byRevision: { region: string; revision: string | null; servers: number }[];
  byEra: { region: string; era: Era | null; servers: number }[];
  /** Runs that finished in [since, until). */
  runs: {
    total: number;
    byOutcome: Record<string, number>;
    byRegion: Record<string, number>;
    byRegionAndOutcome: { region: string; outcome: string; runs: number }[];
  };
  /** Active servers by health (failing, degraded, up, not run yet: server-health.ts); they add up to `servers`. */
  health: Record<ServerHealth, number>;
  /** Active pinned tests failing in at least one region. */
  failingPinnedTests: number;
  /**
   * Era moves in [since, until) as the confirmed view counts them (confirmed moves, each flap once),
   * and how many were confirmed downgrades or crossed eras (a flap is neither), and flaps.
   */
  eraMoves: number;
  downgrades: number;
  eraChanges: number;
  flaps: number;
  /** Moves still waiting for confirmation (recorded in the range). */
  pendingMoves: number;
}

const count = () => sql<number>`count(*)`.mapWith(Number);

/** The fleet at a glance. One read-only snapshot, so the counts agree with each other. */
export function fleetSummary(
  db: Db,
  range: {
    since: Date;
    until?: Date | undefined;
    /** Count the range's runs (default true): the one part that grows with runs; the dashboard skips it. */
    countRuns?: boolean | undefined;
    /** Count servers per region and era too (default true; `byEra` is empty without): the overview does not show them. */
    eras?: boolean | undefined;
  },
): Promise<FleetSummary> {
  const { since } = range;
  const until = range.until ?? null;
  // Literal text (the revision table's own constants), so the query is the same statement each time.
  const quoted = (v: string) => `'${v.replaceAll("'", "''")}'`;
  const eraOf = sql.raw(
    `case revision ${REVISION_NAMES.map((r) => `when ${quoted(r)} then ${quoted(revisionInfo(r).era)}`).join(' ')} end`,
  );

  return db.transaction(
    async (tx) => {
      const [active] = await tx.select({ n: count() }).from(servers).where(isNull(servers.retiredAt));

      const health = serverHealth(tx);
      const byHealth = await tx
        .select({ health: healthOf(health), servers: count() })
        .from(servers)
        .leftJoin(health, eq(health.serverId, servers.id))
        .where(isNull(servers.retiredAt))
        .groupBy(sql`1`);

      // Servers per region and revision (and per region and era) of the live newest-supported
      // tests: each (region, revision, server) once first, then counted, all hash aggregates (a
      // count(distinct) under grouping sets sorted every state once per set: 3× the cost at 25,000 states).
      const states = (await tx.execute(sql`
        with per as (
          select ts.region, ts.current_revision as revision, t.server_id
          from ${testStates} ts
          join ${tests} t on t.id = ts.test_id
          join ${servers} s on s.id = t.server_id
          where t.retired_at is null and s.retired_at is null and t.mode = 'newest'
          group by 1, 2, 3
        )
        select false as "byEra", region, revision as key, count(*)::int as servers from per group by 2, 3
        ${
          range.eras === false
            ? sql``
            : sql`union all
        select true, region, era, count(*)::int
        from (select region, ${eraOf} as era, server_id from per group by 1, 2, 3) as by_era
        group by 2, 3`
        }`)) as unknown as { rows: { byEra: boolean; region: string; key: string | null; servers: number }[] };
      const byRegionFirst = (a: { region: string }, b: { region: string }, x: string | null, y: string | null) =>
        a.region < b.region
          ? -1
          : a.region > b.region
            ? 1
            : x === y
              ? 0
              : x === null
                ? 1
                : y === null
                  ? -1
                  : x < y
                    ? -1
                    : 1;
      const byRevision = states.rows
        .filter((r) => !r.byEra)
        .map((r) => ({ region: r.region, revision: r.key, servers: Number(r.servers) }))
        .sort((a, b) => byRegionFirst(a, b, a.revision, b.revision));
      const byEra = states.rows
        .filter((r) => r.byEra)
        .map((r) => ({ region: r.region, era: r.key as Era | null, servers: Number(r.servers) }))
        .sort((a, b) => byRegionFirst(a, b, a.era, b.era));
      // Pinned tests failing in at least one region (a test counts once).
      const [failing] = await tx
        .select({ n: sql<number>`count(distinct ${testStates.testId})`.mapWith(Number) })
        .from(testStates)
        .innerJoin(tests, eq(tests.id, testStates.testId))
        .innerJoin(servers, eq(servers.id, tests.serverId))
        .where(
          and(
            isNull(tests.retiredAt),
            isNull(servers.retiredAt),
            eq(tests.mode, 'pinned'),
            eq(testStates.failing, true),
          ),
        );

      const outcomes =
        range.countRuns === false
          ? []
          : // Whole hours from the hourly rollups, the edges from the runs (rollups.ts).
            await outcomeCounts(tx, { since, until });

      const [moves] = await tx
        .select({
          moves: sql<number>`count(*) filter (where ${countedMove()})`.mapWith(Number),
          downgrades:
            sql<number>`count(*) filter (where ${eraMoves.state} = 'confirmed' and ${eraMoves.downgrade})`.mapWith(
              Number,
            ),
          eraChanges:
            sql<number>`count(*) filter (where ${eraMoves.state} = 'confirmed' and ${eraMoves.eraChanged})`.mapWith(
              Number,
            ),
          flaps:
            sql<number>`count(*) filter (where ${eraMoves.state} = 'flapping' and ${eraMoves.flapOf} is not null)`.mapWith(
              Number,
            ),
          pending: sql<number>`count(*) filter (where ${eraMoves.state} = 'pending')`.mapWith(Number),
        })
        .from(eraMoves)
        .where(and(gte(eraMoves.at, since), until ? lt(eraMoves.at, until) : undefined));

      const byOutcome: Record<string, number> = {};
      const byRegionTotal: Record<string, number> = {};
      let total = 0;
      for (const o of outcomes) {
        byOutcome[o.outcome] = (byOutcome[o.outcome] ?? 0) + o.runs;
        byRegionTotal[o.region] = (byRegionTotal[o.region] ?? 0) + o.runs;
        total += o.runs;
      }
      return {
        since,
        until,
        servers: active?.n ?? 0,
        byRevision,
        byEra,
        runs: { total, byOutcome, byRegion: byRegionTotal, byRegionAndOutcome: outcomes },
        health: Object.fromEntries(
          SERVER_HEALTHS.map((h) => [h, byHealth.find((b) => b.health === h)?.servers ?? 0]),
        ) as Record<ServerHealth, number>,
        failingPinnedTests: failing?.n ?? 0,
        eraMoves: moves?.moves ?? 0,
        downgrades: moves?.downgrades ?? 0,
        eraChanges: moves?.eraChanges ?? 0,
        flaps: moves?.flaps ?? 0,
        pendingMoves: moves?.pending ?? 0,
      };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

/** The server's most recent detection, or null. */
export async function latestDetection(db: Db, serverId: string): Promise<DetectionRecord | null> {
  const [row] = await db
    .select()
    .from(detections)
    .where(eq(detections.serverId, serverId))
    .orderBy(desc(detections.at), desc(detections.id))
    .limit(1);
  return row ?? null;
}

export const MAX_PAGE = 500;

function clampLimit(limit: number): number {
  return Math.max(1, Math.min(MAX_PAGE, Math.floor(limit) || 1));
}

/** Keyset condition `(time, id) < (t, i)`: a row comparison the (…, time, id) indexes answer. */
function before(time: AnyPgColumn, id: AnyPgColumn, t: Date, i: number): SQL {
  return sql`(${time}, ${id}) < (${t.toISOString()}::timestamptz, ${i})`;
}

/** One run, or null. */
export async function getRun(db: Db, id: number): Promise<Run | null> {
  if (!Number.isSafeInteger(id) || id < 1) return null;
  const [row] = await db.select().from(runs).where(eq(runs.id, id)).limit(1);
  return row ?? null;
}
