// Control's fleet-wide gauge families (a series per server and region, per test, or per server),
// each series drawn from one server's gauges: what a run moves is one server's lines, never the
// fleet's (fleet-gauges.ts). Labels stay bounded: server names are the operator's fleet, never
// URLs, ids or sessions; revisions in `*_version` labels, lower-case values.
import { revisionLabel } from '@mcp-fleet/bus/metrics';
import type { Labels } from './fleet-exposition';

/** How a server stands in one region, as the gauges show it. */
export interface RegionGauges {
  region: string;
  /** The revision the server's newest-supported test speaks there, when known. */
  revision: string | null;
  era: string | null;
  /** The worst state across the server's tests in the region passes (server-health.ts); null: none has run there. */
  up: boolean | null;
  failingPinnedTests: number;
}

/** A test's consensus state as the gauges label it. */
export interface TestGauges {
  /** config's testKey: `newest/handshake`, `2025-03-26/conformance`… */
  test: string;
  /** `newest` or the pinned revision (bounded: revisionLabel). */
  revision: string;
  failing: boolean;
  regionsFailing: number;
  regionsTotal: number;
}

/** One live server as the fleet-wide families show it. */
export interface ServerGauges {
  id: string;
  name: string;
  regions: readonly RegionGauges[];
  tests: readonly TestGauges[];
  /**
   * Its region disagreement: how long one may last before it alerts (disagreementAfter), and since
   * when its longest open one has lasted (ms since the epoch; null while its regions agree). Null
   * when it has no live test (no series).
   */
  disagreement: { afterMs: number; openSince: number | null } | null;
  /** MUST conformance checks it fails in some region; null: no judged conformance test (no series). */
  mustFailing: number | null;
}

export interface FleetFamily {
  name: string;
  help: string;
  /** Its values follow the scrape's clock while the server has an open disagreement (rendered at each scrape). */
  clock?: true;
  series(s: ServerGauges, nowMs: number): Iterable<readonly [Labels, number]>;
}

const testLabels = (s: ServerGauges, t: TestGauges) => ({ server: s.name, test: t.test, revision: t.revision });

/** How long a server's longest open disagreement has lasted at `nowMs` (a start in the future counts as 0). */
function lasted(s: ServerGauges, nowMs: number): number | null {
  const since = s.disagreement?.openSince;
  return since === null || since === undefined ? null : Math.max(0, nowMs - since);
}

export const FLEET_FAMILIES: readonly FleetFamily[] = [
  {
    name: 'mcp_server_revision_info',
    help: 'The revision a server speaks in a region (its newest-supported test), 1 per series.',
    *series(s) {
      for (const r of s.regions)
        if (r.revision)
          yield [
            {
              server: s.name,
              region: r.region,
              negotiated_version: revisionLabel(r.revision),
              era: r.era ?? 'unknown',
            },
            1,
          ];
    },
  },
  {
    name: 'mcp_server_up',
    help: '1 when every test of a server last passed in a region (its worst state), 0 when any failed.',
    *series(s) {
      for (const r of s.regions) if (r.up !== null) yield [{ server: s.name, region: r.region }, r.up ? 1 : 0];
    },
  },
  {
    name: 'mcp_server_failing_pinned_tests',
    help: 'Pinned tests of a server whose last run in a region failed (the server no longer speaks that revision).',
    *series(s) {
      for (const r of s.regions) yield [{ server: s.name, region: r.region }, r.failingPinnedTests];
    },
  },
  // Multi-region truth (docs/regions.md): test consensus, and each server's disagreement.
  {
    name: 'mcp_test_failing',
    help: "1 when a test's consensus state is failing (a quorum of its regions failed failAfter runs in a row), else 0.",
    *series(s) {
      for (const t of s.tests) yield [testLabels(s, t), t.failing ? 1 : 0];
    },
  },
  {
    name: 'mcp_test_regions_failing',
    help: 'Regions in which a test failed its last failAfter runs in a row.',
    *series(s) {
      for (const t of s.tests) yield [testLabels(s, t), t.regionsFailing];
    },
  },
  // The regions total a quorum is taken of. Not `_total`: Prometheus keeps that suffix for counters
  // (promtool check metrics; control's metrics test holds every gauge to it).
  {
    name: 'mcp_test_regions',
    help: 'Regions of the fleet that have run a test: the total its quorum is taken of.',
    *series(s) {
      for (const t of s.tests) yield [testLabels(s, t), t.regionsTotal];
    },
  },
  {
    name: 'mcp_server_region_disagreement',
    help: "1 when a server's regions have negotiated different revisions for at least its disagreementAfter, else 0.",
    clock: true,
    *series(s, nowMs) {
      if (!s.disagreement) return;
      const ms = lasted(s, nowMs);
      yield [{ server: s.name }, ms !== null && ms >= s.disagreement.afterMs ? 1 : 0];
    },
  },
  {
    name: 'mcp_server_region_disagreement_seconds',
    help: "How long a server's longest open region disagreement has lasted (0 when its regions agree).",
    clock: true,
    *series(s, nowMs) {
      if (s.disagreement) yield [{ server: s.name }, (lasted(s, nowMs) ?? 0) / 1000];
    },
  },
  {
    name: 'mcp_conformance_must_failing',
    help: "MUST conformance checks a server fails in some region (its live conformance tests' latest runs).",
    *series(s) {
      if (s.mustFailing !== null) yield [{ server: s.name }, s.mustFailing];
    },
  },
  {
    name: 'mcp_conformance_passing',
    help: '1 when a server with conformance tests fails no MUST check in any region, 0 when it fails one.',
    *series(s) {
      if (s.mustFailing !== null) yield [{ server: s.name }, s.mustFailing === 0 ? 1 : 0];
    },
  },
];
