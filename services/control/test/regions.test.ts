// Multi-region truth as control exposes it: the consensus and disagreement gauges on /metrics and the
// regions API, read from a real Postgres seeded with test states, region disagreements and uptime
// buckets as ingest leaves them (inserted here: no agent, so nothing else writes them). The API's
// query parameters are hostile input: each bad one is a 400 naming it (a bad id a 404, as elsewhere).
// biome-ignore-all lint/suspicious/noExplicitAny: the API's JSON answers, read field by field
import { createMemoryBus } from '@mcp-fleet/bus';
import { DEFAULT_JUDGEMENT } from '@mcp-fleet/config';
import { createLogger } from '@mcp-fleet/log';
import { type ActiveTest, listActiveTests, openStore, type Store } from '@mcp-fleet/store';
import { createTestDatabase, parseMetrics, seriesValue, type TestDatabase, testKeyring } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Control, parseFleet, startControl } from '../src';
import { storeGaugeReads } from '../src/fleet-gauge-reads';

let db: TestDatabase;
let store: Store;
let bus: ReturnType<typeof createMemoryBus>;
let control: Control;
const log = createLogger('test', 'silent');

const FLEET = `regions: [eu-west, us-east, ap-south]
servers:
  - name: orders
    url: https://orders.example.com/mcp
    tests:
      - revision: newest
      - revision: "2025-03-26"
      - { revision: newest, depth: conformance }
  - name: billing
    url: https://billing.example.com/mcp
  - name: search
    url: https://search.example.com/mcp
`;

const MIN = 60_000;
let tests: ActiveTest[];
const testOf = (server: string, mode: 'newest' | 'pinned', depth = 'handshake') =>
  tests.find((t) => t.serverName === server && t.mode === mode && t.depth === depth)!;
const serverId = (name: string) => tests.find((t) => t.serverName === name)!.serverId;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const lit = (v: unknown) => `'${JSON.stringify(v).replaceAll("'", "''")}'`;

/** A region's state as ingest leaves it: failed runs in a row there. */
async function state(testId: string, region: string, consecutiveFailures: number) {
  await store.db.execute(
    `insert into test_states (test_id, region, consecutive_failures, failing)
     values ('${testId}', '${region}', ${consecutiveFailures}, ${consecutiveFailures > 0})
     on conflict (test_id, region) do update set consecutive_failures = excluded.consecutive_failures,
       failing = excluded.failing`,
  );
}

async function disagreement(
  t: ActiveTest,
  revisions: Record<string, string>,
  startedMsAgo: number,
  endedMsAgo: number | null = null,
) {
  await store.db.execute(
    `insert into region_disagreements (server_id, test_id, revisions, started_at, ended_at, updated_at)
     values ('${t.serverId}', '${t.testId}', ${lit(revisions)}::jsonb, '${ago(startedMsAgo)}',
       ${endedMsAgo === null ? 'null' : `'${ago(endedMsAgo)}'`}, '${ago(endedMsAgo ?? 0)}')`,
  );
}

async function judgement(server: string, value: unknown) {
  await store.db.execute(`update servers set judgement = ${lit(value)}::jsonb where id = '${serverId(server)}'`);
}

beforeAll(async () => {
  db = await createTestDatabase('mcpfleet_regions');
  store = await openStore({ databaseUrl: db.url, keyring: testKeyring() });
  await store.migrate();
  bus = createMemoryBus({ log });
  // This test writes states behind control's back: the gauges read the store at every scrape.
  control = await startControl({
    store,
    bus,
    log,
    fleet: parseFleet(FLEET, 'regions test'),
    port: 0,
    gauges: { maxAgeMs: 0 },
  });
  tests = await listActiveTests(store.db);
  const orders = testOf('orders', 'newest');
  const ordersPin = testOf('orders', 'pinned');
  const billing = testOf('billing', 'newest');

  // orders (defaults: quorum half, failAfter 1): its newest test fails in 2 of 3 regions: failing.
  await state(orders.testId, 'eu-west', 1);
  await state(orders.testId, 'us-east', 4);
  await state(orders.testId, 'ap-south', 0);
  // Its pin fails in one region only: region-only trouble. A region gone from the fleet does not count.
  await state(ordersPin.testId, 'eu-west', 3);
  await state(ordersPin.testId, 'us-east', 0);
  await state(ordersPin.testId, 'ap-south', 0);
  await state(ordersPin.testId, 'old-region', 9);
  // billing: every region must fail, each twice in a row; ap-south failed once only: not failing.
  await judgement('billing', { ...DEFAULT_JUDGEMENT, quorum: 'all', failAfter: 2 });
  await state(billing.testId, 'eu-west', 2);
  await state(billing.testId, 'us-east', 5);
  await state(billing.testId, 'ap-south', 1);
  // search: a judgement the database should never hold (it is jsonb): read as the defaults.
  await judgement('search', { quorum: "all'; drop table servers; --", failAfter: -1 });

  // orders disagrees for 12 min (past the default 10 min); billing for 2 min; ended ones are history.
  await disagreement(orders, { 'us-east': '2025-11-25', 'eu-west': '2026-07-28' }, 12 * MIN);
  await disagreement(orders, { 'eu-west': '2025-11-25', 'us-east': '2025-06-18' }, 3 * 60 * MIN, 2 * 60 * MIN);
  await disagreement(billing, { 'eu-west': '2026-07-28', 'ap-south': '2025-11-25' }, 2 * MIN);
  await disagreement(testOf('search', 'newest'), { 'eu-west': '2026-07-28', 'us-east': '2025-11-25' }, 50 * MIN, MIN);

  // orders' uptime buckets (one a minute): 3 of 4 up in the last day; 8 of 12 runs passed.
  for (const [i, [executions, successes]] of [
    [3, 3],
    [3, 2],
    [3, 3],
    [3, 0],
  ].entries())
    await store.db.execute(
      `insert into test_slots (test_id, server_id, bucket, executions, successes)
       values ('${orders.testId}', '${orders.serverId}', '${ago((i + 1) * MIN)}', ${executions}, ${successes})`,
    );
}, 60_000);

afterAll(async () => {
  await control?.stop();
  await bus?.close();
  await store?.close();
  await db?.drop();
});

const call = async (path: string) => {
  const res = await fetch(`${control.url}${path}`);
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
};
const scrape = async () => parseMetrics(await (await fetch(`${control.url}/metrics`)).text());

describe('consensus gauges', () => {
  it('mcp_test_failing is the consensus state, with regions failing and regions of the fleet', async () => {
    const m = await scrape();
    const of = (name: string, server: string, test: string, revision: string) =>
      m
        .filter((s) => s.name === name && s.labels.server === server && s.labels.test === test)
        .map((s) => [s.labels.revision, s.value])[0] ?? [revision, undefined];
    expect(of('mcp_test_failing', 'orders', 'newest/handshake', 'newest')).toEqual(['newest', 1]);
    expect(of('mcp_test_regions_failing', 'orders', 'newest/handshake', 'newest')).toEqual(['newest', 2]);
    expect(of('mcp_test_regions', 'orders', 'newest/handshake', 'newest')).toEqual(['newest', 3]);
    // One region of three fails the pin: region-only trouble, not a consensus; old-region is not the fleet's.
    expect(of('mcp_test_failing', 'orders', '2025-03-26/handshake', '2025-03-26')).toEqual(['2025-03-26', 0]);
    expect(of('mcp_test_regions_failing', 'orders', '2025-03-26/handshake', '2025-03-26')).toEqual(['2025-03-26', 1]);
    expect(of('mcp_test_regions', 'orders', '2025-03-26/handshake', '2025-03-26')).toEqual(['2025-03-26', 3]);
    // quorum all, failAfter 2: ap-south's single failure keeps billing from failing.
    expect(of('mcp_test_failing', 'billing', 'newest/handshake', 'newest')).toEqual(['newest', 0]);
    expect(of('mcp_test_regions_failing', 'billing', 'newest/handshake', 'newest')).toEqual(['newest', 2]);
    // A test no region has run yet: a series all the same, not failing.
    expect(of('mcp_test_failing', 'search', 'newest/handshake', 'newest')).toEqual(['newest', 0]);
    expect(of('mcp_test_regions', 'search', 'newest/handshake', 'newest')).toEqual(['newest', 0]);
    // Labels stay bounded: server names, test keys and revisions only.
    for (const s of m.filter((s) => s.name.startsWith('mcp_test_')))
      expect(Object.keys(s.labels).sort()).toEqual(['revision', 'server', 'test']);
  });

  it('follows the fleet: a failing run more and the pin is a consensus too', async () => {
    await state(testOf('orders', 'pinned').testId, 'us-east', 1);
    const m = await scrape();
    expect(seriesValue(m, 'mcp_test_failing', { server: 'orders', test: '2025-03-26/handshake' })).toBe(1);
    expect(seriesValue(m, 'mcp_test_regions_failing', { server: 'orders', test: '2025-03-26/handshake' })).toBe(2);
    await state(testOf('orders', 'pinned').testId, 'us-east', 0);
  });
});

describe('region disagreement gauges', () => {
  it('are 1 once a disagreement lasted disagreementAfter, with the longest open one in seconds', async () => {
    const m = await scrape();
    expect(seriesValue(m, 'mcp_server_region_disagreement', { server: 'orders' })).toBe(1);
    expect(seriesValue(m, 'mcp_server_region_disagreement_seconds', { server: 'orders' })).toBeGreaterThanOrEqual(
      12 * 60,
    );
    expect(seriesValue(m, 'mcp_server_region_disagreement_seconds', { server: 'orders' })).toBeLessThan(13 * 60);
    // 2 min of the default 10: not yet.
    expect(seriesValue(m, 'mcp_server_region_disagreement', { server: 'billing' })).toBe(0);
    expect(seriesValue(m, 'mcp_server_region_disagreement_seconds', { server: 'billing' })).toBeGreaterThanOrEqual(120);
    // Agreeing (its disagreement ended): a series at 0.
    const search = m.filter((s) => s.name.startsWith('mcp_server_region_disagreement') && s.labels.server === 'search');
    expect(search.map((s) => [s.name, s.value])).toEqual([
      ['mcp_server_region_disagreement', 0],
      ['mcp_server_region_disagreement_seconds', 0],
    ]);
  });

  it("take a server's own disagreementAfter", async () => {
    await judgement('billing', { ...DEFAULT_JUDGEMENT, quorum: 'all', failAfter: 2, disagreementAfterMs: 60_000 });
    expect(seriesValue(await scrape(), 'mcp_server_region_disagreement', { server: 'billing' })).toBe(1);
    await judgement('billing', { ...DEFAULT_JUDGEMENT, quorum: 'all', failAfter: 2 });
    expect(seriesValue(await scrape(), 'mcp_server_region_disagreement', { server: 'billing' })).toBe(0);
  });

  it('do not count an open disagreement of a retired test (nothing can end it)', async () => {
    const conformance = testOf('orders', 'newest', 'conformance');
    await disagreement(conformance, { 'eu-west': '2026-07-28', 'us-east': '2025-11-25' }, 60 * MIN);
    const res = await fetch(`${control.url}/api/tests/${conformance.testId}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    const seconds = seriesValue(await scrape(), 'mcp_server_region_disagreement_seconds', { server: 'orders' });
    expect(seconds).toBeLessThan(13 * 60);
    // Its test is gone from the consensus gauges too.
    expect((await scrape()).some((s) => s.labels.test === 'newest/conformance')).toBe(false);
  });
});

describe('GET /api/servers/:id/regions', () => {
  it("answers the server's judgement, each test's consensus, its disagreements and its availability", async () => {
    const { status, body } = await call(`/api/servers/${serverId('orders')}/regions`);
    expect(status).toBe(200);
    expect(body.judgement).toEqual(DEFAULT_JUDGEMENT);
    const newest = body.consensus.find((c: any) => c.test === 'newest/handshake');
    expect(newest).toEqual({
      testId: testOf('orders', 'newest').testId,
      test: 'newest/handshake',
      revision: 'newest',
      mode: 'newest',
      depth: 'handshake',
      regionsTotal: 3,
      regionsFailing: 2,
      needed: 2,
      failing: true,
      failingRegions: ['eu-west', 'us-east'],
    });
    expect(body.consensus.find((c: any) => c.test === '2025-03-26/handshake')).toMatchObject({
      mode: 'pinned',
      revision: '2025-03-26',
      regionsFailing: 1,
      failing: false,
      failingRegions: ['eu-west'],
    });
    expect(body.disagreements.open).toHaveLength(1);
    expect(body.disagreements.open[0]).toMatchObject({
      test: 'newest/handshake',
      revisions: { 'eu-west': '2026-07-28', 'us-east': '2025-11-25' },
      endedAt: null,
      text: 'eu-west 2026-07-28, us-east 2025-11-25 for 12 min',
    });
    // History: every one, newest first, ended ones with how long they lasted.
    const texts = body.disagreements.history.map((d: any) => d.text);
    expect(texts).toContain('eu-west 2025-11-25, us-east 2025-06-18 for 1 h');
    const availability = body.availability;
    expect(availability.server.windows['24h']).toMatchObject({
      buckets: 4,
      upBuckets: 3,
      executions: 12,
      successes: 8,
      uptime: 0.75,
    });
    expect(availability.server.windows['24h'].reachability).toBeCloseTo(8 / 12);
    expect(availability.server.slo.target).toBe(99.5);
    expect(availability.server.slo.budgetLeft).toBeCloseTo(1 - 0.25 / 0.005);
    expect(Object.keys(availability.tests)).toEqual([testOf('orders', 'newest').testId]);
    expect(availability.tests[testOf('orders', 'newest').testId]['30d'].uptime).toBe(0.75);
  });

  it("reads a server's own judgement, and a stored one that does not parse as the defaults", async () => {
    const billing = await call(`/api/servers/${serverId('billing')}/regions`);
    expect(billing.body.judgement).toMatchObject({ quorum: 'all', failAfter: 2 });
    expect(billing.body.consensus[0]).toMatchObject({ needed: 3, regionsFailing: 2, failing: false });
    const search = await call(`/api/servers/${serverId('search')}/regions`);
    expect(search.status).toBe(200);
    expect(search.body.judgement).toEqual(DEFAULT_JUDGEMENT);
    expect(search.body.disagreements.open).toEqual([]);
    expect(search.body.disagreements.history[0].text).toBe('eu-west 2026-07-28, us-east 2025-11-25 for 49 min');
    // No run in the windows: counts at 0, ratios null (not a 100 % nobody measured).
    expect(search.body.availability.server.windows['24h']).toMatchObject({ buckets: 0, uptime: null });
    expect(search.body.availability.server.slo.budgetLeft).toBeNull();
  });

  it('is a 404 for an id that is no uuid or names no server, whatever it carries', async () => {
    for (const id of [
      'nope',
      '00000000-0000-0000-0000-000000000000',
      `${serverId('orders')}'--`,
      encodeURIComponent("' or 1=1 --"),
      '%00',
      'x'.repeat(300),
    ]) {
      const { status, body } = await call(`/api/servers/${id}/regions`);
      expect(status, id).toBe(404);
      expect(body.error, id).toMatch(/^no server /);
    }
  });
});

describe('GET /api/disagreements', () => {
  it('lists the open ones across the fleet by default, the longest first, each with its text', async () => {
    const { status, body } = await call('/api/disagreements');
    expect(status).toBe(200);
    expect(body.open).toBe(true);
    const list = body.disagreements as any[];
    expect(list.every((d) => d.endedAt === null)).toBe(true);
    // The retired test's (never ended) is not lasting now: only in the history, without a live test key.
    expect(list.map((d) => d.server)).toEqual(['orders', 'billing']);
    expect(list[0]).toMatchObject({
      test: 'newest/handshake',
      text: 'eu-west 2026-07-28, us-east 2025-11-25 for 12 min',
    });
    expect(list[1]).toMatchObject({
      test: 'newest/handshake',
      text: 'eu-west 2026-07-28, ap-south 2025-11-25 for 2 min',
    });
    const history = (await call('/api/disagreements?open=false')).body.disagreements as any[];
    expect(history.find((d) => d.test === null)).toMatchObject({
      endedAt: null,
      text: 'eu-west 2026-07-28, us-east 2025-11-25 for 1 h',
    });
  });

  it('lists ended ones with open=false, filtered by since, server and limit', async () => {
    const all = await call('/api/disagreements?open=false');
    expect(all.status).toBe(200);
    expect(all.body.disagreements).toHaveLength(5);
    // Newest first.
    const started = all.body.disagreements.map((d: any) => Date.parse(d.startedAt));
    expect(started).toEqual([...started].sort((a, b) => b - a));
    const since = await call(`/api/disagreements?open=false&since=${encodeURIComponent(ago(30 * MIN))}`);
    expect(since.body.disagreements.map((d: any) => d.server)).toEqual(['billing', 'orders']);
    const one = await call(`/api/disagreements?open=false&server=${serverId('search')}`);
    expect(one.body.disagreements.map((d: any) => d.server)).toEqual(['search']);
    expect((await call('/api/disagreements?open=false&limit=2')).body.disagreements).toHaveLength(2);
    expect((await call('/api/disagreements?open=0&since=24h')).body.disagreements).toHaveLength(5);
  });

  it('refuses a bad parameter with a 400 naming it, and answers nothing', async () => {
    const bad: [string, RegExp][] = [
      ['open=maybe', /^open: /],
      ['open=TRUE', /^open: /],
      ['open=', /^open: /],
      ['since=yesterday', /^since: /],
      ['since=2020-13-45', /^since: /],
      [`since=${encodeURIComponent("2020-01-01' or '1'='1")}`, /^since: /],
      ['since=%2B275760-09-13T00:00:00Z', /^since: /],
      ['since=0000-01-01T00:00:00Z', /^since: /],
      ['limit=0', /^limit: /],
      ['limit=501', /^limit: /],
      ['limit=1.5', /^limit: /],
      ['limit=-1', /^limit: /],
      ['limit=abc', /^limit: /],
      ['limit=99999999999999999999', /^limit: /],
      ['server=nope', /^server: /],
      [`server=${encodeURIComponent("' or 1=1 --")}`, /^server: /],
    ];
    for (const [query, message] of bad) {
      const { status, body } = await call(`/api/disagreements?${query}`);
      expect(status, query).toBe(400);
      expect(body.error, query).toMatch(message);
      expect(body.disagreements, query).toBeUndefined();
    }
  });
});

// Last: it retires a server. The gauges read the servers a run moved one by one (fleet-gauges.ts):
// a server read alone must show what the whole fleet's read shows for it, and a retired one nothing.
describe("control's gauges read some servers at a time", () => {
  it('reads a server alone as the whole read does, and a retired one as none', async () => {
    const reads = storeGaugeReads(store, () => ['eu-west', 'us-east', 'ap-south']);
    const live = await reads.liveServerIds();
    expect(live.sort()).toEqual(['billing', 'orders', 'search'].map(serverId).sort());
    const whole = await reads.servers(live);
    for (const name of ['orders', 'billing', 'search']) {
      const alone = await reads.servers([serverId(name)]);
      expect(alone).toEqual(whole.filter((s) => s.name === name));
    }
    // What the scrape above showed for orders, from the store: failing in us-east, a pin failing in
    // eu-west, open 12 min (the ended one is history); its conformance test was retired above.
    const orders = whole.find((s) => s.name === 'orders')!;
    expect(orders.tests.map((t) => [t.test, t.regionsFailing, t.regionsTotal]).sort()).toEqual([
      ['2025-03-26/handshake', 1, 3],
      ['newest/handshake', 2, 3],
    ]);
    expect(Date.now() - orders.disagreement!.openSince!).toBeGreaterThanOrEqual(12 * MIN);
    expect(orders.mustFailing).toBeNull();
    await store.db.execute(`update servers set retired_at = now() where id = '${serverId('search')}'`);
    expect(await reads.servers([serverId('search')])).toEqual([]);
    expect(await reads.liveServerIds()).not.toContain(serverId('search'));
  });
});
