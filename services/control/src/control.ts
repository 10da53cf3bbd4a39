// The control plane on one process: applies the fleet, schedules jobs, ingests results, records
// agents' heartbeats, prunes old runs, detections and silent agents, and serves the API and /metrics.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Bus, Logger, Subscription } from '@mcp-fleet/bus';
import type { FleetDefinition } from '@mcp-fleet/config';
import {
  describeRanges,
  isRevision,
  PUBLIC_ONLY,
  type Revision,
  revisionInfo,
  TargetPolicy,
  type TargetPolicyRanges,
} from '@mcp-fleet/probe';
import {
  CredentialsUnreadableError,
  DEFAULT_RUN_RETENTION_DAYS,
  listActiveTests,
  listAgents,
  pruneHistory,
  recordDetection,
  recordRun,
  retentionCutoffs,
  type Store,
  sealStoredCredentials,
  serversOverview,
  upsertAgentHeartbeat,
} from '@mcp-fleet/store';
import { requestRefusal } from '@mcp-fleet/store/request-guard';
import { createApi } from './api';
import { type ApplyOptions, type ApplySummary, applyFleet } from './apply';
import { API_AUTH_HOW, ApiAuth, assertSafeBind } from './auth';
import { tellFleetChange } from './events';
import type { RouteInfo } from './http';
import { startIngest } from './ingest';
import { createControlMetrics, type ServerState } from './metrics';
import { type ScheduleEntry, Scheduler } from './scheduler';

export interface ControlOptions {
  store: Store;
  bus: Bus;
  log: Logger;
  /** The fleet definition to apply at start; its regions and policy hold until the next apply. */
  fleet?: FleetDefinition | null;
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
  tickMs?: number;
  ingestConcurrency?: number;
  retentionDays?: number;
}

export interface Control {
  url: string;
  /** The API's routes and what each needs (read, admin, public, metrics). */
  routes: RouteInfo[];
  scheduler: Scheduler;
  apply(fleet: FleetDefinition, opts?: ApplyOptions): Promise<ApplySummary>;
  /** Reload the schedule from the database (after any change to the fleet). */
  reschedule(): Promise<void>;
  stop(): Promise<void>;
}

const RESCHEDULE_EVERY_MS = 30_000;
const PRUNE_EVERY_MS = 3_600_000;

export async function startControl(opts: ControlOptions): Promise<Control> {
  const { store, bus, log } = opts;
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
  const db = store.db;
  let regions = opts.fleet?.regions ?? opts.regions ?? ['local'];
  let ranges = opts.fleet?.policy ?? { allow: [], deny: [] };
  let policy = new TargetPolicy(ranges);
  // Control's own probes go where both its floor and the fleet's policy let them: a fleet applied
  // over the API cannot point them at control's own network.
  const floorRanges = opts.probeFloor ?? PUBLIC_ONLY;
  const floor = new TargetPolicy(floorRanges, { floor: true });
  let probePolicy = floor.narrow(ranges);
  log.info(
    { floor: floorRanges },
    `probe floor of control's own probes (detect, a pinned test's first run): ${describeRanges(floorRanges)}`,
  );
  const current = new Map<string, Revision>();
  const key = (testId: string, region: string) => `${testId}|${region}`;

  const metrics = createControlMetrics({
    poison: () => bus.stats().poison,
    serverStates: () => serverStates(store),
    agentsSeen: async () => {
      const byRegion = new Map<string, number>();
      for (const a of await listAgents(db)) if (!a.stale) byRegion.set(a.region, (byRegion.get(a.region) ?? 0) + 1);
      return [...byRegion].map(([region, count]) => ({ region, count }));
    },
  });

  const scheduler = new Scheduler({
    bus,
    currentRevision: (testId, region) => current.get(key(testId, region)) ?? null,
    policy: () => ranges,
    tickMs: opts.tickMs,
    onPublished: (job, lagMs, duplicate) => {
      metrics.jobs.inc({ kind: job.kind, result: duplicate ? 'duplicate' : 'published' });
      if (!duplicate) metrics.lag.observe(lagMs / 1000);
    },
    onError: (err, job) => {
      metrics.jobs.inc({ kind: job.kind, result: 'error' });
      log.warn(
        { jobId: job.jobId, err: (err as Error).message },
        'could not publish a job; will retry while its slot is fresh',
      );
    },
  });

  let rescheduling: Promise<void> | undefined;
  const unreadable = new Map<string, string>();
  const reschedule = async () => {
    const tests = await listActiveTests(db);
    const entries: ScheduleEntry[] = [];
    const detected = new Set<string>();
    for (const t of tests) {
      if (t.credentialsError) {
        // Probing without its credentials would only report auth_required: say why it is not probed, once.
        if (unreadable.get(t.serverId) !== t.credentialsError)
          log.error(
            { server: t.serverName, reason: t.credentialsError },
            'the server is not probed: its stored credentials cannot be opened',
          );
        unreadable.set(t.serverId, t.credentialsError);
        continue;
      }
      unreadable.delete(t.serverId);
      const testRegions = (t.regions ?? regions).filter((r) => regions.includes(r));
      for (const region of testRegions) {
        const cur = t.currentRevisions[region];
        if (isRevision(cur)) current.set(key(t.testId, region), cur);
        entries.push({
          kind: 'handshake',
          id: t.testId,
          region,
          serverId: t.serverId,
          serverName: t.serverName,
          testId: t.testId,
          url: t.target,
          headers: t.headers,
          revision: t.mode === 'newest' ? 'newest' : (t.pinnedRevision as Revision),
          intervalMs: t.intervalMs,
          timeoutMs: t.timeoutMs,
        });
        if (t.detectionIntervalMs && !detected.has(`${t.serverId}|${region}`)) {
          detected.add(`${t.serverId}|${region}`);
          entries.push({
            kind: 'detection',
            id: t.serverId,
            region,
            serverId: t.serverId,
            serverName: t.serverName,
            testId: null,
            url: t.target,
            headers: t.headers,
            revision: null,
            intervalMs: t.detectionIntervalMs,
            timeoutMs: Math.min(t.timeoutMs, 20_000),
          });
        }
      }
    }
    scheduler.setEntries(entries);
    metrics.entries.set(entries.length);
  };
  const rescheduleSoon = () => {
    rescheduling = (rescheduling ?? Promise.resolve())
      .then(reschedule)
      .catch((err) => log.error({ err: (err as Error).message }, 'could not load the schedule'));
  };

  const apply = async (fleet: FleetDefinition, applyOpts: ApplyOptions = {}) => {
    const summary = await applyFleet(db, fleet, applyOpts);
    // A dry run wrote nothing: regions, policy and the schedule stay as they are.
    if (summary.dryRun) return summary;
    regions = fleet.regions;
    ranges = fleet.policy;
    policy = new TargetPolicy(ranges);
    probePolicy = floor.narrow(ranges);
    await bus.ensure(regions);
    await reschedule();
    const { created, revived, updated, retired, unchanged } = summary;
    log.info(
      { created, revived, updated, retired, unchanged: unchanged.length, regions },
      `fleet applied: ${created.length} created, ${revived.length} revived, ${updated.length} changed, ` +
        `${retired.length} retired, ${unchanged.length} unchanged; regions ${regions.join(', ')}`,
    );
    for (const server of created) tellFleetChange(log, { event: 'server_created', server, by: 'fleet' });
    for (const server of revived) tellFleetChange(log, { event: 'server_revived', server, by: 'fleet' });
    for (const server of retired) tellFleetChange(log, { event: 'server_retired', server, by: 'fleet' });
    return summary;
  };

  await sealCredentials(store, log);
  await bus.ensure(regions);
  if (opts.fleet) await apply(opts.fleet);
  else await reschedule();

  let stopping = false;
  const router = createApi({
    db,
    apply,
    regions: () => regions,
    policy: () => policy,
    probePolicy: () => probePolicy,
    changed: (change) => {
      if (change) tellFleetChange(log, { ...change, by: 'api' });
      rescheduleSoon();
    },
    metricsText: async () => ({ text: await metrics.registry.metrics(), contentType: metrics.registry.contentType }),
    ready: () => !stopping,
  });
  // What a browser may ask, before the token (store's request-guard, the dashboard's rules too):
  // with auth off, only Host names that cannot be rebound (whatever the bind address); with auth
  // on or off, no write from another site's page.
  const guard = { authEnabled: auth.enabled, allowedHosts: opts.allowedHosts ?? [] };
  router.guard(
    (access, req) => {
      const refused = requestRefusal(req, guard);
      return refused ? { status: 403, message: `refused: ${refused}` } : auth.check(access, req.headers);
    },
    (refused) => log.warn(refused, 'API request refused'),
  );
  const http: HttpServer = createServer(
    (req, res) => void router.handle(req, res, (err) => log.error({ err: (err as Error).message }, 'API error')),
  );
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port ?? 7070, host, () => resolve());
  });
  // Listening first: a port in use fails the start before ingest, heartbeats or pruning begin.
  const ingest: Subscription = startIngest({
    bus,
    store: {
      recordRun: (input) => recordRun(db, input),
      recordDetection: (input) => recordDetection(db, input),
    },
    metrics,
    concurrency: opts.ingestConcurrency,
    regions: () => regions,
    onRun: (testId, region, revision) => current.set(key(testId, region), revision),
    log,
  });
  const heartbeats = bus.onHeartbeat((hb) => {
    upsertAgentHeartbeat(db, {
      id: hb.agent,
      region: hb.region,
      version: hb.version,
      inFlight: hb.inFlight,
      startedAt: new Date(hb.startedAt),
      at: new Date(hb.at),
    }).catch((err) => log.warn({ err: (err as Error).message }, 'could not record a heartbeat'));
  });

  // Runs and detections by when control received them, agents by when control last heard them (store's retention.ts).
  const retentionDays = opts.retentionDays ?? DEFAULT_RUN_RETENTION_DAYS;
  const prune = () =>
    pruneHistory(db, retentionCutoffs(retentionDays))
      .then(
        (pruned) =>
          (pruned.runs > 0 || pruned.detections > 0 || pruned.agents > 0) &&
          log.info({ ...pruned, retentionDays }, 'pruned old runs, detections and silent agents'),
      )
      .catch((err) => log.warn({ err: (err as Error).message }, 'could not prune old history'));
  const timers = [setInterval(rescheduleSoon, RESCHEDULE_EVERY_MS), setInterval(prune, PRUNE_EVERY_MS)];
  for (const t of timers) t.unref();
  void prune();

  const address = http.address() as AddressInfo;
  scheduler.start();

  return {
    url: `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`,
    routes: router.routes(),
    scheduler,
    apply,
    reschedule,
    async stop() {
      stopping = true;
      scheduler.stop();
      for (const t of timers) clearInterval(t);
      await heartbeats.stop();
      await ingest.stop();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}

/**
 * At start, every stored credential goes under the current key (plaintext rows from before
 * encryption, rows sealed under MCP_FLEET_SECRET_KEY_PREVIOUS). Refuses to start when there is no
 * key but stored credentials (SecretKeyError), or when an active server's credentials cannot be
 * opened (CredentialsUnreadableError): a wrong key would otherwise fail every probe quietly.
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
  const active = report.unreadable.filter((u) => !u.retired);
  if (active.length)
    throw new CredentialsUnreadableError(
      `the stored credentials of ${active.length} server(s) cannot be opened with the keys at hand ` +
        `(current key ${store.keyring?.id}): ${active.map((u) => u.reason).join('; ')}. ` +
        'Set MCP_FLEET_SECRET_KEY to the key they were sealed with, or the old one in MCP_FLEET_SECRET_KEY_PREVIOUS.',
    );
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
