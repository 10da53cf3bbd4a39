// What control's fleet-wide gauges read from the store: some servers at a time (the ones a run
// moved, or a slice of the fleet), each as the families show it (fleet-families.ts). The reads are
// the API's and the dashboard's own (serversOverview, testConsensus, conformance), so a gauge
// judges a server exactly as its page does.
import { revisionLabel } from '@mcp-fleet/bus/metrics';
import { isRevision, revisionInfo } from '@mcp-fleet/probe';
import {
  conformanceFailing,
  liveServerIds,
  openDisagreements,
  type ServerOverview,
  type Store,
  serversOverview,
  type TestConsensus,
  testConsensus,
} from '@mcp-fleet/store';
import type { RegionGauges, ServerGauges } from './fleet-families';

export interface FleetGaugeReads {
  /** Every live server's id (a whole read goes through them a slice at a time). */
  liveServerIds(): Promise<string[]>;
  /** These servers as the gauges show them; one not returned (retired, deleted) has no series. */
  servers(ids: readonly string[]): Promise<ServerGauges[]>;
}

/**
 * `fleetRegions` is the fleet in force (what ingest accepts results from): a state left by a
 * region no longer in the fleet does not count towards a consensus.
 */
export function storeGaugeReads(store: Store, fleetRegions?: () => readonly string[]): FleetGaugeReads {
  const db = store.db;
  return {
    liveServerIds: () => liveServerIds(db),
    async servers(ids) {
      // One query after another: the pool's connections are ingest's first.
      const overview = (await serversOverview(db, { ids: [...ids] })).filter((s) => s.retiredAt === null);
      if (overview.length === 0) return [];
      const live = overview.map((s) => s.id);
      const consensus = await testConsensus(db, { serverIds: live, regions: fleetRegions?.() });
      const open = await openDisagreements(db, live);
      const conformance = new Map((await conformanceFailing(db, { serverIds: live })).map((c) => [c.serverId, c]));
      const testsOf = groupBy(consensus, (c) => c.serverId);
      const openOf = groupBy(open, (d) => d.serverId);
      return overview.map((s) => ({
        id: s.id,
        name: s.name,
        regions: regionGauges(s),
        tests: (testsOf.get(s.id) ?? []).map((c) => ({
          test: c.test,
          revision: c.mode === 'newest' ? 'newest' : revisionLabel(c.revision),
          failing: c.failing,
          regionsFailing: c.regionsFailing,
          regionsTotal: c.regionsTotal,
        })),
        disagreement: disagreementOf(testsOf.get(s.id) ?? [], openOf.get(s.id) ?? []),
        mustFailing: conformance.get(s.id)?.mustFailing ?? null,
      }));
    },
  };
}

/**
 * Per region: the newest-supported test's revision, up as the worst state across every test in
 * the region (server-health.ts, as the API and the dashboard judge it), failing pins.
 */
function regionGauges(s: ServerOverview): RegionGauges[] {
  return s.byRegion.map(({ region, state }) => {
    const newest = s.tests.find((t) => t.mode === 'newest')?.states.find((st) => st.region === region);
    const revision = newest?.currentRevision ?? null;
    return {
      region,
      revision,
      era: isRevision(revision) ? revisionInfo(revision).era : null,
      up: state ? !state.failing : null,
      failingPinnedTests: s.tests.filter(
        (t) => t.mode === 'pinned' && t.states.some((st) => st.region === region && st.failing),
      ).length,
    };
  });
}

/**
 * A server with a live test has a disagreement series (0 while its regions agree); an open
 * disagreement of a test no longer live (retired while it lasted) is not counted: nobody can end it.
 */
export function disagreementOf(
  consensus: readonly Pick<TestConsensus, 'testId' | 'judgement'>[],
  open: readonly { testId: string; startedAt: Date }[],
): ServerGauges['disagreement'] {
  const first = consensus[0];
  if (!first) return null;
  const live = new Set(consensus.map((c) => c.testId));
  let openSince: number | null = null;
  for (const d of open)
    if (live.has(d.testId)) openSince = Math.min(openSince ?? Number.POSITIVE_INFINITY, d.startedAt.getTime());
  return { afterMs: first.judgement.disagreementAfterMs, openSince };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(key(item));
    if (list) list.push(item);
    else out.set(key(item), [item]);
  }
  return out;
}
