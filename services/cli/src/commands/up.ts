import { type Agent, startAgent, startTracing, tracesUrl } from '@mcp-fleet/agent';
import { type Bus, busOptionsFromEnv, createLogger, openBus } from '@mcp-fleet/bus';
import {
  type Control,
  type FleetDefinition,
  FleetFileError,
  loadFleetFile,
  parseFleet,
  startControl,
} from '@mcp-fleet/control';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { openStore, type Store } from '@mcp-fleet/store';
import type { Dashboard } from '@mcp-fleet/web';
import { parse, positiveInt, retentionDays } from '../args';
import { demoDrift, demoFleetYaml } from '../demo-fleet';
import { columns } from '../table';
import { EXIT, UsageError } from '../usage';
import { untilSignal } from './sim';

const OPTIONS = {
  fleet: { type: 'string' },
  'demo-interval': { type: 'string' },
  'no-dashboard': { type: 'boolean' },
} as const;

/**
 * `up` (= `npm start`): the whole monitor on one machine. Migrates the database, starts control
 * and one agent per region, and without a fleet file runs the demo fleet with scripted drift.
 * DATABASE_URL and NATS_URL select Postgres and NATS; unset, embedded defaults serve.
 */
export async function upCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const env = process.env;
  const log = createLogger('mcp-fleet');
  const apiPort = positiveInt(env.MCP_FLEET_API_PORT, 'MCP_FLEET_API_PORT', 7070, 65_535);
  const agentPort = positiveInt(env.MCP_FLEET_AGENT_PORT, 'MCP_FLEET_AGENT_PORT', 7071, 65_535);
  const webPort = positiveInt(env.PORT, 'PORT', 3000, 65_535);

  let sim: Sim | undefined;
  let fleet: FleetDefinition;
  const running: { store?: Store; bus?: Bus; control?: Control; agents: Agent[]; dashboard?: Dashboard } = {
    agents: [],
  };
  try {
    if (values.fleet) {
      fleet = await loadFleetFile(values.fleet);
    } else {
      sim = await startSim({ script: demoDrift() });
      const interval = positiveInt(values['demo-interval'], '--demo-interval', 15, 3_600);
      fleet = parseFleet(demoFleetYaml(sim, interval), 'the demo fleet');
    }
    const store = await openStore({ databaseUrl: env.DATABASE_URL, log: (m) => log.info(m) });
    running.store = store;
    await store.migrate();
    const bus = await openBus({ ...busOptionsFromEnv(env), log });
    running.bus = bus;
    const tracing = startTracing({ serviceName: 'mcp-fleet' });
    running.control = await startControl({ store, bus, log, fleet, port: apiPort, retentionDays: retentionDays() });
    for (const [i, region] of fleet.regions.entries())
      running.agents.push(await startAgent({ bus, region, metricsPort: agentPort + i, log }));
    if (!values['no-dashboard']) {
      // Loaded only here: Next.js takes seconds to import, which no other verb should pay.
      const { startDashboard } = await import('@mcp-fleet/web');
      running.dashboard = await startDashboard({
        db: store.db,
        apiUrl: running.control.url,
        port: webPort,
        host: env.MCP_FLEET_WEB_HOST,
        log: (m) => log.info(m),
      });
    }

    const rows = [
      ['Dashboard', running.dashboard?.url ?? 'off (--no-dashboard)'],
      ['API', `${running.control.url}/api/servers`],
      ['Control metrics', `${running.control.url}/metrics`],
      ...running.agents.map((a) => [`Agent ${a.region}`, a.metricsUrl ?? '-']),
      ['Database', `${store.kind} (${store.where})`],
      ['Queue', bus.kind === 'nats' ? `NATS JetStream (${env.NATS_URL})` : 'in-process'],
      ['Traces', tracing.enabled ? `OTLP to ${tracesUrl({})}` : 'off (set OTEL_EXPORTER_OTLP_ENDPOINT)'],
      [
        'Fleet',
        values.fleet
          ? `${values.fleet}: ${fleet.servers.length} servers`
          : `demo: ${fleet.servers.length} simulated servers with scripted drift`,
      ],
    ];
    out(`mcp-fleet is up.\n\n${columns(rows)}\n\nCtrl-C stops everything.`);

    // SIGHUP re-applies the fleet file.
    const reload = () => {
      if (!values.fleet) return;
      loadFleetFile(values.fleet)
        .then((f) => running.control?.apply(f))
        .catch((err) => log.error({ err: (err as Error).message }, 'fleet file not applied'));
    };
    process.on('SIGHUP', reload);
    await untilSignal();
    process.off('SIGHUP', reload);
    out('Stopping…');
    await tracing.shutdown();
    return EXIT.ok;
  } catch (err) {
    if (err instanceof FleetFileError) {
      process.stderr.write(`mcp-fleet: ${err.message}\n`);
      return EXIT.usage;
    }
    throw err;
  } finally {
    await running.dashboard?.close();
    await Promise.allSettled(running.agents.map((a) => a.stop()));
    await running.control?.stop();
    await running.bus?.close();
    await running.store?.close();
    await sim?.close();
  }
}
