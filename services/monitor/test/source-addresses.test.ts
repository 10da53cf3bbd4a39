// Two regions on one machine, told apart by the server (issue 17, item 7): the monitor's agents take
// a source address per region (eu-west from 127.0.0.1, us-east from 127.0.0.2), and fleet-sim's geo
// target shows each its own face, so the real pipeline (bus, control, store) sees two regions
// negotiate two revisions of one server, and follows a face switched at run time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryBus } from '@mcp-fleet/bus';
import { fleetToYaml } from '@mcp-fleet/config';
import { parseFleet } from '@mcp-fleet/control';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import type { ServerOverview } from '@mcp-fleet/store';
import { LOOPBACK_FLOOR, waitFor } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Monitor, startMonitor } from '../src';

const log = createLogger('test', 'silent');
let dir: string;
let sim: Sim;
let monitor: Monitor;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-source-'));
  sim = await startSim({ only: ['geo'] });
  sim.face('geo', 'modern');
  sim.face('geo', 'legacy', '127.0.0.2');
  const fleet = fleetToYaml({
    regions: ['eu-west', 'us-east'],
    defaults: { interval: '2s', timeout: '1500ms' },
    servers: [{ name: 'geo', url: sim.target('geo').url }],
    policy: { allow: ['127.0.0.0/8'] },
  });
  monitor = await startMonitor({
    log,
    store: { open: { dataDir: join(dir, 'pgdata') } },
    bus: createMemoryBus({ log }),
    control: { log, fleet: parseFleet(fleet, 'test fleet'), port: 0, tickMs: 50, probeFloor: LOOPBACK_FLOOR },
    agents: {
      metricsPort: null,
      processMetrics: false,
      probeFloor: LOOPBACK_FLOOR,
      sourceAddresses: { 'eu-west': '127.0.0.1', 'us-east': '127.0.0.2' },
    },
  });
});

afterAll(async () => {
  await monitor?.stop();
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function byRegion(): Promise<Record<string, string | null>> {
  const res = await fetch(`${monitor.control.url}/api/servers`);
  const { servers } = (await res.json()) as { servers: ServerOverview[] };
  const geo = servers.find((s) => s.name === 'geo');
  return Object.fromEntries((geo?.byRegion ?? []).map((r) => [r.region, r.currentRevision]));
}

describe("agents with a source address per region, against a server answering by the caller's address", () => {
  it('see two revisions of one server, one per region, and follow a face switched at run time (a rollback in one region)', async () => {
    await waitFor(
      'eu-west on 2026-07-28 and us-east on 2025-11-25',
      async () => {
        const r = await byRegion();
        return r['eu-west'] === '2026-07-28' && r['us-east'] === '2025-11-25' ? r : undefined;
      },
      20_000,
    );
    const from = new Set(sim.requests('geo').map((r) => r.remoteAddress));
    expect(from).toEqual(new Set(['127.0.0.1', '127.0.0.2']));

    // eu-west's side is rolled back (the default face, 127.0.0.1's): its next run hears the era
    // signal, looks the revision up and moves to 2025-11-25; us-east is untouched.
    sim.face('geo', 'legacy');
    await waitFor(
      'both regions on 2025-11-25',
      async () => {
        const r = await byRegion();
        return r['eu-west'] === '2025-11-25' && r['us-east'] === '2025-11-25' ? r : undefined;
      },
      20_000,
    );
  });
});
