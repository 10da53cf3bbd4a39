// A real control for the API's tests: an embedded store (PGlite in a temporary directory, with the
// test keyring when asked), the in-process bus, a fleet of one region whose policy allows loopback,
// and the API on a free port with an admin and a read token. More controls on the same store and
// bus (another probe floor, other limits) come from `start`; `close` stops them all.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryBus } from '@mcp-fleet/bus';
import { createLogger } from '@mcp-fleet/log';
import { openStore, type Store } from '@mcp-fleet/store';
import { LOOPBACK_FLOOR, testKeyring } from '@mcp-fleet/testkit';
import { ApiAuth, type Control, type ControlOptions, parseFleet, startControl } from '../src';

export const ADMIN = 'admin-token-for-control-tests-0123456789abcdef';
export const READ = 'read-token-for-control-tests-0123456789abcdef01';
export const TOKENS = new ApiAuth({
  tokens: [
    { scope: 'admin', token: ADMIN },
    { scope: 'read', token: READ },
  ],
});
const FLEET = 'regions: [eu-west]\nservers: []\npolicy: { allow: ["127.0.0.0/8"] }\n';

type Extra = Partial<Omit<ControlOptions, 'store' | 'bus' | 'log'>>;

export interface ControlFixture {
  control: Control;
  store: Store;
  bus: ReturnType<typeof createMemoryBus>;
  /** Another control on the same store and bus: the fixture's defaults, then `extra`. */
  start(extra?: Extra): Promise<Control>;
  close(): Promise<void>;
}

export async function controlFixture(
  name: string,
  opts: { keyring?: boolean; fleet?: string; control?: Extra } = {},
): Promise<ControlFixture> {
  const log = createLogger('test', 'silent');
  const dir = mkdtempSync(join(tmpdir(), `mcpfleet-${name}-`));
  const store = await openStore({ dataDir: join(dir, 'pgdata'), ...(opts.keyring ? { keyring: testKeyring() } : {}) });
  await store.migrate();
  const bus = createMemoryBus({ log });
  const started: Control[] = [];
  const start = async (extra: Extra = {}) => {
    const control = await startControl({
      store,
      bus,
      log,
      fleet: parseFleet(opts.fleet ?? FLEET, name),
      port: 0,
      probeFloor: LOOPBACK_FLOOR,
      auth: TOKENS,
      ...opts.control,
      ...extra,
    });
    // Stopped once, whoever stops it first (a test, or close).
    const stop = control.stop;
    let stopping: Promise<void> | undefined;
    control.stop = () => {
      stopping ??= stop();
      return stopping;
    };
    started.push(control);
    return control;
  };
  const control = await start();
  return {
    control,
    store,
    bus,
    start,
    async close() {
      for (const c of started) await c.stop();
      await bus.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
