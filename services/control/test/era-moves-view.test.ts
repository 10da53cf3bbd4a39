// GET /api/era-moves?view= (issue 17): the confirmed view by default (confirmed moves, a flap once),
// every recorded move with view=raw, and a view the API does not know refused with 400 naming the
// parameter (the query string is the caller's to write). A real control over PGlite.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Bus, createMemoryBus } from '@mcp-fleet/bus';
import { createLogger } from '@mcp-fleet/log';
import { eraMoves, openStore, type Store } from '@mcp-fleet/store';
import { serverWithTests } from '@mcp-fleet/store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type Control, parseFleet, startControl } from '../src';

const log = createLogger('era-moves-view', 'silent');
let dir: string;
let store: Store;
let bus: Bus;
let control: Control;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-view-'));
  store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  bus = createMemoryBus({ log });
  const fleet = parseFleet(stringify({ regions: ['eu-west', 'us-east'], servers: [] }), 'view fleet', {});
  control = await startControl({ store, bus, log, fleet, port: 0, tickMs: 60_000 });
  const { server, tests } = await serverWithTests(store.db, ['newest'], { name: 'mover' });
  const at = (m: number) => new Date(Date.now() - m * 60_000);
  const base = { serverId: server.id, testId: tests[0]!.id, region: 'eu-west', runId: null, eraChanged: false };
  await store.db.insert(eraMoves).values([
    {
      ...base,
      fromRevision: '2025-06-18',
      toRevision: '2025-11-25',
      downgrade: false,
      at: at(30),
      state: 'confirmed',
      seenRuns: 2,
      confirmedAt: at(29),
      confirmedBy: 'runs',
    },
    { ...base, fromRevision: '2025-11-25', toRevision: '2025-06-18', downgrade: true, at: at(20), state: 'pending' },
  ]);
});

afterAll(async () => {
  await control?.stop();
  await bus?.close();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const get = async (path: string) => {
  const res = await fetch(`${control.url}${path}`);
  return { status: res.status, body: (await res.json()) as { moves?: { state: string }[]; error?: string } };
};

describe('GET /api/era-moves?view=', () => {
  it('confirmed by default, every move with raw', async () => {
    const confirmed = await get('/api/era-moves?range=24h');
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.moves?.map((m) => m.state)).toEqual(['confirmed']);
    expect((await get('/api/era-moves?range=24h&view=confirmed')).body.moves).toHaveLength(1);
    const raw = await get('/api/era-moves?range=24h&view=raw');
    expect(raw.body.moves?.map((m) => m.state)).toEqual(['pending', 'confirmed']);
  });

  it('an unknown view is refused with 400, naming the parameter', async () => {
    for (const view of ['RAW', 'all', '<script>alert(1)</script>', '', 'raw,confirmed', 'x'.repeat(10_000)]) {
      const res = await get(`/api/era-moves?${new URLSearchParams({ view })}`);
      expect(res.status, view.slice(0, 40)).toBe(400);
      expect(res.body.error).toBe('view: one of confirmed, raw');
    }
  });
});
