// How a server is judged across regions (issue 17) travels from the fleet file and the API into the
// store and the scheduler: applied with the fleet (a changed judgement is a change), taken in
// POST/PATCH /api/servers bodies with the file's keys and bounds (a hostile body is refused, 400),
// shown by GET in the file's form (and taken back as it is), written back to YAML, and the
// recheck window a newest-supported test's entries carry.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryBus } from '@mcp-fleet/bus';
import {
  DEFAULT_JUDGEMENT,
  fleetToYaml,
  judgementFileForm,
  parseFleet,
  resolveJudgement,
  withJudgement,
} from '@mcp-fleet/config';
import { createLogger } from '@mcp-fleet/log';
import { getServerByName, listActiveTests, openStore, type Store } from '@mcp-fleet/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Control, startControl } from '../src';
import { handshakeEntry } from '../src/schedule';

const FLEET = `regions: [eu-west, us-east]
defaults:
  interval: 30s
  quorum: all
  recheck: 6h
servers:
  - name: orders
    url: http://127.0.0.1:9/mcp
    tests:
      - revision: newest
      - revision: "2025-11-25"
    quorum: 2
    failAfter: 3
    slo: 99.9
  - name: plain
    url: http://127.0.0.1:9/plain
policy: { allow: ["127.0.0.0/8"] }
`;

let dir: string;
let store: Store;
let bus: ReturnType<typeof createMemoryBus>;
let control: Control;
const log = createLogger('test', 'silent');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-judgement-'));
  store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  bus = createMemoryBus({ log });
  control = await startControl({
    store,
    bus,
    log,
    fleet: parseFleet(FLEET, 'fleet.yaml'),
    port: 0,
    probeFloor: { allow: ['127.0.0.0/8'], deny: [] },
  });
});

afterAll(async () => {
  await control?.stop();
  await bus?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, json?: unknown) {
  const res = await fetch(`${control.url}${path}`, {
    method,
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: an API answer, read by the test
  return { status: res.status, body: (text ? JSON.parse(text) : null) as any };
}

const ORDERS = resolveJudgement({ quorum: 'all', recheck: '6h' }, { quorum: 2, failAfter: 3, slo: 99.9 });

describe('the fleet file', () => {
  it("stores each server's judgement, resolved: its own keys over the fleet's defaults", async () => {
    expect((await getServerByName(store.db, 'orders'))!.judgement).toEqual({
      ...DEFAULT_JUDGEMENT,
      quorum: 2,
      failAfter: 3,
      recheckMs: 6 * 3_600_000,
      slo: 99.9,
    });
    expect((await getServerByName(store.db, 'orders'))!.judgement).toEqual(ORDERS);
    expect((await getServerByName(store.db, 'plain'))!.judgement).toEqual({
      ...DEFAULT_JUDGEMENT,
      quorum: 'all',
      recheckMs: 6 * 3_600_000,
    });
  });

  it('applied again changes nothing; a changed judgement is a change, said and stored', async () => {
    const again = await control.apply(parseFleet(FLEET, 'again'));
    expect(again.unchanged.sort()).toEqual(['orders', 'plain']);
    const changed = await control.apply(
      parseFleet(
        FLEET.replace('    quorum: 2\n', '    quorum: any\n').replace('recheck: 6h', 'recheck: 90m'),
        'changed',
      ),
    );
    expect(changed.updated.sort()).toEqual(['orders', 'plain']);
    expect(changed.changes.orders).toEqual(['quorum 2 → any', 'recheck 6h → 90m']);
    expect(changed.changes.plain).toEqual(['recheck 6h → 90m']);
    expect((await getServerByName(store.db, 'orders'))!.judgement).toMatchObject({
      quorum: 'any',
      recheckMs: 5_400_000,
    });
    // Back to the file as it was.
    expect((await control.apply(parseFleet(FLEET, 'back'))).updated.sort()).toEqual(['orders', 'plain']);
  });

  it('round trip: file → store → YAML (only what differs from the defaults) → the same judgement', async () => {
    const stored = (await getServerByName(store.db, 'orders'))!;
    const entry = withJudgement({ name: stored.name, url: stored.target }, stored.judgement);
    expect(entry).toEqual({
      name: 'orders',
      url: 'http://127.0.0.1:9/mcp',
      quorum: 2,
      failAfter: 3,
      recheck: '6h',
      slo: 99.9,
    });
    const text = fleetToYaml({ regions: ['eu-west'], servers: [entry], policy: { allow: ['127.0.0.0/8'] } });
    expect(parseFleet(text, 'written').servers[0]!.judgement).toEqual(stored.judgement);
  });

  it("gives a newest-supported test's entries its server's recheck window, a pinned test's none", async () => {
    const orders = (await getServerByName(store.db, 'orders'))!;
    const entries = (await listActiveTests(store.db, orders.id)).map((t) => handshakeEntry(t, 'eu-west'));
    expect(entries.map((e) => [e.revision, e.recheckMs]).sort()).toEqual([
      ['2025-11-25', null],
      ['newest', 6 * 3_600_000],
    ]);
  });
});

describe('/api/servers', () => {
  it("shows a server's judgement, resolved, in the fleet file's form", async () => {
    const orders = (await getServerByName(store.db, 'orders'))!;
    const { status, body } = await call('GET', `/api/servers/${orders.id}`);
    expect(status).toBe(200);
    expect(body.server.judgement).toEqual({
      quorum: 2,
      failAfter: 3,
      confirmAfter: 2,
      flapWindow: '30m',
      recheck: '6h',
      disagreementAfter: '10m',
      slo: 99.9,
    });
  });

  it('POST takes the judgement keys over the defaults; none given is the defaults', async () => {
    const made = await call('POST', '/api/servers', {
      name: 'api-judged',
      url: 'http://127.0.0.1:9/api-judged',
      quorum: 'any',
      confirmAfter: 5,
      flapWindow: '2h',
      disagreementAfter: '0s',
    });
    expect(made.status).toBe(201);
    expect(made.body.server.judgement).toEqual(
      judgementFileForm({
        ...DEFAULT_JUDGEMENT,
        quorum: 'any',
        confirmAfter: 5,
        flapWindowMs: 7_200_000,
        disagreementAfterMs: 0,
      }),
    );
    const plain = await call('POST', '/api/servers', { name: 'api-plain', url: 'http://127.0.0.1:9/api-plain' });
    expect(plain.status).toBe(201);
    expect(plain.body.server.judgement).toEqual(judgementFileForm(DEFAULT_JUDGEMENT));
    // Stored as none: the defaults, whatever they become.
    const row = await store.db.execute(`select judgement from servers where name = 'api-plain'`);
    expect((row as unknown as { rows: { judgement: unknown }[] }).rows[0]!.judgement).toBeNull();
  });

  it.each([
    [{ quorum: 0 }, 'quorum: half, all, any or a number of regions (1 to 64)'],
    [{ quorum: -1 }, 'quorum: half, all, any or a number of regions (1 to 64)'],
    [{ quorum: 65 }, 'quorum: half, all, any or a number of regions (1 to 64)'],
    [{ quorum: 'most' }, 'quorum: half, all, any or a number of regions (1 to 64)'],
    [{ quorum: 2.5 }, 'quorum: half, all, any or a number of regions (1 to 64)'],
    [{ failAfter: 1e9 }, 'failAfter: a whole number of runs from 1 to 100'],
    [{ confirmAfter: '3' }, 'confirmAfter: a whole number of runs from 1 to 100'],
    [{ slo: 100 }, 'slo: a percentage from 50 to 99.999'],
    [{ slo: Number.MAX_VALUE }, 'slo: a percentage from 50 to 99.999'],
    [{ flapWindow: '1y' }, 'flapWindow: a duration like 30m or 24h, from 1s to 168h'],
    [{ recheck: '1s' }, 'recheck: a duration like 30m or 24h, from 1m to 168h'],
    [{ recheck: 86_400_000 }, 'recheck'],
    [{ disagreementAfter: '-1m' }, 'disagreementAfter'],
    [{ quorom: 'all' }, 'quorom'],
    [{ judgement: { quorum: 'all', evil: true } }, 'evil'],
    [{ judgement: { quorum: 0 } }, 'judgement.quorum'],
    [{ judgement: 'all' }, 'judgement'],
    [{ quorum: 'all', judgement: { quorum: 'any' } }, 'quorum and judgement.quorum disagree'],
  ])('POST and PATCH refuse a hostile judgement %j with 400', async (fields, message) => {
    const name = `hostile-${Math.random().toString(36).slice(2, 8)}`;
    const post = await call('POST', '/api/servers', { name, url: `http://127.0.0.1:9/${name}`, ...fields });
    const orders = (await getServerByName(store.db, 'orders'))!;
    const patch = await call('PATCH', `/api/servers/${orders.id}`, fields);
    expect(post.status).toBe(400);
    expect(post.body.error).toContain(message);
    expect(patch.status).toBe(400);
    expect(patch.body.error).toContain(message);
    expect(await getServerByName(store.db, name)).toBeNull();
    expect((await getServerByName(store.db, 'orders'))!.judgement).toEqual(ORDERS);
  });

  it('refuses a `__proto__` key (a JSON body names it as a plain key): nothing reaches the judgement through it', async () => {
    const orders = (await getServerByName(store.db, 'orders'))!;
    for (const [method, path, extra] of [
      ['POST', '/api/servers', '"name":"proto","url":"http://127.0.0.1:9/proto",'],
      ['PATCH', `/api/servers/${orders.id}`, ''],
    ] as const) {
      const res = await fetch(`${control.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: `{${extra}"__proto__":{"quorum":"any"},"judgement":{"__proto__":{"slo":50}}}`,
      });
      expect(res.status, method).toBe(400);
    }
    expect(await getServerByName(store.db, 'proto')).toBeNull();
    expect((await getServerByName(store.db, 'orders'))!.judgement).toEqual(ORDERS);
  });

  it('PATCH changes the keys given and keeps the others; what GET shows goes back unchanged', async () => {
    const made = await call('POST', '/api/servers', {
      name: 'patched',
      url: 'http://127.0.0.1:9/patched',
      quorum: 'all',
      slo: 99.99,
    });
    const id = made.body.server.id;
    const patched = await call('PATCH', `/api/servers/${id}`, { recheck: '1h', judgement: { failAfter: 2 } });
    expect(patched.status).toBe(200);
    expect(patched.body.server.judgement).toEqual(
      judgementFileForm({ ...DEFAULT_JUDGEMENT, quorum: 'all', slo: 99.99, recheckMs: 3_600_000, failAfter: 2 }),
    );
    // The whole of GET's answer, back as it is: nothing changes.
    const { body } = await call('GET', `/api/servers/${id}`);
    const again = await call('PATCH', `/api/servers/${id}`, body.server);
    expect(again.status).toBe(200);
    expect(again.body.server.judgement).toEqual(body.server.judgement);
    // The same key at the top and under judgement, alike: taken.
    expect((await call('PATCH', `/api/servers/${id}`, { slo: 99.95, judgement: { slo: 99.95 } })).status).toBe(200);
    const scheduled = (await listActiveTests(store.db, id)).map((t) => handshakeEntry(t, 'eu-west'));
    expect(scheduled.map((e) => e.recheckMs)).toEqual([3_600_000]);
  });
});
