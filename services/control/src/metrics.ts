// Control's /metrics: the scheduler and ingest at work, and per-server state gauges for alerting.
// Labels stay bounded: server names are the operator's fleet, never URLs, ids or sessions. Label
// names and values follow the agents' convention: revisions in `*_version` labels, lower-case values.
import type { Bus } from '@mcp-fleet/bus';
import { collectProcessMetrics } from '@mcp-fleet/bus/metrics';
import { listAgents, type Store } from '@mcp-fleet/store';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { storeGaugeReads } from './fleet-gauge-reads';
import { FleetGauges, type FleetGaugesOptions } from './fleet-gauges';

export interface ControlMetricsSources {
  /** Messages the bus terminated as poison since it started (only grows). */
  poison: () => number;
  agentsSeen: () => Promise<{ region: string; count: number }[]>;
  /** The fleet-wide families' text (fleet-gauges.ts): per server, per region, per test. */
  fleet?: () => Promise<Buffer[]>;
}

/** prom-client's registry, and after its text the fleet-wide families' (kept apart: fleet-gauges.ts). */
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
  // The fleet-wide families' text (fleet-gauges.ts) follows the registry's own.
  const registry = new ControlRegistry(() => sources.fleet?.() ?? Promise.resolve([]));
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
 * What control's gauges read: the store's servers (kept up to date as told: fleet-gauges.ts) and
 * agents, the bus's poison count. `fleetRegions` is the fleet in force (fleet-gauge-reads.ts).
 */
export function controlMetricsSources(
  store: Store,
  bus: Bus,
  fleetRegions?: () => readonly string[],
  options: FleetGaugesOptions = {},
  onError: (err: Error) => void = () => {},
): ControlMetricsSources & { moved(serverIds: Iterable<string>): void; changed(): void; stop(): void } {
  const fleet = new FleetGauges(storeGaugeReads(store, fleetRegions), options, onError);
  return {
    poison: () => bus.stats().poison,
    fleet: () => fleet.bytes(),
    agentsSeen: async () => {
      const byRegion = new Map<string, number>();
      for (const a of await listAgents(store.db))
        if (!a.stale) byRegion.set(a.region, (byRegion.get(a.region) ?? 0) + 1);
      return [...byRegion].map(([region, count]) => ({ region, count }));
    },
    moved: (serverIds) => fleet.moved(serverIds),
    changed: () => fleet.changed(),
    stop: () => fleet.stop(),
  };
}
