import { busOptionsFromEnv, createLogger, openBus } from '@mcp-fleet/bus';
import { FleetFileError, loadFleetFile, startControl } from '@mcp-fleet/control';
import { openStore } from '@mcp-fleet/store';
import { parse, positiveInt, retentionDays } from '../args';
import { EXIT, UsageError } from '../usage';
import { untilSignal } from './sim';

const OPTIONS = { fleet: { type: 'string' }, host: { type: 'string' } } as const;

/** `control [--fleet file]`: the control plane on its own (agents run elsewhere, over NATS). */
export async function controlCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const env = process.env;
  const log = createLogger('mcp-fleet-control');
  let fleet = null;
  try {
    if (values.fleet) fleet = await loadFleetFile(values.fleet);
  } catch (err) {
    if (err instanceof FleetFileError) {
      process.stderr.write(`mcp-fleet: ${err.message}\n`);
      return EXIT.usage;
    }
    throw err;
  }
  const store = await openStore({ databaseUrl: env.DATABASE_URL, log: (m) => log.info(m) });
  await store.migrate();
  const busOptions = busOptionsFromEnv(env);
  if (!busOptions.natsUrl) log.warn('NATS_URL is unset: jobs stay in this process and no separate agent will see them');
  const bus = await openBus({ ...busOptions, log });
  const control = await startControl({
    store,
    bus,
    log,
    fleet,
    regions: env.MCP_FLEET_REGIONS?.split(',')
      .map((r) => r.trim())
      .filter(Boolean),
    port: positiveInt(env.MCP_FLEET_API_PORT, 'MCP_FLEET_API_PORT', 7070, 65_535),
    host: values.host ?? env.MCP_FLEET_API_HOST ?? '127.0.0.1',
    retentionDays: retentionDays(),
  });
  out(`control at ${control.url} (API /api, metrics /metrics); database ${store.kind} (${store.where}).`);
  const reload = () => {
    if (!values.fleet) return;
    loadFleetFile(values.fleet)
      .then((f) => control.apply(f))
      .catch((err) => log.error({ err: (err as Error).message }, 'fleet file not applied'));
  };
  process.on('SIGHUP', reload);
  await untilSignal();
  process.off('SIGHUP', reload);
  await control.stop();
  await bus.close();
  await store.close();
  return EXIT.ok;
}
