// Which queue a process gets: NATS JetStream when natsUrl (NATS_URL: config's NATS settings) is
// set, the in-process queue otherwise (one-machine mode).
import type { Bus } from './bus';
import { createMemoryBus } from './memory';
import { connectNatsBus, type NatsBusOptions } from './nats';

export type OpenBusOptions = Omit<NatsBusOptions, 'servers'> & { natsUrl?: string };

export async function openBus(opts: OpenBusOptions = {}): Promise<Bus> {
  const { natsUrl, ...rest } = opts;
  if (natsUrl) return connectNatsBus({ ...rest, servers: natsUrl });
  return createMemoryBus(rest);
}
