// Control's reaction to what ingest judged across regions (docs/regions.md): confirmed moves and
// flaps counted (mcp_era_moves_confirmed_total, mcp_era_flaps_total) and told, a region
// disagreement starting and ending told, a test's consensus failing and recovering told; the raw
// move still told, as unconfirmed. Results are forged as agents of two regions send them, through
// the memory bus into a real control on PGlite.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryBus, type Result } from '@mcp-fleet/bus';
import { result as busResult, capturedLogger } from '@mcp-fleet/bus/testing';
import { createLogger } from '@mcp-fleet/log';
import { listActiveTests, openStore, type Store } from '@mcp-fleet/store';
import { parseMetrics, seriesValue } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Control, handshakeJobId, parseFleet, startControl } from '../src';

let dir: string;
let store: Store;
let bus: ReturnType<typeof createMemoryBus>;
let control: Control;
const captured = capturedLogger();

const FLEET = `regions: [eu-west, us-east]
servers:
  - name: orders
    url: https://orders.example.com/mcp
  - name: billing
    url: https://billing.example.com/mcp
    regions: [eu-west]
`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-judgement-'));
  store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  bus = createMemoryBus({ log: createLogger('test', 'silent') });
  control = await startControl({
    store,
    bus,
    log: captured.log,
    fleet: parseFleet(FLEET, 'judgement test'),
    port: 0,
  });
});

afterAll(async () => {
  await control?.stop();
  await bus?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const metrics = async () => parseMetrics(await fetch(`${control.url}/metrics`).then((r) => r.text()));
const events = (event: string) => captured.lines().filter((l) => l.event === event);

let written = 0;
/** One result of `server`'s newest test from `region` at slot n (minutes), ingested before the next is sent. */
async function send(server: string, region: string, n: number, negotiated: string | null, outcome = 'success') {
  const test = (await listActiveTests(store.db)).find((t) => t.serverName === server)!;
  const slot = Date.UTC(2026, 0, 1) + n * 60_000;
  const at = new Date(slot + 1000).toISOString();
  const base = busResult(region, {});
  const r: Result = {
    ...base,
    jobId: handshakeJobId(test.testId, region, slot),
    serverId: test.serverId,
    testId: test.testId,
    slot,
    scheduledAt: new Date(slot).toISOString(),
    startedAt: at,
    finishedAt: at,
    run: { ...base.run!, negotiated, outcome, message: outcome === 'success' ? 'ok' : 'timed out' },
  };
  await bus.publishResult(r);
  written += 1;
  await vi.waitFor(
    async () => expect(seriesValue(await metrics(), 'mcp_ingest_total', { result: 'written' })).toBe(written),
    { timeout: 20_000 },
  );
}

describe('control tells and counts what ingest judged across regions', () => {
  it('a move in one region: unconfirmed and a disagreement; in the second: confirmed by 2 regions, agreement', async () => {
    await send('orders', 'eu-west', 1, '2025-11-25');
    await send('orders', 'us-east', 1, '2025-11-25');
    expect(
      captured.lines().filter((l) => typeof l.event === 'string' && !String(l.event).startsWith('server_')),
    ).toEqual([]);

    await send('orders', 'eu-west', 2, '2026-07-28');
    expect(events('era_move').map((l) => l.msg)).toEqual([
      'era move (unconfirmed): orders in eu-west now 2026-07-28, was 2025-11-25 (legacy to modern)',
    ]);
    expect(events('era_move')[0]).toMatchObject({ confirmed: false });
    expect(events('region_disagreement_started')).toMatchObject([
      {
        server: 'orders',
        regions: 2,
        msg: 'region disagreement: orders: eu-west 2026-07-28, us-east 2025-11-25 for 0 s',
      },
    ]);
    expect(events('era_move_confirmed')).toEqual([]);

    await send('orders', 'us-east', 3, '2026-07-28');
    expect(events('era_move_confirmed')).toMatchObject([
      {
        server: 'orders',
        regions: ['eu-west', 'us-east'],
        by: 'regions',
        msg: 'era move confirmed: orders: now 2026-07-28, was 2025-11-25 (confirmed by 2 regions)',
      },
    ]);
    expect(events('region_disagreement_ended')).toMatchObject([
      {
        server: 'orders',
        msg: 'region disagreement ended: orders: regions agree again (eu-west 2026-07-28, us-east 2025-11-25 for 1 min)',
      },
    ]);
    const m = await metrics();
    for (const region of ['eu-west', 'us-east'])
      expect(
        seriesValue(m, 'mcp_era_moves_confirmed_total', {
          server: 'orders',
          from_version: '2025-11-25',
          to_version: '2026-07-28',
          region,
        }),
      ).toBe(1);
    // The raw moves keep their own counter.
    expect(seriesValue(m, 'mcp_ingest_era_moves_total', { to_version: '2026-07-28' })).toBe(2);
  });

  it('a move back inside the flap window: one flap, counted and told', async () => {
    await send('orders', 'eu-west', 4, '2025-11-25');
    expect(events('era_flapping')).toMatchObject([
      {
        server: 'orders',
        region: 'eu-west',
        from: '2025-11-25',
        to: '2026-07-28',
        msg: 'era flapping: orders in eu-west went 2025-11-25 → 2026-07-28 → 2025-11-25 within 2 min',
      },
    ]);
    expect(seriesValue(await metrics(), 'mcp_era_flaps_total', { server: 'orders', region: 'eu-west' })).toBe(1);
    expect(events('era_move_confirmed')).toHaveLength(1);
    // Back to agreeing: eu-west at 2025-11-25 now, us-east at 2026-07-28 — they disagree again.
    expect(events('region_disagreement_started')).toHaveLength(2);
  });

  it("the test's consensus failing and recovering (a quorum of half: one of two regions)", async () => {
    await send('orders', 'us-east', 5, null, 'timeout');
    expect(events('test_consensus_failing')).toMatchObject([
      {
        server: 'orders',
        revision: 'newest',
        regionsFailing: 1,
        regionsTotal: 2,
        needed: 1,
        msg: 'test failing: orders newest: 1 of 2 regions failing (quorum 1)',
      },
    ]);
    await send('orders', 'us-east', 6, '2026-07-28');
    expect(events('test_consensus_recovered')).toMatchObject([
      { server: 'orders', regionsFailing: 0, msg: 'test recovered: orders newest: 0 of 2 regions failing' },
    ]);
  });

  it('a one-region server confirms a move in confirmAfter runs', async () => {
    await send('billing', 'eu-west', 1, '2025-06-18');
    await send('billing', 'eu-west', 2, '2025-11-25');
    expect(events('era_move_confirmed').filter((l) => l.server === 'billing')).toEqual([]);
    await send('billing', 'eu-west', 3, '2025-11-25');
    expect(events('era_move_confirmed').filter((l) => l.server === 'billing')).toMatchObject([
      {
        region: 'eu-west',
        by: 'runs',
        msg: 'era move confirmed: billing in eu-west: now 2025-11-25, was 2025-06-18 (confirmed in 2 runs)',
      },
    ]);
    expect(
      seriesValue(await metrics(), 'mcp_era_moves_confirmed_total', {
        server: 'billing',
        from_version: '2025-06-18',
        to_version: '2025-11-25',
        region: 'eu-west',
      }),
    ).toBe(1);
  });
});
