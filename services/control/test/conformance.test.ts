// Conformance-depth tests in control: the fleet file's depth and interval applied, the scheduler's
// entry (depth, effective interval, a conformance run's timeout), forged results with checks
// ingested off the bus into check states, the API's reads (server, matrix) and its validation of
// depth and interval (hostile bodies), and the gauges the alert rules read. PGlite and the memory
// bus; no agent (the results are forged as an agent would send them, bus fixtures).
// biome-ignore-all lint/suspicious/noExplicitAny: the API's JSON answers, read field by field
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryBus, type Result } from '@mcp-fleet/bus';
import { result as busResult } from '@mcp-fleet/bus/testing';
import { CONFORMANCE_INTERVAL_MS } from '@mcp-fleet/config';
import { createLogger } from '@mcp-fleet/log';
import { listActiveTests, openStore, type Store } from '@mcp-fleet/store';
import { conformanceRun } from '@mcp-fleet/store/testing';
import { parseMetrics } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Control, handshakeJobId, parseFleet, startControl } from '../src';
import { handshakeEntry } from '../src/schedule';

let dir: string;
let store: Store;
let bus: ReturnType<typeof createMemoryBus>;
let control: Control;
const log = createLogger('test', 'silent');

const FLEET = `regions: [eu-west, us-east]
servers:
  - name: orders
    url: https://orders.example.com/mcp
    timeout: 10s
    tests:
      - revision: newest
      - { revision: newest, depth: conformance }
      - { revision: "2025-06-18", depth: conformance, interval: 1h }
  - name: billing
    url: https://billing.example.com/mcp
`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-conformance-'));
  store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  bus = createMemoryBus({ log });
  control = await startControl({ store, bus, log, fleet: parseFleet(FLEET, 'conformance test'), port: 0 });
});

afterAll(async () => {
  await control?.stop();
  await bus?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = async (method: string, path: string, json?: unknown) => {
  const res = await fetch(`${control.url}${path}`, {
    method,
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
};

const serverNamed = async (name: string) => {
  const { body } = await call('GET', '/api/servers');
  return (body.servers as { id: string; name: string }[]).find((s) => s.name === name)!;
};

/** A result an agent of `region` sends for a conformance test's job, its id its own (ingest checks it). */
function forged(
  testId: string,
  serverId: string,
  region: string,
  n: number,
  statuses: Record<string, 'pass' | 'fail' | 'skip'>,
): Result {
  const slot = Date.UTC(2026, 0, 1) + n * 60_000;
  const at = new Date(slot + 1000).toISOString();
  return busResult(region, {
    jobId: handshakeJobId(testId, region, slot),
    serverId,
    testId,
    slot,
    scheduledAt: new Date(slot).toISOString(),
    startedAt: at,
    finishedAt: at,
    conformance: conformanceRun('legacy', statuses),
  });
}

describe('conformance-depth tests in control', () => {
  it('applies the fleet file: a handshake and a conformance test of newest, each with depth and interval', async () => {
    const orders = await serverNamed('orders');
    const { body } = await call('GET', `/api/servers/${orders.id}`);
    // Made in one transaction (one created_at): sorted here by what they are.
    const tests = body.server.tests.map((t: any) => [t.mode, t.pinnedRevision, t.depth, t.intervalMs]);
    expect(tests.sort((a: string[], b: string[]) => a.join().localeCompare(b.join()))).toEqual([
      ['newest', null, 'conformance', null],
      ['newest', null, 'handshake', null],
      ['pinned', '2025-06-18', 'conformance', 3_600_000],
    ]);
    // The same file again changes nothing; an interval changed is said and applied in place.
    expect((await control.apply(parseFleet(FLEET, 'again'))).unchanged).toContain('orders');
    const changed = await control.apply(parseFleet(FLEET.replace('interval: 1h', 'interval: 2h'), 'changed'));
    expect(changed.changes.orders).toEqual(['test pinned 2025-06-18 (conformance) interval 1h → 2h']);
    expect(changed.testsCreated + changed.testsRetired).toBe(0);
  });

  it('schedules a conformance test at its depth, every 15m unless it says, with room for the run', async () => {
    const orders = await serverNamed('orders');
    const entries = (await listActiveTests(store.db, orders.id)).map((t) => handshakeEntry(t, 'eu-west'));
    expect(
      entries
        .map((e) => [e.depth, e.revision, e.intervalMs, e.timeoutMs])
        .sort((a, b) => a.join().localeCompare(b.join())),
    ).toEqual([
      ['conformance', '2025-06-18', 7_200_000, 30_000],
      ['conformance', 'newest', CONFORMANCE_INTERVAL_MS, 30_000],
      ['handshake', 'newest', 60_000, 10_000],
    ]);
  });

  it('files forged results off the bus per check; a redelivery files nothing; the API reads states, since and the matrix', async () => {
    const orders = await serverNamed('orders');
    const test = (await listActiveTests(store.db, orders.id)).find(
      (t) => t.depth === 'conformance' && t.mode === 'newest',
    )!;
    const first = forged(test.testId, orders.id, 'eu-west', 1, { server_info_present: 'pass', ping_succeeds: 'pass' });
    await bus.publishResult(first);
    await bus.publishResult(
      forged(test.testId, orders.id, 'us-east', 1, { server_info_present: 'pass', ping_succeeds: 'pass' }),
    );
    const conformanceOf = async () => (await call('GET', `/api/servers/${orders.id}/conformance`)).body;
    const newestOf = (body: any) => body.tests.find((t: any) => t.testId === test.testId);
    // Ingest takes results concurrently: the second slot is sent once the first is filed (else it could come first and make it stale).
    await vi.waitFor(
      async () => expect(newestOf(await conformanceOf()).regions.map((r: any) => r.checks.length)).toEqual([2, 2]),
      { timeout: 20_000 },
    );
    await bus.publishResult(
      forged(test.testId, orders.id, 'eu-west', 2, { server_info_present: 'pass', ping_succeeds: 'fail' }),
    );
    // Redelivered, saying something else: the job has its run already.
    await bus.publishResult({ ...first, conformance: conformanceRun('legacy', { ping_succeeds: 'fail' }) });

    await vi.waitFor(
      async () => {
        const eu = newestOf(await conformanceOf()).regions.find((r: any) => r.region === 'eu-west');
        expect(eu?.checks.find((c: any) => c.checkId === 'ping_succeeds')?.status).toBe('fail');
      },
      { timeout: 20_000 },
    );
    const body = await conformanceOf();
    const newest = newestOf(body);
    expect(body.tests).toHaveLength(2);
    const eu = newest.regions.find((r: any) => r.region === 'eu-west');
    const ping = eu.checks.find((c: any) => c.checkId === 'ping_succeeds');
    expect(ping).toMatchObject({
      status: 'fail',
      level: 'MUST',
      era: 'legacy',
      since: new Date(Date.UTC(2026, 0, 1) + 2 * 60_000 + 1000).toISOString(),
    });
    const info = eu.checks.find((c: any) => c.checkId === 'server_info_present');
    // Passing since the first run: an unchanged status keeps its since.
    expect(info.since).toBe(new Date(Date.UTC(2026, 0, 1) + 60_000 + 1000).toISOString());
    expect(eu.lastRun.checks.map((c: any) => [c.id, c.status])).toEqual([
      ['server_info_present', 'pass'],
      ['ping_succeeds', 'fail'],
    ]);

    const matrix = (await call('GET', '/api/conformance')).body;
    const row = matrix.servers.find((s: any) => s.name === 'orders');
    expect(row.cells.ping_succeeds).toMatchObject({ status: 'fail', regions: 2 });
    expect(row.failingMust).toBe(1);
    expect(matrix.checks.map((c: any) => c.id)).toEqual(['server_info_present', 'ping_succeeds']);
    expect((await call('GET', '/api/conformance?era=modern')).body.servers).toEqual([]);
    expect((await call('GET', '/api/conformance?level=MUST&era=legacy')).body.servers).toHaveLength(1);

    const metrics = parseMetrics(await fetch(`${control.url}/metrics`).then((r) => r.text()));
    const value = (name: string, server: string) =>
      metrics.find((s) => s.name === name && s.labels.server === server)?.value;
    expect(value('mcp_conformance_must_failing', 'orders')).toBe(1);
    expect(value('mcp_conformance_passing', 'orders')).toBe(0);
    // A server without conformance tests has no series (no alert on what is not measured).
    expect(value('mcp_conformance_passing', 'billing')).toBeUndefined();
  });

  it('refuses bad depths and intervals at the API, and huge or odd values, naming the field (hostile bodies)', async () => {
    const billing = await serverNamed('billing');
    const post = (body: unknown) => call('POST', `/api/servers/${billing.id}/tests`, body);
    const refused: [unknown, RegExp][] = [
      [{ revision: 'newest', depth: 'deep' }, /depth: handshake, conformance, surface or script/],
      [{ revision: 'newest', depth: 'x'.repeat(200_000) }, /depth/],
      [{ revision: 'newest', depth: 'conformance', interval: '-1s' }, /interval: a duration like/],
      [{ revision: 'newest', interval: '500ms' }, /interval: at least 1s/],
      [{ revision: 'newest', interval: `${'9'.repeat(400)}h` }, /interval/],
      [{ revision: 'newest', interval: 60 }, /interval/],
      [{ revision: 'newest', intervalMs: -5 }, /intervalMs/],
      [{ revision: 'newest', interval: '1m', intervalMs: 120_000 }, /interval and intervalMs disagree/],
      [{ revision: 'newest', depth: 'conformance', interval: '5s' }, /at least the server's timeout \(10s\)/],
      [{ revision: 'newest', depth: ['conformance'] }, /depth/],
      [{ revision: 'newest', depth: 'conformance', extra: 1 }, /extra/],
    ];
    for (const [body, message] of refused) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(String(res.body.error)).toMatch(message);
    }
    const made = await post({ revision: 'newest', depth: 'conformance', interval: '30m' });
    expect(made.status).toBe(201);
    expect(made.body.test).toMatchObject({ depth: 'conformance', intervalMs: 1_800_000 });
    expect((await post({ revision: 'newest', depth: 'conformance' })).status).toBe(409);

    const patch = (body: unknown) => call('PATCH', `/api/tests/${made.body.test.id}`, body);
    expect((await patch({ interval: '-1s' })).status).toBe(400);
    expect((await patch({ depth: 'handshake' })).status).toBe(400);
    expect((await patch({ interval: '9s' })).status).toBe(400);
    expect((await patch({ interval: '45m' })).body.test).toMatchObject({ intervalMs: 2_700_000 });
    expect((await patch({ interval: null })).body.test).toMatchObject({ intervalMs: null });
    expect((await call('GET', '/api/conformance?era=deep')).status).toBe(400);
    expect((await call('GET', `/api/conformance?level=${'M'.repeat(5000)}`)).status).toBe(400);
  });
});
