// startMonitor itself: one agent per fleet region on consecutive /metrics ports, addresses that
// answer, a stop that closes what the monitor opened and leaves what it was given, and a start
// that fails half-way stopping what it had started.
import { createServer, type Server } from 'node:net';
import { createMemoryBus } from '@mcp-fleet/bus';
import { parseFleet } from '@mcp-fleet/control';
import { createLogger } from '@mcp-fleet/log';
import { openStore, servers } from '@mcp-fleet/store';
import { ADMIN_URL, accepts, createTestDatabase, freePort, freePortRun, type TestDatabase } from '@mcp-fleet/testkit';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startMonitor } from '../src';

const log = createLogger('test', 'silent');
const fleet = parseFleet('regions: [eu-west, us-east, ap-south]\nservers: []\n', 'test fleet');
const portOf = (url: string) => Number(new URL(url).port);

// Postgres, not PGlite: a fresh database migrates in a moment.
let db: TestDatabase;
beforeEach(async () => {
  db = await createTestDatabase('mcpfleet_mon');
});
afterEach(() => db.drop());

async function sessionsOn(database: string): Promise<number> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    const { rows } = await client.query('select count(*)::int n from pg_stat_activity where datname = $1', [database]);
    return rows[0].n;
  } finally {
    await client.end();
  }
}

describe('startMonitor', () => {
  it('starts control and an agent per fleet region on consecutive ports; stop closes what it opened, not what it was given', async () => {
    const bus = createMemoryBus({ log });
    const first = await freePortRun(3);
    const m = await startMonitor({
      log,
      store: { open: { databaseUrl: db.url } },
      bus,
      control: { fleet, port: 0 },
      agents: { metricsPort: first, processMetrics: false },
    });
    const { addresses } = m;
    expect(addresses.agents.map((a) => a.region)).toEqual(['eu-west', 'us-east', 'ap-south']);
    expect(addresses.agents.map((a) => portOf(a.metrics!))).toEqual([first, first + 1, first + 2]);
    expect(addresses.dashboard).toBeNull();
    expect((await fetch(`${addresses.api}/api/servers`)).status).toBe(200);
    // Opened by the monitor, so migrated by it.
    expect(await m.store.db.select().from(servers)).toEqual([]);

    await m.stop();
    expect(await accepts(portOf(addresses.api))).toBe(false);
    for (const a of addresses.agents) expect(await accepts(portOf(a.metrics!))).toBe(false);
    // The store was the monitor's: closed.
    await expect(m.store.db.select().from(servers)).rejects.toThrow();
    // The bus was given: still open.
    await bus.ensure(['eu-west']);
    await bus.close();
  });

  it('starts no agent when told, and none with an HTTP server for metricsPort null', async () => {
    const store = await openStore({ databaseUrl: db.url });
    await store.migrate();
    try {
      const none = await startMonitor({ log, store, control: { fleet, port: 0 }, agents: false });
      expect(none.agents).toEqual([]);
      await none.stop();
      const quiet = await startMonitor({
        log,
        store,
        control: { fleet, port: 0 },
        agents: { regions: ['eu-west'], metricsPort: null, processMetrics: false },
      });
      expect(quiet.addresses.agents).toEqual([{ region: 'eu-west', metrics: null }]);
      await quiet.stop();
      // The store was given: still open.
      expect(await store.db.select().from(servers)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('a start that fails half-way stops what it had started and throws the cause', async () => {
    const first = await freePortRun(3);
    const apiPort = await freePort();
    // The second region's port is taken: its agent cannot listen.
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(first + 1, '127.0.0.1', resolve));
    try {
      await expect(
        startMonitor({
          log,
          store: { open: { databaseUrl: db.url } },
          control: { fleet, port: apiPort },
          agents: { metricsPort: first, processMetrics: false },
        }),
      ).rejects.toThrow(/EADDRINUSE/);
      expect(await accepts(apiPort)).toBe(false);
      expect(await accepts(first)).toBe(false);
      // The store it opened is closed: nobody is left connected to the database.
      expect(await sessionsOn(db.name)).toBe(0);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
