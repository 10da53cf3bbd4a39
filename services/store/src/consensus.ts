// A test's consensus state: failing when a quorum of its regions fail it (config's quorumNeeded),
// each region counting only after failAfter failed runs in a row. One region's network blip stays a
// region's trouble; control's `mcp_test_failing` and the paging alerts read this, the per-region
// gauges keep the rest (docs/regions.md).
import { type Judgement, quorumNeeded, storedJudgement, testKey } from '@mcp-fleet/config';
import { and, eq, inArray, isNull, type SQL } from 'drizzle-orm';
import type { Db } from './db';
import { servers, testStates, tests } from './schema';

export interface Consensus {
  /** Regions that have run the test (among the ones asked about). */
  regionsTotal: number;
  /** Regions whose last failAfter runs all failed. */
  regionsFailing: number;
  /** Failing regions it takes (0 when no region has run it). */
  needed: number;
  failing: boolean;
  failingRegions: string[];
}

/** The consensus of a test's region states under a server's judgement. */
export function consensusOf(
  states: readonly { region: string; consecutiveFailures: number }[],
  judgement: Pick<Judgement, 'quorum' | 'failAfter'>,
): Consensus {
  const failingRegions = states
    .filter((s) => s.consecutiveFailures >= judgement.failAfter)
    .map((s) => s.region)
    .sort();
  const needed = quorumNeeded(judgement.quorum, states.length);
  return {
    regionsTotal: states.length,
    regionsFailing: failingRegions.length,
    needed,
    failing: needed > 0 && failingRegions.length >= needed,
    failingRegions,
  };
}

export interface TestConsensus extends Consensus {
  testId: string;
  serverId: string;
  /** The server's name. */
  server: string;
  /** The test's key within its server (config's testKey: `newest/handshake`, `2025-03-26/conformance`…). */
  test: string;
  /** `newest` or the pinned revision. */
  revision: string;
  mode: 'newest' | 'pinned';
  depth: string;
  judgement: Judgement;
}

export interface ConsensusQuery {
  serverId?: string | undefined;
  /** These servers (a page of the servers table), retired ones included; omitted: every live server. */
  serverIds?: readonly string[] | undefined;
  /** The fleet's regions: states left by a region no longer in the fleet are not counted. */
  regions?: readonly string[] | undefined;
}

/** Every live test's consensus (of live servers, or the ones named), from its region states and its server's judgement. */
export async function testConsensus(db: Db, q: ConsensusQuery = {}): Promise<TestConsensus[]> {
  if (q.serverIds?.length === 0) return [];
  const where: (SQL | undefined)[] = [isNull(tests.retiredAt)];
  if (q.serverIds) where.push(inArray(servers.id, [...q.serverIds]));
  else where.push(isNull(servers.retiredAt));
  if (q.serverId) where.push(eq(servers.id, q.serverId));
  const rows = await db
    .select({
      testId: tests.id,
      serverId: servers.id,
      server: servers.name,
      judgement: servers.judgement,
      serverRegions: servers.regions,
      mode: tests.mode,
      pinnedRevision: tests.pinnedRevision,
      depth: tests.depth,
      script: tests.script,
    })
    .from(tests)
    .innerJoin(servers, eq(servers.id, tests.serverId))
    .where(and(...where))
    .orderBy(servers.name, tests.createdAt, tests.id);
  if (rows.length === 0) return [];
  const states = await db
    .select({
      testId: testStates.testId,
      region: testStates.region,
      consecutiveFailures: testStates.consecutiveFailures,
    })
    .from(testStates)
    .where(
      and(
        inArray(
          testStates.testId,
          rows.map((r) => r.testId),
        ),
        q.regions ? inArray(testStates.region, [...q.regions]) : undefined,
      ),
    );
  const byTest = new Map<string, { region: string; consecutiveFailures: number }[]>();
  for (const s of states) {
    const list = byTest.get(s.testId) ?? [];
    list.push(s);
    byTest.set(s.testId, list);
  }
  return rows.map((r) => {
    const judgement = storedJudgement(r.judgement);
    // A server probed from some regions only: a state left from before its regions changed does not count.
    const own = (byTest.get(r.testId) ?? []).filter((s) => !r.serverRegions || r.serverRegions.includes(s.region));
    return {
      testId: r.testId,
      serverId: r.serverId,
      server: r.server,
      test: testKey(r),
      revision: r.mode === 'newest' ? 'newest' : (r.pinnedRevision ?? 'unknown'),
      mode: r.mode,
      depth: r.depth,
      judgement,
      ...consensusOf(own, judgement),
    };
  });
}
