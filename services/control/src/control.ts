// The control plane on one process: applies the fleet, schedules jobs, ingests results, records
// agents' heartbeats, prunes old runs, detections and silent agents, and serves the API and /metrics.
// Several controls may run on one database: the one holding the scheduling lease schedules, every
// one ingests and serves (lease.ts, docs/control-replicas.md).
import { randomUUID } from 'node:crypto';
import { CredentialsUnreadableError } from '@mcp-fleet/auth';
import type { Bus } from '@mcp-fleet/bus';
import type { FleetDefinition } from '@mcp-fleet/config';
import type { Logger } from '@mcp-fleet/log';
import { describeRanges, PUBLIC_ONLY, TargetPolicy, type TargetPolicyRanges } from '@mcp-fleet/probe';
import {
  type Db,
  FLEET_CHANGED_CHANNEL,
  parseRevisionMoved,
  REVISION_MOVED_CHANNEL,
  recordDetection,
  recordRuns,
  resealCredentials,
  type Store,
  sealStoredCredentials,
  tellFleetChanged,
  withoutParams,
} from '@mcp-fleet/store';
import { createApi } from './api';
import { serveApi } from './api-server';
import { type ApplyOptions, type ApplySummary, applyFleet } from './apply';
import { API_AUTH_HOW, ApiAuth, assertSafeBind, MCP_PATH } from './auth';
import { tellFleetChange } from './events';
import type { FleetGaugesOptions } from './fleet-gauges';
import { FleetInForce } from './fleet-in-force';
import { recordHeartbeats } from './heartbeats';
import type { RouteInfo } from './http';
import { startIngest } from './ingest';
import { Lease } from './lease';
import { mcpEndpoint } from './mcp/endpoint';
import { DetectionLimiter, type DetectionLimits } from './mcp/rate-limit';
import { MONITOR_TOOLS } from './mcp/tools';
import { controlMetricsSources, createControlMetrics } from './metrics';
import { startPruning } from './pruning';
import { Schedule } from './schedule';
import type { Scheduler } from './scheduler';

export interface ControlOptions {
  store: Store;
  bus: Bus;
  log: Logger;
  /** The fleet definition to apply at start; its regions and policy hold until the next apply. */
  fleet?: FleetDefinition | null;
  /**
   * Stdio commands per region of the agents started right after this control, in its process
   * (`mcp-fleet up`): counted as allowed when the fleet given at start is applied, which happens
   * before those agents can send a heartbeat, so its summary does not warn of what they allow.
   */
  agentsStarting?: Readonly<Record<string, readonly string[]>>;
  /** Regions when no fleet definition names them. */
  regions?: string[];
  /**
   * Control's own probe floor (MCP_FLEET_PROBE_*): where its own probes — POST /api/detect, a
   * pinned test's first run — may go, narrowed by the fleet's policy. Default: public addresses only.
   */
  probeFloor?: TargetPolicyRanges;
  port?: number;
  /** Default 127.0.0.1; beyond loopback only with `auth` on or `allowUnauthenticated`. */
  host?: string;
  /** API tokens (apiAuthFromEnv); unset = auth off, every route open, loopback only. */
  auth?: ApiAuth;
  /** Listen beyond loopback with auth off (MCP_FLEET_ALLOW_UNAUTHENTICATED=1). */
  allowUnauthenticated?: boolean;
  /** Host names served with auth off besides loopback names and IP literals (MCP_FLEET_ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  /** How often each caller may use the MCP detection tools (detect_mcp_protocol, run_check). */
  mcpDetectionLimits?: Partial<DetectionLimits>;
  tickMs?: number;
  ingestConcurrency?: number;
  /** How the fleet-wide gauges are kept (fleet-gauges.ts; maxAgeMs 0: the whole fleet read at every scrape). */
  gauges?: FleetGaugesOptions;
  retentionDays?: number;
  /** How often a control without the scheduling lease tries for it; default a quarter of the shortest interval (0.25–5 s). */
  leasePollMs?: number;
}

export interface Control {
  url: string;
  /** The API's routes and what each needs (read, admin, public, metrics). */
  routes: RouteInfo[];
  scheduler: Scheduler;
  /** Whether this control holds the scheduling lease (it schedules; the others only ingest and serve). */
  scheduling(): boolean;
  apply(fleet: FleetDefinition, opts?: ApplyOptions): Promise<ApplySummary>;
  /** Reload the schedule from the database (after any change to the fleet). */
  reschedule(): Promise<void>;
  stop(): Promise<void>;
}

export async function startControl(opts: ControlOptions): Promise<Control> {
  const { store, bus, log } = opts;
  const db = store.db;
  const auth = opts.auth ?? ApiAuth.off();
  const host = opts.host ?? '127.0.0.1';
  // Before anything starts: an open API beyond loopback is refused, not started.
  assertSafeBind({
    what: "control's API",
    host,
    authEnabled: auth.enabled,
    allowUnauthenticated: opts.allowUnauthenticated ?? false,
    how: API_AUTH_HOW,
  });
  const floorRanges = opts.probeFloor ?? PUBLIC_ONLY;
  const fleet = new FleetInForce(
    opts.fleet?.regions ?? opts.regions ?? ['local'],
    opts.fleet?.policy ?? { allow: [], deny: [] },
    new TargetPolicy(floorRanges, { floor: true }),
  );
  log.info(
    { floor: floorRanges },
    `probe floor of control's own probes (detect, a pinned test's first run): ${describeRanges(floorRanges)}`,
  );
  const gauges = controlMetricsSources(
    store,
    bus,
    () => fleet.regions,
    opts.gauges,
    // Without the query's parameters: a read of 1,000 servers lists 1,000 ids.
    (err) =>
      log.warn(
        { err: withoutParams(err).message },
        'control gauges: the store could not be read; serving what was read last',
      ),
  );
  const metrics = createControlMetrics(gauges);
  const schedule = new Schedule({
    db,
    bus,
    log,
    metrics,
    regions: () => fleet.regions,
    policy: () => fleet.ranges,
    tickMs: opts.tickMs,
  });
  // This control among the others on the database (its fleet-change notices say it).
  const self = randomUUID();
  // Who schedules among the controls on this database (started last, below).
  const lease = new Lease({
    open: () => store.openSession(),
    pollMs: () => opts.leasePollMs ?? leasePollMs(schedule.scheduler.shortestIntervalMs()),
    onChange: async (held) => {
      metrics.leader.set(held ? 1 : 0);
      if (held) await schedule.lead();
      else schedule.follow();
    },
    log,
    listen: {
      channels: {
        // A change through another control's API: read the schedule now, not at the next periodic read.
        [FLEET_CHANGED_CHANNEL]: (from) => {
          if (from === self) return; // its own change, already being read
          log.info({}, 'the fleet changed through another control: reading the schedule again');
          schedule.reloadSoon();
          gauges.changed();
        },
        // A run moved a test's revision, whichever control ingested it: the test's next jobs carry it.
        // A notice not in the trigger's shape (anyone on the database may send one) moves nothing.
        [REVISION_MOVED_CHANNEL]: (payload) => {
          const moved = parseRevisionMoved(payload);
          if (moved) schedule.noteRun(moved.testId, moved.region, moved.revision);
        },
      },
      // Listening again after the lease session was lost: moves told meanwhile were not heard.
      onListening: () => {
        if (lease.held) schedule.reloadSoon();
      },
    },
  });
  metrics.leader.set(0);
  // The one scheduling may be another control: it listens (lease.ts). Best effort: it also compares
  // the fleet's fingerprint every 30 s (schedule.ts).
  const tellOtherControls = () =>
    void tellFleetChanged(db, self).catch((err) =>
      log.warn({ err: (err as Error).message }, 'could not tell the other controls of a fleet change'),
    );
  const apply = async (definition: FleetDefinition, applyOpts: ApplyOptions = {}) => {
    const summary = await applyAndAdopt({ db, bus, log, fleet, schedule }, definition, applyOpts);
    if (!summary.dryRun) {
      tellOtherControls();
      gauges.changed();
    }
    return summary;
  };

  await sealCredentials(store, log);
  await bus.ensure(fleet.regions);
  if (opts.fleet) await apply(opts.fleet, opts.agentsStarting ? { agentsStarting: opts.agentsStarting } : {});
  else await schedule.reload();

  let stopping = false;
  const router = createApi({
    db,
    apply,
    regions: () => fleet.regions,
    policy: () => fleet.policy,
    probePolicy: () => fleet.probePolicy,
    changed: (change) => {
      if (change) tellFleetChange(log, { ...change, by: 'api' });
      schedule.reloadSoon();
      tellOtherControls();
      gauges.changed();
    },
    metricsText: async () => ({ text: await metrics.registry.exposition(), contentType: metrics.registry.contentType }),
    ready: () => !stopping,
    scheduling: () => lease.held,
  });
  // The monitor's own MCP server at /mcp, calling these same routes (mcp/endpoint.ts). Its call
  // counter starts with every series at 0, so rate() and absent() read it before the first call.
  for (const tool of MONITOR_TOOLS)
    for (const outcome of tool.limited ? ['ok', 'error', 'rate_limited'] : ['ok', 'error'])
      metrics.mcpToolCalls.inc({ tool: tool.name, outcome }, 0);
  const mcp = mcpEndpoint({
    router,
    auth,
    limiter: new DetectionLimiter(opts.mcpDetectionLimits),
    log,
    onCall: (tool, outcome) => metrics.mcpToolCalls.inc({ tool, outcome }),
  });
  router.mount(MCP_PATH, mcp.handle);
  const api = await serveApi({
    router,
    auth,
    allowedHosts: opts.allowedHosts ?? [],
    host,
    port: opts.port ?? 7070,
    log,
  });
  // Listening first: a port in use fails the start before ingest, heartbeats or pruning begin.
  const ingest = startIngest({
    bus,
    store: {
      recordRuns: async (inputs) => {
        const stats = { quiet: 0, slow: 0, fallback: false };
        const answers = await recordRuns(db, inputs, stats);
        if (stats.fallback) metrics.ingestBatchFallbacks.inc();
        return answers;
      },
      recordDetection: (input) => recordDetection(db, input),
    },
    metrics,
    concurrency: opts.ingestConcurrency,
    regions: () => fleet.regions,
    onRun: (testId, region, revision) => schedule.noteRun(testId, region, revision),
    onMoved: (serverId) => gauges.moved([serverId]),
    log,
  });
  const heartbeats = recordHeartbeats(bus, db, log);
  const pruning = startPruning(db, log, opts.retentionDays);
  // The lease last: a control that takes it schedules at once (a lone control, or PGlite's, before
  // startControl returns); one that does not keeps trying.
  await lease.start();

  return {
    url: api.url,
    routes: router.routes(),
    scheduler: schedule.scheduler,
    scheduling: () => lease.held,
    apply,
    reschedule: () => schedule.reload(),
    async stop() {
      stopping = true;
      schedule.stop();
      await lease.stop();
      pruning.stop();
      gauges.stop();
      await heartbeats.stop();
      await ingest.stop();
      await api.close();
      await mcp.close();
    },
  };
}

/**
 * How often to try for the scheduling lease: a quarter of the shortest interval, so a control takes
 * over from a dead one well within one interval; at least 250 ms, at most 5 s.
 */
export function leasePollMs(shortestIntervalMs: number | null): number {
  return Math.min(5_000, Math.max(250, Math.floor((shortestIntervalMs ?? 20_000) / 4)));
}

/**
 * Apply a fleet definition (or plan it: a dry run writes nothing, and regions, policy and the
 * schedule stay as they are), then run by it: its regions and policy, the schedule read again,
 * and the operator told what changed.
 */
async function applyAndAdopt(
  parts: { db: Db; bus: Bus; log: Logger; fleet: FleetInForce; schedule: Schedule },
  definition: FleetDefinition,
  applyOpts: ApplyOptions,
): Promise<ApplySummary> {
  const { db, bus, log, fleet, schedule } = parts;
  const summary = await applyFleet(db, definition, applyOpts);
  if (summary.dryRun) return summary;
  fleet.adopt(definition.regions, definition.policy);
  const { regions } = fleet;
  await bus.ensure(regions);
  await schedule.reload();
  const { created, revived, updated, retired, unchanged } = summary;
  log.info(
    { created, revived, updated, retired, unchanged: unchanged.length, regions },
    `fleet applied: ${created.length} created, ${revived.length} revived, ${updated.length} changed, ` +
      `${retired.length} retired, ${unchanged.length} unchanged; regions ${regions.join(', ')}`,
  );
  for (const [server, warnings] of Object.entries(summary.warnings))
    for (const warning of warnings) log.warn({ server }, `fleet applied: ${server}: ${warning}`);
  for (const server of created) tellFleetChange(log, { event: 'server_created', server, by: 'fleet' });
  for (const server of revived) tellFleetChange(log, { event: 'server_revived', server, by: 'fleet' });
  for (const server of retired) tellFleetChange(log, { event: 'server_retired', server, by: 'fleet' });
  return summary;
}

/**
 * At start, every stored credential goes under the current key (plaintext rows from before
 * encryption, rows sealed under MCP_FLEET_SECRET_KEY_PREVIOUS). Refuses to start when there is no
 * key but stored credentials (SecretKeyError), or when an active server's credentials cannot be
 * unsealed (CredentialsUnreadableError): a wrong key would otherwise fail every probe quietly.
 */
async function sealCredentials(store: Store, log: Logger): Promise<void> {
  const report = await sealStoredCredentials(store.db);
  if (report.resealed.length)
    log.info(
      { servers: report.resealed.length, keyId: store.keyring?.id },
      'stored credentials sealed under the current key',
    );
  for (const u of report.unreadable.filter((u) => u.retired))
    log.warn({ server: u.name, reason: u.reason }, 'a retired server keeps credentials no key at hand opens');
  // Named credentials too (issue 18): one that no key opens is reported, not fatal — it is refused
  // with that reason when used, and no server's probes depend on it (servers keep their own copy).
  const named = await resealCredentials(store.db);
  if (named.resealed.length)
    log.info(
      { credentials: named.resealed.length, keyId: store.keyring?.id },
      'named credentials sealed under the current key',
    );
  for (const u of named.unreadable)
    log.warn(
      { credential: u.name, reason: u.reason },
      'a named credential no key at hand opens: delete it or set the key it was sealed with',
    );
  const active = report.unreadable.filter((u) => !u.retired);
  if (active.length)
    throw new CredentialsUnreadableError(
      `the stored credentials of ${active.length} server(s) cannot be opened with the keys at hand ` +
        `(current key ${store.keyring?.id}): ${active.map((u) => u.reason).join('; ')}. ` +
        'Set MCP_FLEET_SECRET_KEY to the key they were sealed with, or the old one in MCP_FLEET_SECRET_KEY_PREVIOUS.',
    );
}
