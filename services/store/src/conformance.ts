// Conformance as the API and the gauges read it: a server's check states per test and region
// (with since when), the last conformance run's checks, the fleet's server × check matrix, and
// per server how many MUST checks fail. Only live conformance tests of live servers count (a
// retired server's page reads its tests retired with it, as the other reads do).
import { and, asc, desc, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Db } from './db';
import { checkStates, runs, servers, tests } from './schema';
import { shownTests } from './shown-tests';

export type CheckState = typeof checkStates.$inferSelect;

export interface TestConformance {
  testId: string;
  mode: 'newest' | 'pinned';
  pinnedRevision: string | null;
  intervalMs: number | null;
  /** Per region: each check's state, and the last conformance run's checks as it reported them. */
  regions: {
    region: string;
    checks: Omit<CheckState, 'testId' | 'serverId' | 'region'>[];
    lastRun: {
      runId: number;
      finishedAt: Date;
      negotiated: string | null;
      era: string | null;
      outcome: string;
      checks: unknown;
    } | null;
  }[];
}

/** A server's conformance tests (those shown with it) and their check states. */
export async function serverConformance(db: Db, serverId: string): Promise<TestConformance[]> {
  const shown = await db
    .select({
      testId: tests.id,
      mode: tests.mode,
      pinnedRevision: tests.pinnedRevision,
      intervalMs: tests.intervalMs,
    })
    .from(tests)
    .innerJoin(servers, shownTests)
    .where(and(eq(servers.id, serverId), eq(tests.depth, 'conformance')))
    .orderBy(asc(tests.createdAt), asc(tests.id));
  const out: TestConformance[] = [];
  for (const t of shown) {
    const states = await db
      .select()
      .from(checkStates)
      .where(eq(checkStates.testId, t.testId))
      .orderBy(asc(checkStates.region), asc(checkStates.checkId));
    // Each region's last run that carried checks (runs_test_region… index: newest first, one row per region).
    const last = await db
      .selectDistinctOn([runs.region], {
        region: runs.region,
        runId: runs.id,
        finishedAt: runs.finishedAt,
        negotiated: runs.negotiated,
        era: runs.era,
        outcome: runs.outcome,
        checks: runs.checks,
      })
      .from(runs)
      .where(and(eq(runs.testId, t.testId), isNotNull(runs.checks)))
      .orderBy(runs.region, desc(runs.scheduledAt), desc(runs.id));
    const regions = [...new Set([...states.map((s) => s.region), ...last.map((l) => l.region)])].sort();
    out.push({
      ...t,
      regions: regions.map((region) => {
        const run = last.find((l) => l.region === region);
        return {
          region,
          checks: states.filter((s) => s.region === region).map(({ testId: _t, serverId: _s, region: _r, ...c }) => c),
          lastRun: run ? { ...run, region: undefined } : null,
        };
      }),
    });
  }
  return out;
}

/**
 * Per live server with a judged live conformance test: how many distinct MUST checks fail in some
 * region. Given `serverIds`, only those servers (still only live ones).
 */
export async function conformanceFailing(
  db: Db,
  opts: { serverIds?: readonly string[] } = {},
): Promise<{ serverId: string; server: string; mustFailing: number }[]> {
  if (opts.serverIds?.length === 0) return [];
  return db
    .select({
      serverId: servers.id,
      server: servers.name,
      mustFailing:
        sql<number>`count(distinct ${checkStates.checkId}) filter (where ${checkStates.level} = 'MUST' and ${checkStates.status} = 'fail')`.mapWith(
          Number,
        ),
    })
    .from(checkStates)
    .innerJoin(tests, eq(tests.id, checkStates.testId))
    .innerJoin(servers, eq(servers.id, tests.serverId))
    .where(
      and(
        isNull(tests.retiredAt),
        isNull(servers.retiredAt),
        eq(tests.depth, 'conformance'),
        opts.serverIds ? inArray(servers.id, [...opts.serverIds]) : undefined,
      ),
    )
    .groupBy(servers.id, servers.name)
    .orderBy(asc(servers.name));
}
