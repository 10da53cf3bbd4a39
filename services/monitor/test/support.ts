// A whole monitor for a test: a fresh database, a bus, the simulated fleet, control and one
// agent per region — all real, started by startMonitor. Two flavours: Postgres + NATS, and
// PGlite + the in-process queue. Other workspaces' tests import it as @mcp-fleet/monitor/testing.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Agent } from '@mcp-fleet/agent';
import { type Bus, connectNatsBus, createMemoryBus, type NatsBus } from '@mcp-fleet/bus';
import { fleetToYaml, type JudgementEntry } from '@mcp-fleet/config';
import { type Control, parseFleet } from '@mcp-fleet/control';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger, type Logger } from '@mcp-fleet/log';
import type { ScriptStep } from '@mcp-fleet/probe';
import type { Store } from '@mcp-fleet/store';
import { createTestDatabase, LOOPBACK_FLOOR, type TestDatabase, testKeyring } from '@mcp-fleet/testkit';
import { startMonitor } from '../src';

export const NATS_URL = process.env.MCP_FLEET_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
export const log = createLogger('test', 'silent');
export type Flavour = 'postgres+nats' | 'pglite+memory';

export interface TestMonitor {
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
  /** The sim target it watches, when not the one of its name (two servers with two judgements of one target). */
  target?: string;
  /** Its own judgement keys (quorum, failAfter, confirmAfter…). */
  judgement?: JudgementEntry;
  tests?: string[];
  detection?: string;
  /** Also a conformance-depth test of the newest revision, at this interval. */
  conformance?: string;
  /** Also a surface-depth test of the newest revision, at this interval. */
  surface?: string;
  /** Also script-depth tests of the newest revision: their steps, at an interval. */
  scripts?: { interval: string; steps: ScriptStep[]; allowWrites?: boolean }[];
}

/** The fleet file for these sim servers; `spareRegions` are fleet regions where none of them is probed. */
export function fleetYaml(
  sim: Sim,
  servers: WatchedServer[],
  opts: { interval?: string; timeout?: string; spareRegions?: string[]; judgement?: JudgementEntry } = {},
): string {
  const spareRegions = opts.spareRegions ?? [];
  return fleetToYaml({
    regions: [...REGIONS, ...spareRegions],
    defaults: { interval: opts.interval ?? '2s', timeout: opts.timeout ?? '1500ms', ...opts.judgement },
    servers: servers.map((s) => ({
      name: s.name,
      url: sim.target(s.target ?? s.name).url,
      ...s.judgement,
      ...(spareRegions.length ? { regions: REGIONS } : {}),
      tests: [
        ...(s.tests ?? ['newest']).map((revision) => ({ revision })),
        ...(s.conformance ? [{ revision: 'newest', depth: 'conformance' as const, interval: s.conformance }] : []),
        ...(s.surface ? [{ revision: 'newest', depth: 'surface' as const, interval: s.surface }] : []),
        ...(s.scripts ?? []).map((t) => ({ revision: 'newest', depth: 'script' as const, ...t })),
      ],
      ...(s.detection ? { detection: { interval: s.detection } } : {}),
    })),
    policy: { allow: ['127.0.0.0/8'] },
  });
}

export async function startTestMonitor(
  flavour: Flavour,
  servers: WatchedServer[],
  /** `spareRegions`: fleet regions where none of the servers is probed (a test's own jobs go there). */
  opts: {
    interval?: string;
    timeout?: string;
    ackWaitMs?: number;
    agents?: boolean;
    spareRegions?: string[];
    /** The fleet's judgement defaults (quorum, failAfter, confirmAfter, flapWindow…). */
    judgement?: JudgementEntry;
    /** Each region's agent probes from this local address (fleet-sim's geo target tells them apart). */
    sourceAddresses?: Record<string, string>;
    /** Control's logger (default silent): a test that reads what control tells the operator. */
    controlLog?: Logger;
    /** The agents' stdio allowlist (issue 20; default none). */
    stdioCommands?: string[];
  } = {},
): Promise<TestMonitor> {
  const namespace = `t${randomBytes(5).toString('hex')}`;
  let db: TestDatabase | undefined;
  let dir: string | undefined;
  // The bus is the harness's own: NATS streams are deleted before it closes.
  let bus: Bus;
  if (flavour === 'postgres+nats') {
    db = await createTestDatabase('mcpfleet_ctl');
    bus = await connectNatsBus({ servers: NATS_URL, namespace, log, ackWaitMs: opts.ackWaitMs ?? 5_000 });
  } else {
    dir = mkdtempSync(join(tmpdir(), 'mcpfleet-ctl-'));
    bus = createMemoryBus({ log, ackWaitMs: opts.ackWaitMs ?? 5_000 });
  }
  const sim = await startSim({ only: [...new Set([...servers.map((s) => s.target ?? s.name), 'silent'])] });
  const monitor = await startMonitor({
    log,
    store: { open: db ? { databaseUrl: db.url, keyring: testKeyring() } : { dataDir: join(dir!, 'pgdata') } },
    bus,
    control: {
      log: opts.controlLog ?? log,
      fleet: parseFleet(fleetYaml(sim, servers, opts), 'test fleet'),
      port: 0,
      tickMs: 50,
      probeFloor: LOOPBACK_FLOOR,
    },
    // No agent in the fleet's spare regions: a test's own jobs wait there.
    agents:
      opts.agents === false
        ? false
        : {
            regions: REGIONS,
            metricsPort: null,
            processMetrics: false,
            heartbeatMs: 500,
            probeFloor: LOOPBACK_FLOOR,
            ...(opts.sourceAddresses ? { sourceAddresses: opts.sourceAddresses } : {}),
            ...(opts.stdioCommands ? { stdioCommands: opts.stdioCommands } : {}),
          },
  });
  return {
    store: monitor.store,
    bus,
    sim,
    get control() {
      return monitor.control;
    },
    agents: monitor.agents,
    namespace,
    databaseUrl: db?.url,
    async api(path, init = {}) {
      const { json, ...rest } = init;
      const res = await fetch(`${monitor.control.url}${path}`, {
        ...rest,
        headers: json === undefined ? rest.headers : { 'content-type': 'application/json', ...rest.headers },
        body: json === undefined ? rest.body : JSON.stringify(json),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : null) as never };
    },
    restartControl: () => monitor.restartControl(),
    async close() {
      // A test may have stopped control or an agent itself: stopping them again is not its failure.
      await monitor.stop().catch(() => undefined);
      if (bus.kind === 'nats') await deleteStreams(bus as NatsBus);
      await bus.close();
      await sim.close();
      await db?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function deleteStreams(bus: NatsBus): Promise<void> {
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const jsm = await jetstreamManager(bus.connection);
  for (const stream of [bus.names.jobsStream, bus.names.resultsStream])
    await jsm.streams.delete(stream).catch(() => undefined);
}
