// Which queue a process gets: NATS JetStream when NATS_URL (natsUrl) is set, the in-process
// queue otherwise (one-machine mode).
import type { Bus } from './bus';
import { createMemoryBus } from './memory';
import { connectNatsBus, type NatsBusOptions } from './nats';

export type OpenBusOptions = Omit<NatsBusOptions, 'servers'> & { natsUrl?: string };

export async function openBus(opts: OpenBusOptions = {}): Promise<Bus> {
  const { natsUrl, ...rest } = opts;
  if (natsUrl) return connectNatsBus({ ...rest, servers: natsUrl });
  return createMemoryBus(rest);
}

/**
 * The bus options the environment gives: NATS_URL, NATS_USER / NATS_PASSWORD, NATS_TOKEN,
 * NATS_CREDS (a .creds file), NATS_CA / NATS_CERT / NATS_KEY (TLS files), MCP_FLEET_NATS_NAMESPACE
 * (subject and stream prefix, default mcpfleet). Empty values count as unset.
 */
export function busOptionsFromEnv(env: Record<string, string | undefined> = process.env): OpenBusOptions {
  const get = (name: string) => env[name]?.trim() || undefined;
  const opts: OpenBusOptions = {};
  const set = <K extends keyof OpenBusOptions>(key: K, value: OpenBusOptions[K] | undefined) => {
    if (value !== undefined) opts[key] = value;
  };
  set('natsUrl', get('NATS_URL'));
  set('user', get('NATS_USER'));
  set('pass', get('NATS_PASSWORD'));
  set('token', get('NATS_TOKEN'));
  set('credsFile', get('NATS_CREDS'));
  // Several fleets (or test runs) can share one NATS server, each under its own subject prefix.
  set('namespace', get('MCP_FLEET_NATS_NAMESPACE'));
  const tls = { caFile: get('NATS_CA'), certFile: get('NATS_CERT'), keyFile: get('NATS_KEY') };
  if (tls.caFile || tls.certFile || tls.keyFile) {
    opts.tls = Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined));
  }
  return opts;
}
