import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { startTracing } from '@mcp-fleet/agent';
import { CredentialsUnreadableError, SecretKeyError } from '@mcp-fleet/auth';
import { FleetFileError, loadFleetFile, parseEnv, parseFleet, secretEnv, upEnv } from '@mcp-fleet/config';
import { API_AUTH_HOW, AuthConfigError, assertSafeBind } from '@mcp-fleet/control';
import { type Sim, startSim, writeStdioLauncher } from '@mcp-fleet/fleet-sim';
import { configureLogs, createLogger } from '@mcp-fleet/log';
import { type Monitor, startMonitor } from '@mcp-fleet/monitor';
import { describeRanges } from '@mcp-fleet/probe';
import { openStore, type Store } from '@mcp-fleet/store';
import { webAuthFrom } from '@mcp-fleet/web/auth';
import { parse, positiveInt } from '../args';
import { embeddedDataDir } from '../data-dir';
import {
  DEMO_CYCLE_MS,
  DEMO_MONITOR_NAME,
  DEMO_REGIONS,
  DEMO_SOURCE_ADDRESSES,
  demoEpoch,
  demoFleetYaml,
  demoMonitor,
  demoStateAt,
  playDemoDrift,
} from '../demo-fleet';
import { assertFree, inUse, type Listener } from '../in-use';
import { plural } from '../plural';
import { probeFloor } from '../probe-floor';
import { untilSignal } from '../signals';
import { sourceAddressesFlag } from '../source-address';
import { stdioAgentOptions } from '../stdio-agents';
import { storeOptions } from '../store-options';
import { columns } from '../table';
import { EXIT, UsageError } from '../usage';
import { authSummary, checkedApiAuth } from './control';

const OPTIONS = {
  fleet: { type: 'string' },
  'demo-interval': { type: 'string' },
  // Tests only: the demo's cycle in seconds (default 600), its script scaled to it.
  'demo-cycle': { type: 'string' },
  'no-dashboard': { type: 'boolean' },
  'data-dir': { type: 'string' },
  // Where the agents' probes connect from: one address, or region=ip pairs (source-address.ts).
  'source-address': { type: 'string' },
} as const;

/** The demo sim's request log: nothing reads it under `up`, so a little will do. */
const DEMO_KEEP_REQUESTS = 100;

/**
 * `up` (= `npm start`): the whole monitor on one machine. Migrates the database, starts control
 * and one agent per region, and without a fleet file runs the demo fleet with scripted drift.
 * DATABASE_URL and NATS_URL select Postgres and NATS; unset, embedded defaults serve.
 */
export async function upCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  // The environment, parsed once (secrets may come from files: `<VAR>_FILE`, mounted secrets).
  const settings = parseEnv(upEnv, process.env);
  configureLogs(settings.log);
  const log = createLogger('mcp-fleet');
  const { port: apiPort, host: apiHost } = settings.api;
  const agentPort = settings.agentPort;
  const { port: webPort, host: webHost } = settings.web;
  // Who may use the API and the dashboard, checked before anything starts: a bad token, a short
  // password or an open listener beyond loopback is a usage error.
  const apiAuth = checkedApiAuth(settings.auth);
  let webAuthOn = false;
  const { allowedHosts, allowUnauthenticated } = settings.exposure;
  try {
    assertSafeBind({
      what: "control's API",
      host: apiHost,
      authEnabled: apiAuth.enabled,
      allowUnauthenticated,
      how: API_AUTH_HOW,
    });
    if (!values['no-dashboard']) {
      webAuthOn = webAuthFrom(settings.signIn, allowedHosts).enabled;
      assertSafeBind({
        what: 'the dashboard',
        host: webHost,
        authEnabled: webAuthOn,
        allowUnauthenticated,
        how: 'Set MCP_FLEET_WEB_PASSWORD (or API tokens, which also sign in)',
      });
    }
  } catch (err) {
    if (err instanceof AuthConfigError) throw new UsageError(err.message);
    throw err;
  }
  // The dashboard changes the fleet through control with an admin token: its own, or the first one.
  const dashboardToken = settings.dashboardToken;
  // A fleet file's `${NAME}` comes from up's environment, mounted secrets included.
  const env = secretEnv(process.env);

  const dataDir = embeddedDataDir(values['data-dir'], settings.database.url);
  const interval = positiveInt(values['demo-interval'], '--demo-interval', 15, 3_600);

  let sim: Sim | undefined;
  // The demo's stdio launcher's directory when it is a temporary one (removed at stop).
  let launcherTemp: string | undefined;
  let stopDrift: (() => void) | undefined;
  let demoStartedAt: Date | null = null;
  let listeners: Listener[] = [];
  let store: Store | undefined;
  let monitor: Monitor | undefined;
  try {
    // `up` reads its own fleet file: `${NAME}` comes from its environment.
    const fileFleet = values.fleet ? await loadFleetFile(values.fleet, env) : undefined;
    // Checked before anything starts, against the regions whose agents it runs.
    // The demo's regions probe from 127.0.0.1 and 127.0.0.2 (geo tells them apart) where the host has both.
    const sources =
      values['source-address'] === undefined && !fileFleet && (await canBind(DEMO_SOURCE_ADDRESSES['us-east']!))
        ? { sourceAddresses: { ...DEMO_SOURCE_ADDRESSES } }
        : sourceAddressesFlag(values['source-address'], fileFleet?.regions ?? DEMO_REGIONS);
    const demoCycleMs = positiveInt(values['demo-cycle'], '--demo-cycle', DEMO_CYCLE_MS / 1000, 86_400) * 1000;
    // Before anything starts (the simulated fleet, the database, a port): another `up` on this
    // data directory, or a port in use, is said with what to set, and nothing is left behind.
    listeners = [
      {
        what: "control's API",
        host: apiHost,
        port: apiPort,
        setting: 'MCP_FLEET_API_PORT',
        hostSetting: 'MCP_FLEET_API_HOST',
      },
      ...(fileFleet?.regions ?? DEMO_REGIONS).map((region, i) => ({
        what: `agent ${region}'s /metrics`,
        host: '127.0.0.1',
        port: agentPort + i,
        setting: 'MCP_FLEET_AGENT_PORT (the first of one port per region)',
      })),
      ...(values['no-dashboard']
        ? []
        : [
            { what: 'the dashboard', host: webHost, port: webPort, setting: 'PORT', hostSetting: 'MCP_FLEET_WEB_HOST' },
          ]),
    ];
    await assertFree({ dataDir, listeners });
    store = await openStore(storeOptions(settings, dataDir, (m) => log.info(m)));
    await store.migrate();
    if (!fileFleet) {
      // The demo resumes its script where its clock (kept by the database) says it is: see demo-fleet.ts.
      demoStartedAt = await demoEpoch(store.db);
      const elapsed = demoStartedAt ? Date.now() - demoStartedAt.getTime() : 0;
      // Nothing here reads the sim's request log: keep only a little of it (it would grow all day).
      sim = await startSim({ script: demoStateAt(elapsed, demoCycleMs), keepRequests: DEMO_KEEP_REQUESTS });
    }
    // The demo's stdio server: a launcher its agents allowlist (stdio-launcher.ts says why not `node`),
    // in the data directory (the same path at every start), or a private temporary one with Postgres.
    let stdioLauncher: string | undefined;
    if (!fileFleet) {
      let dir: string;
      if (dataDir) {
        dir = resolve(dirname(dataDir), 'demo-stdio');
        mkdirSync(dir, { recursive: true, mode: 0o700 });
      } else dir = launcherTemp = mkdtempSync(join(tmpdir(), 'mcp-fleet-demo-stdio-'));
      stdioLauncher = writeStdioLauncher(dir, 'v2');
    }
    // The demo watches the monitor too: its own MCP endpoint, control's /mcp (issue 18).
    const monitorTarget = fileFleet
      ? undefined
      : demoMonitor({ host: apiHost, port: apiPort }, settings.auth.tokens, store.keyring !== null);
    if (typeof monitorTarget === 'string') log.warn(`the demo does not watch the monitor's own /mcp: ${monitorTarget}`);
    const fleet =
      fileFleet ??
      parseFleet(
        demoFleetYaml(sim!, interval, typeof monitorTarget === 'object' ? monitorTarget : undefined, stdioLauncher),
        'the demo fleet',
      );
    // One machine, one operator: the probe floor of control and the agents is MCP_FLEET_PROBE_*
    // where set, else the fleet given at start (the demo's 127.0.0.0/8). A fleet applied later
    // over the API or on SIGHUP narrows it, never widens it.
    const floor = probeFloor(settings.probeFloor, {}, fleet.policy);
    const stdioAgents = stdioAgentOptions(settings.stdio);
    if (stdioLauncher) stdioAgents.stdioCommands = [...(stdioAgents.stdioCommands ?? []), stdioLauncher];
    const tracing = await startTracing({ serviceName: 'mcp-fleet', url: settings.tracing.url });
    if (!values['no-dashboard'] && apiAuth.enabled && !dashboardToken)
      log.warn('no admin token for the dashboard (MCP_FLEET_API_TOKEN): it shows the fleet but cannot change it');
    monitor = await startMonitor({
      log,
      store,
      bus: { open: settings.nats },
      control: {
        fleet,
        port: apiPort,
        host: apiHost,
        auth: apiAuth,
        allowUnauthenticated,
        allowedHosts,
        retentionDays: settings.retentionDays,
        mcpDetectionLimits: settings.mcpDetectionLimits,
        probeFloor: floor,
      },
      // Its agents start only the stdio programs MCP_FLEET_STDIO_COMMANDS names (default none), and
      // the demo's launcher.
      agents: { metricsPort: agentPort, probeFloor: floor, ...sources, ...stdioAgents },
      // Loaded only when on: Next.js takes seconds to import, which no other verb should pay.
      ...(values['no-dashboard']
        ? {}
        : {
            dashboard: {
              load: () => import('@mcp-fleet/web'),
              apiToken: dashboardToken,
              signIn: settings.signIn,
              allowedHosts,
              traceUrl: settings.traceUrl,
              port: webPort,
              host: webHost,
              log: (m: string) => log.info(m),
            },
          }),
    });
    // On the first start the clock begins now, with the demo's servers just created.
    if (sim) stopDrift = playDemoDrift(sim, (await demoEpoch(store.db)) ?? new Date(), demoCycleMs);
    const { addresses, bus } = monitor;

    const rows = [
      ['Dashboard', addresses.dashboard ?? 'off (--no-dashboard)'],
      ['API', `${addresses.api}/api/servers`],
      ['Control metrics', `${addresses.api}/metrics`],
      ...addresses.agents.map((a) => [`Agent ${a.region}`, a.metrics ?? '-']),
      ['Auth', `${authSummary(apiAuth)}; dashboard sign-in ${webAuthOn ? 'on' : 'off'}`],
      ['Probe floor', describeRanges(floor)],
      ['Database', `${store.kind} (${store.where})`],
      [
        'Credentials',
        store.keyring
          ? `sealed at rest (AES-256-GCM, key ${store.keyring.id} from ${store.keyring.source})`
          : 'none can be stored (set MCP_FLEET_SECRET_KEY)',
      ],
      ['Queue', bus.kind === 'nats' ? `NATS JetStream (${settings.nats.natsUrl})` : 'in-process'],
      ['Traces', tracing.enabled ? `OTLP to ${settings.tracing.url}` : 'off (set OTEL_EXPORTER_OTLP_ENDPOINT)'],
      [
        'Fleet',
        values.fleet
          ? `${values.fleet}: ${plural(fleet.servers.length, 'server')}`
          : `demo: ${plural(fleet.servers.filter((s) => s.name !== DEMO_MONITOR_NAME).length, 'simulated server')} with scripted drift${
              fleet.servers.some((s) => s.name === DEMO_MONITOR_NAME) ? ", and the monitor's own /mcp" : ''
            }${demoStartedAt ? `, resumed where its script is (the demo began ${demoStartedAt.toISOString()})` : ''}`,
      ],
    ];
    out(`mcp-fleet is up.\n\n${columns(rows)}\n\nCtrl-C stops everything.`);

    // SIGHUP re-applies the fleet file. The demo fleet is made here, not read from a file: there is
    // nothing to reload, and an operator who sent the signal is told so rather than left guessing.
    const reload = () => {
      if (!values.fleet) {
        log.warn(
          'SIGHUP ignored: the demo fleet is not read from a file (start with --fleet <file> to reload it on SIGHUP, or change the fleet with mcp-fleet apply)',
        );
        return;
      }
      log.info({ fleet: values.fleet }, 'SIGHUP: applying the fleet file again');
      loadFleetFile(values.fleet, env)
        .then((f) => monitor?.control.apply(f))
        .catch((err) => log.error({ err: (err as Error).message }, 'fleet file not applied'));
    };
    process.on('SIGHUP', reload);
    await untilSignal();
    process.off('SIGHUP', reload);
    out('Stopping…');
    await tracing.shutdown();
    return EXIT.ok;
  } catch (err) {
    // A bad fleet file, a missing or wrong secret key, a port or data directory in use: the
    // operator's to fix, and the message says how.
    const taken = inUse(err, listeners);
    if (taken) {
      process.stderr.write(`mcp-fleet: ${taken.message}\n`);
      return EXIT.usage;
    }
    if (err instanceof FleetFileError || err instanceof SecretKeyError || err instanceof CredentialsUnreadableError) {
      process.stderr.write(`mcp-fleet: ${err.message}\n`);
      return EXIT.usage;
    }
    throw err;
  } finally {
    await monitor?.stop();
    stopDrift?.();
    await store?.close();
    await sim?.close();
    if (launcherTemp) rmSync(launcherTemp, { recursive: true, force: true });
  }
}

/** Whether this host can send from `address` (127.0.0.2 is loopback on Linux, not on macOS by default). */
function canBind(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(0, address, () => server.close(() => resolve(true)));
  });
}
