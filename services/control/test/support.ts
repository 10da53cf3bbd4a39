// A whole monitor for a test: a fresh database, a bus, the simulated fleet, control and one
// agent per region — all real. Two flavours: Postgres + NATS, and PGlite + the in-process queue.
// Other workspaces' tests import it as @mcp-fleet/control/testing. It stays in control, not testkit:
// it builds on control, and control's own tests build on testkit (moving it would make a cycle).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Agent, startAgent } from '@mcp-fleet/agent';
import { type Bus, connectNatsBus, createMemoryBus, type NatsBus } from '@mcp-fleet/bus';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger, type Logger } from '@mcp-fleet/log';
import { openStore, type Store } from '@mcp-fleet/store';
import { createTestDatabase, type TestDatabase, testKeyring } from '@mcp-fleet/testkit';
import { type Control, parseFleet, startControl } from '../src';

export const NATS_URL = process.env.MCP_FLEET_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
export const log = createLogger('test', 'silent');
export type Flavour = 'postgres+nats' | 'pglite+memory';

export interface Monitor {
  store: Store;
  bus: Bus;
  sim: Sim;
  control: Control;
  agents: Agent[];
  namespace: string;
  databaseUrl: string | undefined;
  api<T = unknown>(path: string, init?: RequestInit & { json?: unknown }): Promise<{ status: number; body: T }>;
  /** Stop control (the store and bus stay) and start a new one over them. */
  restartControl(): Promise<void>;
  close(): Promise<void>;
}

export const REGIONS = ['eu-west', 'us-east'];

/** A sim target the monitor watches: its tests (default newest) and, optionally, a detection interval. */
export interface WatchedServer {
  name: string;
  tests?: string[];
  detection?: string;
}

/** A probe floor that lets probes reach the sim on loopback (the default is public addresses only). */
export const LOOPBACK_FLOOR = { allow: ['127.0.0.0/8'], deny: [] };

/** The fleet file for these sim servers; `spareRegions` are fleet regions where none of them is probed. */
export function fleetYaml(
  sim: Sim,
  servers: WatchedServer[],
  opts: { interval?: string; timeout?: string; spareRegions?: string[] } = {},
): string {
  const spareRegions = opts.spareRegions ?? [];
  const lines = [
    `regions: [${[...REGIONS, ...spareRegions].join(', ')}]`,
    `defaults: { interval: ${opts.interval ?? '2s'}, timeout: ${opts.timeout ?? '1500ms'} }`,
    'servers:',
  ];
  for (const s of servers) {
    lines.push(`  - name: ${s.name}`, `    url: ${sim.target(s.name).url}`);
    if (spareRegions.length) lines.push(`    regions: [${REGIONS.join(', ')}]`);
    lines.push('    tests:');
    for (const t of s.tests ?? ['newest']) lines.push(`      - revision: ${t === 'newest' ? t : `"${t}"`}`);
    if (s.detection) lines.push(`    detection: { interval: ${s.detection} }`);
  }
  lines.push('policy: { allow: ["127.0.0.0/8"] }');
  return `${lines.join('\n')}\n`;
}

export async function startMonitor(
  flavour: Flavour,
  servers: WatchedServer[],
  /** `spareRegions`: fleet regions where none of the servers is probed (a test's own jobs go there). */
  opts: {
    interval?: string;
    timeout?: string;
    ackWaitMs?: number;
    agents?: boolean;
    spareRegions?: string[];
    /** Control's logger (default silent): a test that reads what control tells the operator. */
    controlLog?: Logger;
  } = {},
): Promise<Monitor> {
  const namespace = `t${randomBytes(5).toString('hex')}`;
  let db: TestDatabase | undefined;
  let dir: string | undefined;
  let store: Store;
  let bus: Bus;
  if (flavour === 'postgres+nats') {
    db = await createTestDatabase('mcpfleet_ctl');
    store = await openStore({ databaseUrl: db.url, keyring: testKeyring() });
    bus = await connectNatsBus({ servers: NATS_URL, namespace, log, ackWaitMs: opts.ackWaitMs ?? 5_000 });
  } else {
    dir = mkdtempSync(join(tmpdir(), 'mcpfleet-ctl-'));
    store = await openStore({ dataDir: join(dir, 'pgdata') });
    bus = createMemoryBus({ log, ackWaitMs: opts.ackWaitMs ?? 5_000 });
  }
  await store.migrate();
  const sim = await startSim({ only: [...new Set([...servers.map((s) => s.name), 'silent'])] });
  const fleet = parseFleet(fleetYaml(sim, servers, opts), 'test fleet');
  const start = () =>
    startControl({ store, bus, log: opts.controlLog ?? log, fleet, port: 0, tickMs: 50, probeFloor: LOOPBACK_FLOOR });
  let control = await start();
  const agents =
    opts.agents === false
      ? []
      : await Promise.all(
          REGIONS.map((region) =>
            startAgent({
              bus,
              region,
              log,
              metricsPort: null,
              processMetrics: false,
              heartbeatMs: 500,
              probeFloor: LOOPBACK_FLOOR,
            }),
          ),
        );
  const monitor: Monitor = {
    store,
    bus,
    sim,
    get control() {
      return control;
    },
    agents,
    namespace,
    databaseUrl: db?.url,
    async api(path, init = {}) {
      const { json, ...rest } = init;
      const res = await fetch(`${control.url}${path}`, {
        ...rest,
        headers: json === undefined ? rest.headers : { 'content-type': 'application/json', ...rest.headers },
        body: json === undefined ? rest.body : JSON.stringify(json),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : null) as never };
    },
    async restartControl() {
      await control.stop();
      control = await start();
    },
    async close() {
      await Promise.allSettled(agents.map((a) => a.stop()));
      await control.stop().catch(() => undefined);
      if (bus.kind === 'nats') await deleteStreams(bus as NatsBus);
      await bus.close();
      await store.close();
      await sim.close();
      await db?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return monitor;
}

async function deleteStreams(bus: NatsBus): Promise<void> {
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const jsm = await jetstreamManager(bus.connection);
  for (const stream of [bus.names.jobsStream, bus.names.resultsStream])
    await jsm.streams.delete(stream).catch(() => undefined);
}
