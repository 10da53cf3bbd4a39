// The dashboard's reads: drift rebuilt from the era-move log, downgrades from their partial index,
// and the servers table's filters and pages. Runs go in through recordRun, as control writes them.
import type { Revision } from '@mcp-fleet/probe';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  downgradesOverTime,
  fittedRange,
  latencyByRegion,
  oldestRunAt,
  recordRun,
  retireServer,
  revisionDrift,
  type Server,
  type Store,
  serversPage,
  tests,
} from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, resultOf, serverWithTests } from './fixtures';

const MIN = 60_000;

describe.each(BACKENDS)('dashboard reads on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  let alpha: Server;
  let bravo: Server;
  let charlie: Server;
  const now = Date.now();
  const ago = (minutes: number) => new Date(now - minutes * MIN);
  const speaks = (negotiated: Revision, extra: Parameters<typeof handshakeRun>[0] = {}) =>
    handshakeRun({
      requested: negotiated,
      negotiated,
      generation: negotiated === '2026-07-28' ? 'stateless' : 'sessions',
      era: negotiated === '2026-07-28' ? 'modern' : 'legacy',
      ...extra,
    });

  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
    const db = store.db;
    // alpha: newest + pinned 2025-11-25, two regions; moves to 2026-07-28 in eu-west 65 min ago.
    const A = await serverWithTests(db, ['newest', '2025-11-25'], { name: 'alpha' });
    // bravo: newest in eu-west, 2025-06-18 throughout, downgraded twice.
    const B = await serverWithTests(db, ['newest'], { name: 'bravo', regions: ['eu-west'] });
    // charlie: added 20 min ago, speaks 2026-07-28.
    const C = await serverWithTests(db, ['newest'], { name: 'charlie', regions: ['eu-west'] });
    // delta: retired, so it counts nowhere.
    const D = await serverWithTests(db, ['newest'], { name: 'delta', regions: ['eu-west'] });
    [alpha, bravo, charlie] = [A.server, B.server, C.server];
    const [aNewest, aPinned] = A.tests as [(typeof A.tests)[0], (typeof A.tests)[0]];
    const [bNewest] = B.tests as [(typeof B.tests)[0]];
    const [cNewest] = C.tests as [(typeof C.tests)[0]];
    const [dNewest] = D.tests as [(typeof D.tests)[0]];
    await db
      .update(tests)
      .set({ createdAt: ago(240) })
      .where(inArray(tests.serverId, [alpha.id, bravo.id, D.server.id]));
    await db
      .update(tests)
      .set({ createdAt: ago(20) })
      .where(eq(tests.serverId, charlie.id));

    for (const region of ['eu-west', 'us-east']) {
      await recordRun(db, resultOf(aNewest, region, ago(180), speaks('2025-11-25', { millis: 100 })));
      await recordRun(db, resultOf(aPinned, region, ago(180), speaks('2025-11-25')));
    }
    await recordRun(db, resultOf(aNewest, 'eu-west', ago(65), speaks('2026-07-28', { millis: 40 })));
    await recordRun(db, resultOf(aNewest, 'us-east', ago(65), speaks('2025-11-25', { millis: 300 })));
    await recordRun(db, resultOf(bNewest, 'eu-west', ago(200), speaks('2025-06-18')));
    // Downgrades: two in range, one before it; a success is not one.
    const downgrade = speaks('2025-06-18', { requested: '2025-11-25', outcome: 'downgrade' });
    await recordRun(db, resultOf(bNewest, 'eu-west', ago(150), downgrade));
    await recordRun(db, resultOf(bNewest, 'eu-west', ago(100), downgrade));
    await recordRun(db, resultOf(bNewest, 'eu-west', ago(10), downgrade));
    await recordRun(db, resultOf(cNewest, 'eu-west', ago(10), speaks('2026-07-28')));
    await recordRun(db, resultOf(dNewest, 'eu-west', ago(10), speaks('2024-11-05')));
    await retireServer(db, D.server.id);
  });

  afterAll(() => backend.dispose());

  it('rebuilds drift from the current picture and the era moves, bucket by bucket', async () => {
    // Four 30-minute buckets ending 90, 60, 30 and 0 minutes ago.
    const drift = await revisionDrift(store.db, { since: ago(120), until: ago(0), buckets: 4 });
    expect(drift.bucketMs).toBe(30 * MIN);
    const counts = drift.points.map((p) => Object.fromEntries(Object.entries(p.servers).filter(([, n]) => n > 0)));
    expect(counts).toEqual([
      // Before the move alpha speaks 2025-11-25 everywhere; charlie does not exist yet.
      { '2025-06-18': 1, '2025-11-25': 1 },
      // After it alpha is split: 2026-07-28 in eu-west, 2025-11-25 in us-east (it counts under both).
      { '2025-06-18': 1, '2025-11-25': 1, '2026-07-28': 1 },
      { '2025-06-18': 1, '2025-11-25': 1, '2026-07-28': 1 },
      { '2025-06-18': 1, '2025-11-25': 1, '2026-07-28': 2 },
    ]);
    expect(drift.points.map((p) => p.speaking)).toEqual([2, 2, 2, 3]);
    // One region: us-east only ever saw alpha on 2025-11-25.
    const usEast = await revisionDrift(store.db, { since: ago(120), until: ago(0), buckets: 4, region: 'us-east' });
    expect(usEast.points.map((p) => p.servers['2025-11-25'])).toEqual([1, 1, 1, 1]);
    expect(usEast.points.map((p) => p.servers['2026-07-28'])).toEqual([0, 0, 0, 0]);
  });

  it('counts downgrades in the range, per bucket and per requested → negotiated pair', async () => {
    const d = await downgradesOverTime(store.db, { since: ago(120), until: ago(0), buckets: 4 });
    expect(d.total).toBe(2);
    expect(d.points.map((p) => p.total)).toEqual([1, 0, 0, 1]);
    expect(d.pairs).toEqual([{ requested: '2025-11-25', negotiated: '2025-06-18', runs: 2, servers: 1 }]);
    const eu = await downgradesOverTime(store.db, { since: ago(240), until: ago(0), buckets: 1, region: 'us-east' });
    expect(eu.total).toBe(0);
  });

  it('gives a server latency by region and bucket', async () => {
    const l = await latencyByRegion(store.db, alpha.id, { since: ago(120), until: ago(0), buckets: 2 });
    expect(l.points.map((p) => [p.region, p.runs, p.p50])).toEqual([
      ['eu-west', 1, 40],
      ['us-east', 1, 300],
    ]);
  });

  it('filters, sorts and pages the servers table in SQL', async () => {
    const names = async (q: Parameters<typeof serversPage>[1]) =>
      (await serversPage(store.db, q)).servers.map((s) => s.name);
    expect(await names({})).toEqual(['alpha', 'bravo', 'charlie']);
    expect(await names({ revision: '2026-07-28' })).toEqual(['alpha', 'charlie']);
    expect(await names({ era: 'legacy' })).toEqual(['alpha', 'bravo']);
    expect(await names({ region: 'us-east' })).toEqual(['alpha']);
    expect(await names({ outcome: 'downgrade' })).toEqual(['bravo']);
    expect(await names({ search: 'AR' })).toEqual(['charlie']);
    expect(await names({ search: '100%_' })).toEqual([]);
    expect(await names({ sort: 'name', descending: true })).toEqual(['charlie', 'bravo', 'alpha']);
    expect((await names({ sort: 'lastRun', descending: true }))[2]).toBe('alpha');
    const p2 = await serversPage(store.db, { pageSize: 2, page: 2 });
    expect([p2.total, p2.pages, p2.page, p2.servers.map((s) => s.name)]).toEqual([3, 2, 2, ['charlie']]);
    // A page past the end is the last page.
    expect((await serversPage(store.db, { pageSize: 2, page: 99 })).page).toBe(2);
  });

  it('lists retired servers apart and counts live and retired apart', async () => {
    const live = await serversPage(store.db, {});
    expect(live.counts).toEqual({ live: 3, retired: 1 });
    expect(live.total).toBe(3);
    const retired = await serversPage(store.db, { status: 'retired' });
    expect(retired.servers.map((s) => [s.name, s.retiredAt instanceof Date])).toEqual([['delta', true]]);
    expect([retired.total, retired.counts]).toEqual([1, { live: 3, retired: 1 }]);
    // Its last state is shown with it, and the filters apply to retired servers too.
    expect(retired.servers[0]!.byRegion.map((r) => r.region)).toEqual(['eu-west']);
    expect((await serversPage(store.db, { status: 'retired', search: 'alp' })).total).toBe(0);
  });

  it('fits the default range to the data’s age: 1 h for the first hour (or no data), then 24 h', async () => {
    const at = Date.parse('2026-01-01T12:00:00Z');
    expect(fittedRange(null, at)).toBe('1h');
    expect(fittedRange(new Date(at - 5 * MIN), at)).toBe('1h');
    expect(fittedRange(new Date(at - 60 * MIN), at)).toBe('1h');
    expect(fittedRange(new Date(at - 61 * MIN), at)).toBe('24h');
    expect(fittedRange(new Date(at - 40 * 24 * 60 * MIN), at)).toBe('24h');
    // The oldest run by control's clock (received_at): here, just written.
    const oldest = await oldestRunAt(store.db);
    expect(Math.abs(oldest!.getTime() - Date.now())).toBeLessThan(5 * MIN);
  });
});
