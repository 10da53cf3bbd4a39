// What the dashboard reads of conformance (docs/protocol.md#conformance-by-era): a server's last
// result per era from check_states (one row per test, region and check, written by ingest), the
// fleet's check × server matrix and the share of servers passing every MUST check.
//
// "Now" is each test's latest era per region: the era of its latest judged check there. When a
// server moves between eras its old era's rows stay (the server page shows them as the last result
// in that era); the matrix and the share read only the current era's rows, so an old legacy failure
// does not hold a server that now speaks 2026-07-28 back.
//
// check_states rows come from agents' results (hostile input, validated by the bus schema at
// ingest): a check id the table does not know is still shown, under its own name, never dropped.
import { type CheckLevel, type CheckStatus, CONFORMANCE_CHECKS, type Era } from '@mcp-fleet/probe';
import { and, asc, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from './db';
import { checkStates, runs, servers, tests } from './schema';
import { shownTests } from './shown-tests';

/** One check's state in one region of one test. */
export interface ConformanceCheckState {
  checkId: string;
  level: CheckLevel;
  era: string;
  status: CheckStatus;
  message: string;
  /** The reply that decided it (probe's Evidence, redacted and bounded); hostile: show as text only. */
  evidence: unknown;
  /** When it entered its current status ("failing since …"). */
  since: Date;
  lastRunAt: Date;
}

/** A conformance test's last result in one era and region. */
export interface ConformanceResult {
  testId: string;
  mode: 'newest' | 'pinned';
  pinnedRevision: string | null;
  region: string;
  era: string;
  /** The revision the last run of that era negotiated (null once retention pruned the run). */
  negotiated: string | null;
  lastRunId: number | null;
  lastRunAt: Date;
  /** This era is the one the test's latest run in the region negotiated. */
  current: boolean;
  /** Failures first (MUST, then SHOULD), then passes, then skips; the table's order within each. */
  checks: ConformanceCheckState[];
}

export interface ServerConformance {
  /** The server's conformance-depth tests (a retired server's as it had them), run or not. */
  tests: { id: string; mode: 'newest' | 'pinned'; pinnedRevision: string | null }[];
  /** Per test, region and era; newest first. */
  results: ConformanceResult[];
}

/** A check's place in the table (conformance-checks.ts); an id it does not have goes last. */
const TABLE_ORDER = new Map<string, number>(CONFORMANCE_CHECKS.map((c, i) => [c.id, i]));
const tableIndex = (id: string) => TABLE_ORDER.get(id) ?? CONFORMANCE_CHECKS.length;

/** How bad a check's state is, for "failures first": a failing MUST, a failing SHOULD, a pass, a skip. */
export function checkRank(c: { status: string; level: string }): number {
  if (c.status === 'fail') return c.level === 'MUST' ? 0 : 1;
  return c.status === 'pass' ? 2 : 3;
}

/** Failures first, as the CLI's table: then the table's order, then the id. */
export function failuresFirst<T extends { checkId: string; status: string; level: string }>(checks: T[]): T[] {
  return [...checks].sort(
    (a, b) =>
      checkRank(a) - checkRank(b) ||
      tableIndex(a.checkId) - tableIndex(b.checkId) ||
      a.checkId.localeCompare(b.checkId),
  );
}

/** A server's conformance tests and, per test, region and era, the last result's checks. */
export async function serverConformanceResults(db: Db, serverId: string): Promise<ServerConformance> {
  const shown = await db
    .select({ id: tests.id, mode: tests.mode, pinnedRevision: tests.pinnedRevision })
    .from(tests)
    .innerJoin(servers, shownTests)
    .where(and(eq(tests.serverId, serverId), eq(tests.depth, 'conformance')))
    .orderBy(asc(tests.createdAt), asc(tests.id));
  if (shown.length === 0) return { tests: [], results: [] };

  const rows = await db
    .select()
    .from(checkStates)
    .where(
      inArray(
        checkStates.testId,
        shown.map((t) => t.id),
      ),
    );
  const byKey = new Map<string, ConformanceResult>();
  const latestAt = new Map<string, { at: Date; era: string }>();
  for (const r of rows) {
    const test = shown.find((t) => t.id === r.testId)!;
    const key = `${r.testId}\n${r.region}\n${r.era}`;
    let result = byKey.get(key);
    if (!result) {
      result = {
        testId: r.testId,
        mode: test.mode,
        pinnedRevision: test.pinnedRevision,
        region: r.region,
        era: r.era,
        negotiated: null,
        lastRunId: r.lastRunId,
        lastRunAt: r.lastRunAt,
        current: false,
        checks: [],
      };
      byKey.set(key, result);
    }
    if (r.lastRunAt > result.lastRunAt) {
      result.lastRunAt = r.lastRunAt;
      result.lastRunId = r.lastRunId;
    }
    result.checks.push({
      checkId: r.checkId,
      level: r.level,
      era: r.era,
      status: r.status,
      message: r.message,
      evidence: r.evidence,
      since: r.since,
      lastRunAt: r.lastRunAt,
    });
    const place = `${r.testId}\n${r.region}`;
    const latest = latestAt.get(place);
    if (!latest || r.lastRunAt > latest.at) latestAt.set(place, { at: r.lastRunAt, era: r.era });
  }
  const results = [...byKey.values()];
  const runIds = results.map((r) => r.lastRunId).filter((id): id is number => id !== null);
  const negotiated = new Map(
    runIds.length === 0
      ? []
      : (
          await db
            .select({ id: runs.id, negotiated: runs.negotiated })
            .from(runs)
            .where(inArray(runs.id, [...new Set(runIds)]))
        ).map((r) => [r.id, r.negotiated]),
  );
  for (const r of results) {
    r.negotiated = (r.lastRunId !== null ? negotiated.get(r.lastRunId) : null) ?? null;
    r.current = latestAt.get(`${r.testId}\n${r.region}`)?.era === r.era;
    r.checks = failuresFirst(r.checks);
  }
  results.sort(
    (a, b) =>
      b.lastRunAt.getTime() - a.lastRunAt.getTime() || a.era.localeCompare(b.era) || a.region.localeCompare(b.region),
  );
  return { tests: shown, results };
}

/** One check across a server's regions and tests in one era: the worst state, and where it fails. */
export interface MergedCheck extends ConformanceCheckState {
  /** Every region (and test) judged this check, and those where it fails. */
  regions: string[];
  failingRegions: string[];
  /** Whether the regions disagree (a pass here, a fail there). */
  split: boolean;
}

/** A server's last result in one era, merged across its regions and tests. */
export interface EraConformance {
  era: string;
  /** The revisions its last runs in that era negotiated. */
  negotiated: string[];
  lastRunAt: Date;
  /** Some test negotiates this era now (else it is an earlier era's last result). */
  current: boolean;
  /** Failures first (MUST, then SHOULD), then passes, then skips. */
  checks: MergedCheck[];
}

/**
 * The last result per era, for the server page: each era's checks merged across regions and tests,
 * the worst first (fail > pass > skip); a failing check's message, evidence and since are those of
 * the region where it has failed longest.
 */
export function conformanceByEra(results: ConformanceResult[]): EraConformance[] {
  const eras = new Map<string, ConformanceResult[]>();
  for (const r of results) eras.set(r.era, [...(eras.get(r.era) ?? []), r]);
  return [...eras.entries()]
    .map(([era, list]) => {
      const checks = new Map<string, MergedCheck>();
      for (const result of list)
        for (const c of result.checks) {
          const merged = checks.get(c.checkId);
          const failing = c.status === 'fail' ? [result.region] : [];
          if (!merged) {
            checks.set(c.checkId, {
              ...c,
              regions: [result.region],
              failingRegions: failing,
              split: false,
            });
            continue;
          }
          merged.regions = [...new Set([...merged.regions, result.region])].sort();
          merged.failingRegions = [...new Set([...merged.failingRegions, ...failing])].sort();
          if (merged.status !== c.status) merged.split = true;
          const worse = checkRank(c) < checkRank(merged) || (c.status === merged.status && c.since < merged.since);
          if (worse) Object.assign(merged, { ...c, regions: merged.regions, failingRegions: merged.failingRegions });
        }
      return {
        era,
        negotiated: [...new Set(list.map((r) => r.negotiated).filter((n): n is string => n !== null))].sort(),
        lastRunAt: new Date(Math.max(...list.map((r) => r.lastRunAt.getTime()))),
        current: list.some((r) => r.current),
        checks: failuresFirst([...checks.values()]),
      };
    })
    .sort((a, b) => Number(b.current) - Number(a.current) || b.lastRunAt.getTime() - a.lastRunAt.getTime());
}

/**
 * Each live conformance test's current check states (subquery): the rows of the era its latest
 * judged check in each region belongs to.
 */
function currentCheckStates(db: Db) {
  const latest = db
    .selectDistinctOn([checkStates.testId, checkStates.region], {
      testId: checkStates.testId,
      region: checkStates.region,
      era: checkStates.era,
    })
    .from(checkStates)
    .orderBy(checkStates.testId, checkStates.region, desc(checkStates.lastRunAt))
    .as('latest_era');
  return db
    .select({
      serverId: checkStates.serverId,
      testId: checkStates.testId,
      region: checkStates.region,
      checkId: checkStates.checkId,
      level: checkStates.level,
      era: checkStates.era,
      status: checkStates.status,
      message: checkStates.message,
      lastRunAt: checkStates.lastRunAt,
    })
    .from(checkStates)
    .innerJoin(
      latest,
      and(
        eq(latest.testId, checkStates.testId),
        eq(latest.region, checkStates.region),
        eq(latest.era, checkStates.era),
      ),
    )
    .innerJoin(tests, and(eq(tests.id, checkStates.testId), eq(tests.depth, 'conformance'), isNull(tests.retiredAt)))
    .innerJoin(servers, and(eq(servers.id, tests.serverId), isNull(servers.retiredAt)))
    .as('current_checks');
}

export interface ConformanceMatrixQuery {
  /** Only the checks of runs that negotiate this era now. */
  era?: Era | undefined;
  level?: CheckLevel | undefined;
}

export interface ConformanceMatrixCell {
  /** The worst across the server's regions and tests: fail > pass > skip. */
  status: CheckStatus;
  /** Regions that judged the check (in any of the server's tests), and those where it fails. */
  regions: number;
  failingRegions: number;
  /** The worst state's message (a failing one's, the most recent). */
  message: string;
}

export interface ConformanceMatrix {
  /** The columns: checks judged in the rows, in the table's order; `rule` null for an id the table lacks. */
  checks: { id: string; level: string; era: string | null; rule: string | null }[];
  /** Live servers with a current result matching the filter, failing MUST checks first, then by name. */
  servers: {
    id: string;
    name: string;
    failingMust: number;
    failing: number;
    cells: Record<string, ConformanceMatrixCell>;
  }[];
}

/** The check × server matrix of the fleet now, worst state per cell across regions and tests. */
export async function conformanceMatrixNow(db: Db, q: ConformanceMatrixQuery = {}): Promise<ConformanceMatrix> {
  const current = currentCheckStates(db);
  const rows = await db
    .select({
      serverId: current.serverId,
      name: servers.name,
      checkId: current.checkId,
      level: sql<string>`max(${current.level})`,
      status: sql<CheckStatus>`case when bool_or(${current.status} = 'fail') then 'fail'
        when bool_or(${current.status} = 'pass') then 'pass' else 'skip' end`,
      regions: sql<number>`count(distinct ${current.region})`.mapWith(Number),
      failingRegions: sql<number>`count(distinct ${current.region}) filter (where ${current.status} = 'fail')`.mapWith(
        Number,
      ),
      message: sql<string>`(array_agg(${current.message} order by (${current.status} = 'fail') desc, (${current.status} = 'pass') desc, ${current.lastRunAt} desc))[1]`,
    })
    .from(current)
    .innerJoin(servers, eq(servers.id, current.serverId))
    .where(and(q.era ? eq(current.era, q.era) : undefined, q.level ? eq(current.level, q.level) : undefined))
    .groupBy(current.serverId, servers.name, current.checkId);

  const byServer = new Map<string, ConformanceMatrix['servers'][number]>();
  const seen = new Map<string, string>();
  for (const r of rows) {
    let s = byServer.get(r.serverId);
    if (!s) {
      s = { id: r.serverId, name: r.name, failingMust: 0, failing: 0, cells: {} };
      byServer.set(r.serverId, s);
    }
    s.cells[r.checkId] = {
      status: r.status,
      regions: r.regions,
      failingRegions: r.failingRegions,
      message: r.message,
    };
    if (r.status === 'fail') {
      s.failing += 1;
      if (r.level === 'MUST') s.failingMust += 1;
    }
    seen.set(r.checkId, r.level);
  }
  const checks = [...seen.entries()]
    .map(([id, level]) => {
      const known = CONFORMANCE_CHECKS.find((c) => c.id === id);
      return { id, level, era: known?.era ?? null, rule: known?.rule ?? null };
    })
    .sort((a, b) => tableIndex(a.id) - tableIndex(b.id) || a.id.localeCompare(b.id));
  const list = [...byServer.values()].sort(
    (a, b) => b.failingMust - a.failingMust || b.failing - a.failing || a.name.localeCompare(b.name),
  );
  return { checks, servers: list };
}

export interface ConformanceShare {
  /** Live servers with a live conformance test. */
  servers: number;
  /** Of those, servers with a result (some check judged in the era they speak now). */
  judged: number;
  /** Of those, servers no MUST check fails for, in any region or test. */
  passing: number;
}

/** How many servers pass every MUST check now, for the overview. */
export async function conformanceShare(db: Db): Promise<ConformanceShare> {
  const current = currentCheckStates(db);
  return db.transaction(
    async (tx) => {
      const [withTest] = await tx
        .select({ n: sql<number>`count(distinct ${tests.serverId})`.mapWith(Number) })
        .from(tests)
        .innerJoin(servers, and(eq(servers.id, tests.serverId), isNull(servers.retiredAt)))
        .where(and(eq(tests.depth, 'conformance'), isNull(tests.retiredAt)));
      const [judged] = await tx
        .select({
          judged: sql<number>`count(distinct ${current.serverId})`.mapWith(Number),
          failing:
            sql<number>`count(distinct ${current.serverId}) filter (where ${current.status} = 'fail' and ${current.level} = 'MUST')`.mapWith(
              Number,
            ),
        })
        .from(current);
      const n = judged?.judged ?? 0;
      return { servers: withTest?.n ?? 0, judged: n, passing: n - (judged?.failing ?? 0) };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}
