// Control's /metrics: the scheduler and ingest at work, and per-server state gauges for alerting.
// Labels stay bounded: server names are the operator's fleet, never URLs, ids or sessions. Label
// names and values follow the agents' convention: revisions in `*_version` labels, lower-case values.
import type { Bus } from '@mcp-fleet/bus';
import { collectProcessMetrics, revisionLabel } from '@mcp-fleet/bus/metrics';
import { isRevision, revisionInfo } from '@mcp-fleet/probe';
import {
  conformanceFailing,
  listAgents,
  type RegionDisagreement,
  regionDisagreementList,
  type Store,
  serversOverview,
  type TestConsensus,
  testConsensus,
} from '@mcp-fleet/store';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { FleetExposition } from './fleet-exposition';
import { GaugeSnapshot, type GaugeSnapshotOptions } from './gauge-snapshot';

export interface ServerState {
  server: string;
  region: string;
  /** The revision the server's newest-supported test speaks there, when known. */
  revision: string | null;
  era: string | null;
  /** The worst state across the server's tests in the region passes (server-health.ts); null: none has run there. */
  up: boolean | null;
  failingPinnedTests: number;
}

export interface ControlMetricsSources {
  serverStates: () => Promise<ServerState[]>;
  /** Messages the bus terminated as poison since it started (only grows). */
  poison: () => number;
  agentsSeen: () => Promise<{ region: string; count: number }[]>;
  /** Per server with a judged conformance test: how many distinct MUST checks fail in some region (store's conformanceFailing). */
  conformance?: () => Promise<{ server: string; mustFailing: number }[]>;
  /** Each live test's consensus state and each live server's region disagreement (docs/regions.md). */
  regions?: () => Promise<RegionsState>;
}

/** A test's consensus state as the gauges label it. */
export interface TestConsensusState {
  server: string;
  /** config's testKey: `newest/handshake`, `2025-03-26/conformance`… */
  test: string;
  /** `newest` or the pinned revision. */
  revision: string;
  failing: boolean;
  regionsFailing: number;
  regionsTotal: number;
}

/** A live server's region disagreement now: how long its longest open one has lasted, and whether that is long enough to alert. */
export interface ServerDisagreementState {
  server: string;
  /** The longest open disagreement has lasted at least the server's disagreementAfter. */
  disagreeing: boolean;
  /** How long the longest open one has lasted; 0 when its regions agree. */
  seconds: number;
}

export interface RegionsState {
  tests: TestConsensusState[];
  servers: ServerDisagreementState[];
}

/** prom-client's registry, and after its text the fleet-wide families' (rendered apart: fleet-exposition.ts). */
class ControlRegistry extends Registry {
  constructor(private readonly fleetBytes: () => Promise<Buffer[]>) {
    super();
  }

  /** What a scrape sends, in pieces: the registry's text, then each family group's bytes as rendered. */
  async exposition(): Promise<(string | Buffer)[]> {
    const [own, fleet] = await Promise.all([super.metrics(), this.fleetBytes()]);
    return [own, ...fleet.flatMap((bytes) => ['\n', bytes])];
  }

  override async metrics(): Promise<string> {
    return (await this.exposition()).map((piece) => piece.toString()).join('');
  }
}

export function createControlMetrics(sources: ControlMetricsSources) {
  // The fleet-wide families' bytes (fleetBytes, below) follow the registry's own text.
  const registry = new ControlRegistry(() => fleetBytes());
  collectProcessMetrics(registry);
  const jobs = new Counter({
    name: 'mcp_scheduler_jobs_total',
    help: 'Jobs the scheduler published, by kind and result (published, duplicate, error).',
    labelNames: ['kind', 'result'] as const,
    registers: [registry],
  });
  const lag = new Histogram({
    name: 'mcp_scheduler_lag_seconds',
    help: 'Time from a slot start to its job being accepted by the bus.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
    registers: [registry],
  });
  const entries = new Gauge({
    name: 'mcp_scheduler_entries',
    help: 'Scheduled (test or detection, region) pairs.',
    registers: [registry],
  });
  // Of the controls on one database, the one holding the scheduling lease reads 1 (lease.ts): the
  // sum across replicas is 1 while one schedules, 0 while none does.
  const leader = new Gauge({
    name: 'mcp_scheduler_leader',
    help: 'Whether this control holds the scheduling lease and schedules (1), or only ingests and serves the API (0).',
    registers: [registry],
  });
  const ingest = new Counter({
    name: 'mcp_ingest_total',
    // duplicate: the job already has its run (or detection). The bus does not deduplicate results,
    // so every repeat is counted here: a redelivery, a publish retried, a job run twice.
    help: 'Results ingested, by kind and result (written, duplicate: its job already had one, retried, rejected).',
    labelNames: ['kind', 'result'] as const,
    registers: [registry],
  });
  // Group commit (ingest.ts): how many runs each transaction wrote; small under light load by design.
  const ingestBatch = new Histogram({
    name: 'mcp_ingest_batch_runs',
    help: 'Runs written per ingest transaction (group commit: the results that arrived while the last batch was written).',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [registry],
  });
  const ingestBatchFallbacks = new Counter({
    name: 'mcp_ingest_batch_fallbacks_total',
    help: 'Ingest batches whose transaction failed (a run the database refused, a deadlock) and were written run by run.',
    registers: [registry],
  });
  const moves = new Counter({
    name: 'mcp_ingest_era_moves_total',
    help: 'Era moves recorded by ingest (negotiated revision changed between runs).',
    labelNames: ['from_version', 'to_version', 'region'] as const,
    registers: [registry],
  });
  // Confirmed moves and flaps (docs/regions.md): what dashboards and alerts count; the raw moves stay
  // in mcp_ingest_era_moves_total. Server names are the operator's fleet: bounded.
  const movesConfirmed = new Counter({
    name: 'mcp_era_moves_confirmed_total',
    help: 'Era moves confirmed (seen in confirmAfter runs of a region, or in a quorum of regions), by server, revisions and region.',
    labelNames: ['server', 'from_version', 'to_version', 'region'] as const,
    registers: [registry],
  });
  const flaps = new Counter({
    name: 'mcp_era_flaps_total',
    help: 'Era moves undone inside the flap window (A→B→A): one flap, by server and region.',
    labelNames: ['server', 'region'] as const,
    registers: [registry],
  });
  // Bounded labels: three severities, six kinds (probe's SURFACE_KINDS), the fleet's regions.
  const surfaceChanges = new Counter({
    name: 'mcp_surface_changes_total',
    help: 'Surface changes recorded by ingest (what a server offers changed between two reads of one era), by severity (breaking, warning, info), kind and region.',
    labelNames: ['severity', 'kind', 'region'] as const,
    registers: [registry],
  });
  // The monitor's own MCP tools (mcp/server.ts): nine tool names, three outcomes.
  const mcpToolCalls = new Counter({
    name: 'mcp_fleet_tool_calls_total',
    help: "Calls to the monitor's own MCP tools, by tool and outcome (ok, error: the API refused it, rate_limited).",
    labelNames: ['tool', 'outcome'] as const,
    registers: [registry],
  });
  // A counter (it only grows, and rate() must read it as one); the bus keeps the count, so each
  // scrape adds what was terminated since the last.
  let poisonCounted = 0;
  new Counter({
    name: 'mcp_bus_poison_total',
    help: 'Messages terminated because they failed validation.',
    registers: [registry],
    collect() {
      const now = sources.poison();
      this.inc(Math.max(0, now - poisonCounted));
      poisonCounted = Math.max(poisonCounted, now);
    },
  });
  new Gauge({
    name: 'mcp_agents_seen',
    help: 'Agents control heard from in the last minute (those not stale in /api/agents), by region.',
    labelNames: ['region'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const a of await sources.agentsSeen()) this.set({ region: a.region }, a.count);
    },
  });
  // The fleet-wide families: text rendered once per snapshot (fleet-exposition.ts), appended to
  // the registry's at each scrape. Label values are the fleet's servers and tests: bounded.
  const stateFamilies = new FleetExposition<ServerState>([
    {
      name: 'mcp_server_revision_info',
      help: 'The revision a server speaks in a region (its newest-supported test), 1 per series.',
      series: (s) =>
        s.revision
          ? [
              {
                server: s.server,
                region: s.region,
                negotiated_version: revisionLabel(s.revision),
                era: s.era ?? 'unknown',
              },
              1,
            ]
          : null,
    },
    {
      name: 'mcp_server_up',
      help: '1 when every test of a server last passed in a region (its worst state), 0 when any failed.',
      series: (s) => (s.up === null ? null : [{ server: s.server, region: s.region }, s.up ? 1 : 0]),
    },
    {
      name: 'mcp_server_failing_pinned_tests',
      help: 'Pinned tests of a server whose last run in a region failed (the server no longer speaks that revision).',
      series: (s) => [{ server: s.server, region: s.region }, s.failingPinnedTests],
    },
  ]);
  // Multi-region truth (docs/regions.md): test consensus, and each server's disagreement (whose
  // duration is the scrape's own clock's: rendered at each scrape).
  const testLabels = (t: TestConsensusState) => ({ server: t.server, test: t.test, revision: t.revision });
  const testFamilies = new FleetExposition<TestConsensusState>([
    {
      name: 'mcp_test_failing',
      help: "1 when a test's consensus state is failing (a quorum of its regions failed failAfter runs in a row), else 0.",
      series: (t) => [testLabels(t), t.failing ? 1 : 0],
    },
    {
      name: 'mcp_test_regions_failing',
      help: 'Regions in which a test failed its last failAfter runs in a row.',
      series: (t) => [testLabels(t), t.regionsFailing],
    },
    // The regions total a quorum is taken of. Not `_total`: Prometheus keeps that suffix for counters
    // (promtool check metrics; control's metrics test holds every gauge to it).
    {
      name: 'mcp_test_regions',
      help: 'Regions of the fleet that have run a test: the total its quorum is taken of.',
      series: (t) => [testLabels(t), t.regionsTotal],
    },
  ]);
  const disagreementFamilies = new FleetExposition<ServerDisagreementState>([
    {
      name: 'mcp_server_region_disagreement',
      help: "1 when a server's regions have negotiated different revisions for at least its disagreementAfter, else 0.",
      series: (s) => [{ server: s.server }, s.disagreeing ? 1 : 0],
    },
    {
      name: 'mcp_server_region_disagreement_seconds',
      help: "How long a server's longest open region disagreement has lasted (0 when its regions agree).",
      series: (s) => [{ server: s.server }, s.seconds],
    },
  ]);
  const conformanceFamilies = new FleetExposition<{ server: string; mustFailing: number }>([
    {
      name: 'mcp_conformance_must_failing',
      help: "MUST conformance checks a server fails in some region (its live conformance tests' latest runs).",
      series: (c) => [{ server: c.server }, c.mustFailing],
    },
    {
      name: 'mcp_conformance_passing',
      help: '1 when a server with conformance tests fails no MUST check in any region, 0 when it fails one.',
      series: (c) => [{ server: c.server }, c.mustFailing === 0 ? 1 : 0],
    },
  ]);
  const fleetBytes = () => {
    const regions = sources.regions?.() ?? Promise.resolve({ tests: [], servers: [] });
    return Promise.all([
      sources.serverStates().then((states) => stateFamilies.bytes(states)),
      regions.then((r) => testFamilies.bytes(r.tests)),
      regions.then((r) => disagreementFamilies.bytes(r.servers)),
      (sources.conformance?.() ?? Promise.resolve([])).then((c) => conformanceFamilies.bytes(c)),
    ]);
  };
  return {
    registry,
    jobs,
    lag,
    entries,
    leader,
    ingest,
    ingestBatch,
    ingestBatchFallbacks,
    moves,
    movesConfirmed,
    flaps,
    surfaceChanges,
    mcpToolCalls,
  };
}

export type ControlMetrics = ReturnType<typeof createControlMetrics>;

/**
 * What control's gauges read: the store's servers and agents, the bus's poison count. `fleetRegions`
 * is the fleet in force (what ingest accepts results from): a state left by a region no longer in
 * the fleet does not count towards a consensus. The fleet-wide reads are snapshots
 * (gauge-snapshot.ts): read again when told `changed()` or when old, never per scrape.
 */
export function controlMetricsSources(
  store: Store,
  bus: Bus,
  fleetRegions?: () => readonly string[],
  snapshots: GaugeSnapshotOptions = {},
  onError: (err: Error) => void = () => {},
): ControlMetricsSources & { changed(): void; stop(): void } {
  const states = new GaugeSnapshot(() => serverStates(store), snapshots, onError);
  const conformance = new GaugeSnapshot(() => conformanceFailing(store.db), snapshots, onError);
  const regions = new GaugeSnapshot(
    () =>
      Promise.all([
        testConsensus(store.db, { regions: fleetRegions?.() }),
        // At most one open disagreement per test: the most a listing gives is plenty for a fleet.
        regionDisagreementList(store.db, { open: true, limit: 500 }),
      ]),
    snapshots,
    onError,
  );
  const all = [states, conformance, regions];
  let last: { consensus: readonly TestConsensus[]; tests: TestConsensusState[]; quiet?: RegionsState } | undefined;
  return {
    poison: () => bus.stats().poison,
    serverStates: () => states.get(),
    conformance: () => conformance.get(),
    // How long a disagreement has lasted is the scrape's own clock's, not the snapshot's. The rest
    // is the snapshot's: the same lists while it is (their text is not rendered again), and the
    // whole state while no disagreement is open (nothing then depends on the clock).
    regions: async () => {
      const [consensus, open] = await regions.get();
      if (last?.consensus === consensus && open.length === 0 && last.quiet) return last.quiet;
      const state = regionsState(consensus, open, new Date());
      if (last?.consensus === consensus) state.tests = last.tests;
      else last = { consensus, tests: state.tests };
      if (open.length === 0) last.quiet = state;
      return state;
    },
    agentsSeen: async () => {
      const byRegion = new Map<string, number>();
      for (const a of await listAgents(store.db))
        if (!a.stale) byRegion.set(a.region, (byRegion.get(a.region) ?? 0) + 1);
      return [...byRegion].map(([region, count]) => ({ region, count }));
    },
    changed: () => {
      for (const s of all) s.changed();
    },
    stop: () => {
      for (const s of all) s.stop();
    },
  };
}

/**
 * Per-server state for the gauges: the newest-supported test's revision, up as the worst state
 * across every test in the region (server-health.ts, as the API and the dashboard judge it), failing pins.
 */
async function serverStates(store: Store): Promise<ServerState[]> {
  const out: ServerState[] = [];
  for (const s of await serversOverview(store.db)) {
    for (const { region, state } of s.byRegion) {
      const newest = s.tests.find((t) => t.mode === 'newest')?.states.find((st) => st.region === region);
      const revision = newest?.currentRevision ?? null;
      out.push({
        server: s.name,
        region,
        revision,
        era: isRevision(revision) ? revisionInfo(revision).era : null,
        up: state ? !state.failing : null,
        failingPinnedTests: s.tests.filter(
          (t) => t.mode === 'pinned' && t.states.some((st) => st.region === region && st.failing),
        ).length,
      });
    }
  }
  return out;
}

/**
 * The gauges' view of consensus and disagreement. Every live server with a live test gets a
 * disagreement series (0 while its regions agree); an open disagreement of a test no longer live
 * (retired while it lasted) is not counted: nobody can end it.
 */
export function regionsState(
  consensus: readonly TestConsensus[],
  open: readonly Pick<RegionDisagreement, 'server' | 'testId' | 'startedAt'>[],
  now: Date,
): RegionsState {
  const tests = consensus.map((c) => ({
    server: c.server,
    test: c.test,
    revision: c.mode === 'newest' ? 'newest' : revisionLabel(c.revision),
    failing: c.failing,
    regionsFailing: c.regionsFailing,
    regionsTotal: c.regionsTotal,
  }));
  const liveTests = new Set(consensus.map((c) => c.testId));
  const after = new Map<string, number>();
  for (const c of consensus) after.set(c.server, c.judgement.disagreementAfterMs);
  const longest = new Map<string, number>();
  for (const d of open) {
    if (!liveTests.has(d.testId) || !after.has(d.server)) continue;
    const lasted = Math.max(0, now.getTime() - d.startedAt.getTime());
    longest.set(d.server, Math.max(longest.get(d.server) ?? 0, lasted));
  }
  const servers = [...after].map(([server, afterMs]) => {
    const lasted = longest.get(server);
    return { server, disagreeing: lasted !== undefined && lasted >= afterMs, seconds: (lasted ?? 0) / 1000 };
  });
  return { tests, servers };
}
