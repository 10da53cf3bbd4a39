import { CredentialsUnreadableError, SecretKeyError } from '@mcp-fleet/auth';
import { openBus } from '@mcp-fleet/bus';
import {
  type ApiAuthSettings,
  controlEnv,
  FleetFileError,
  loadFleetFile,
  parseEnv,
  secretEnv,
} from '@mcp-fleet/config';
import { API_AUTH_HOW, ApiAuth, AuthConfigError, assertSafeBind, startControl } from '@mcp-fleet/control';
import { configureLogs, createLogger } from '@mcp-fleet/log';
import { isLoopbackAddress } from '@mcp-fleet/probe';
import { openStore } from '@mcp-fleet/store';
import { parse } from '../args';
import { embeddedDataDir } from '../data-dir';
import { assertFree, InUseError, inUse, type Listener } from '../in-use';
import { probeFloor } from '../probe-floor';
import { untilSignal } from '../signals';
import { storeOptions } from '../store-options';
import { EXIT, UsageError } from '../usage';

const OPTIONS = { fleet: { type: 'string' }, host: { type: 'string' }, 'data-dir': { type: 'string' } } as const;

/** `control [--fleet file]`: the control plane on its own (agents run elsewhere, over NATS). */
export async function controlCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  // The environment, parsed once (secrets may come from files: MCP_FLEET_ADMIN_TOKEN_FILE, NATS_PASSWORD_FILE, …).
  const settings = parseEnv(controlEnv, process.env);
  configureLogs(settings.log);
  const host = values.host ?? settings.api.host;
  // Tokens and the address are checked before anything starts: a bad token or an open API beyond
  // loopback is a usage error, not a half-started control.
  const auth = checkedApiAuth(settings.auth);
  // Control's own probes (detect, a pinned test's first run) obey a floor of its own, as agents do.
  const floor = probeFloor(settings.probeFloor);
  const { allowedHosts, allowUnauthenticated } = settings.exposure;
  try {
    assertSafeBind({ what: "control's API", host, authEnabled: auth.enabled, allowUnauthenticated, how: API_AUTH_HOW });
  } catch (err) {
    if (err instanceof AuthConfigError) throw new UsageError(err.message);
    throw err;
  }
  const port = settings.api.port;
  const listeners: Listener[] = [
    { what: "control's API", host, port, setting: 'MCP_FLEET_API_PORT', hostSetting: '--host or MCP_FLEET_API_HOST' },
  ];
  const dataDir = embeddedDataDir(values['data-dir'], settings.database.url);
  // A fleet file's `${NAME}` comes from control's environment, mounted secrets included.
  const env = secretEnv(process.env);
  const log = createLogger('mcp-fleet-control');
  let fleet = null;
  try {
    // Control reads its own fleet file: `${NAME}` comes from control's environment.
    if (values.fleet) fleet = await loadFleetFile(values.fleet, env);
    // Before the database is opened or migrated: its port, and the embedded directory, must be free.
    await assertFree({ dataDir, listeners });
  } catch (err) {
    const said = inUse(err, listeners) ?? (err instanceof FleetFileError ? err : undefined);
    if (!said) throw err;
    process.stderr.write(`mcp-fleet: ${said.message}\n`);
    return EXIT.usage;
  }
  // The secret key (MCP_FLEET_SECRET_KEY, …) and Postgres TLS (PGSSLMODE, DATABASE_CA, …) come from the environment too.
  const store = await openStore(storeOptions(settings, dataDir, (m) => log.info(m))).catch((err) =>
    configError(inUse(err) ?? err),
  );
  if (!store) return EXIT.usage;
  await store.migrate();
  const busOptions = settings.nats;
  if (!busOptions.natsUrl) log.warn('NATS_URL is unset: jobs stay in this process and no separate agent will see them');
  else if (!busOptions.tls && !natsLooksLocalOrTls(busOptions.natsUrl))
    log.warn(
      "NATS_URL is not tls:// and NATS_CA is unset: jobs carry servers' credentials to the agents, so use TLS to a NATS that is not on this machine",
    );
  const bus = await openBus({ ...busOptions, log });
  const control = await startControl({
    store,
    bus,
    log,
    fleet,
    regions: settings.regions,
    port,
    host,
    auth,
    allowUnauthenticated,
    allowedHosts,
    retentionDays: settings.retentionDays,
    mcpDetectionLimits: settings.mcpDetectionLimits,
    probeFloor: floor,
  }).catch((err) => configError(inUse(err, listeners) ?? err));
  if (!control) {
    await bus.close();
    await store.close();
    return EXIT.usage;
  }
  out(
    `control at ${control.url} (API /api, metrics /metrics); database ${store.kind} (${store.where}); ${authSummary(auth)}.`,
  );
  // SIGHUP re-applies the fleet file; without one the fleet lives in the database alone, and the log says so.
  const reload = () => {
    if (!values.fleet) {
      log.warn(
        'SIGHUP ignored: control was started without --fleet, so there is no file to reload (use mcp-fleet apply)',
      );
      return;
    }
    log.info({ fleet: values.fleet }, 'SIGHUP: applying the fleet file again');
    loadFleetFile(values.fleet, env)
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

/** Every NATS URL is tls:// or on loopback (a TLS-only server upgrades nats:// too, but cannot be told from here). */
function natsLooksLocalOrTls(urls: string): boolean {
  return urls.split(',').every((raw) => {
    const url = raw.trim();
    if (/^tls:\/\//i.test(url)) return true;
    const host = url
      .replace(/^[a-z]+:\/\//i, '')
      .replace(/^[^@]*@/, '')
      .replace(/:\d+$/, '')
      .replace(/^\[|\]$/g, '');
    return host === 'localhost' || isLoopbackAddress(host);
  });
}

/** A missing or wrong secret key, a port or directory in use: a clear line and exit code 2, as a bad fleet file gets. */
function configError(err: unknown): undefined {
  if (err instanceof SecretKeyError || err instanceof CredentialsUnreadableError || err instanceof InUseError) {
    process.stderr.write(`mcp-fleet: ${err.message}\n`);
    return undefined;
  }
  throw err;
}

/** Control's API auth from its tokens (config checked each); a clash is a usage error naming both, never a value. */
export function checkedApiAuth(settings: ApiAuthSettings): ApiAuth {
  try {
    return new ApiAuth(settings);
  } catch (err) {
    if (err instanceof AuthConfigError) throw new UsageError(err.message);
    throw err;
  }
}

/** `API tokens: 1 admin, 2 read; /metrics open` — counts only, never a token. */
export function authSummary(auth: ApiAuth): string {
  const metrics = auth.metricsProtected ? 'needs its token' : 'open';
  if (!auth.enabled) return `API auth off (no tokens); /metrics ${metrics}`;
  return `API tokens: ${auth.counts.admin} admin, ${auth.counts.read} read; /metrics ${metrics}`;
}
