// The dashboard's multi-region reads (issue 17) on both databases, over rows seeded the way ingest
// leaves them: "upgrade available" from the latest detection, the confirmed and raw views of era
// moves (a flap once, pending and superseded only in raw), the fleet summary's and drift's counts,
// and the servers table's verdicts for a page of servers (hostile stored values dropped).
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  detections,
  eraMoves,
  eraMovesList,
  fleetSummary,
  moveStateText,
  moveText,
  regionDisagreements,
  revisionDrift,
  type Store,
  servers,
  serversJudged,
  serverUpgrades,
  testSlots,
  testStates,
  tests,
  upgradesAvailable,
  upgradeText,
} from '../src';
import { BACKENDS } from './backends';
import { minute, serverWithTests } from './fixtures';

type Seeded = Awaited<ReturnType<typeof serverWithTests>>;

describe.each(BACKENDS)('multi-region reads on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  let rollout: Seeded;
  let current: Seeded;
  let hostile: Seeded;
  let mover: Seeded;

  const state = (testId: string, region: string, revision: string | null, consecutiveFailures = 0) =>
    store.db.insert(testStates).values({
      testId,
      region,
      currentRevision: revision,
      lastOutcome: consecutiveFailures ? 'timeout' : 'success',
      lastMessage: 'seeded',
      failing: consecutiveFailures > 0,
      consecutiveFailures,
      lastRunAt: minute(30),
    });
  const detection = (serverId: string, newestSupported: string | null, at: Date, region: string | null = 'us-east') =>
    store.db.insert(detections).values({
      serverId,
      region,
      outcome: newestSupported ? 'DETECTED' : 'NONE',
      newestSupported,
      result: { outcome: newestSupported ? 'DETECTED' : 'NONE', newestSupported },
      at,
    });
  type MoveRow = typeof eraMoves.$inferInsert;
  const move = async (row: Partial<MoveRow> & Pick<MoveRow, 'fromRevision' | 'toRevision' | 'at'>) => {
    const t = mover.tests[0]!;
    const [made] = await store.db
      .insert(eraMoves)
      .values({
        serverId: t.serverId,
        testId: t.id,
        region: 'eu-west',
        runId: null,
        downgrade: row.toRevision < row.fromRevision,
        eraChanged: (row.toRevision === '2026-07-28') !== (row.fromRevision === '2026-07-28'),
        ...row,
      })
      .returning({ id: eraMoves.id });
    return made!.id;
  };

  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
    // A rollout: us-east already speaks 2026-07-28, eu-west still 2025-11-25; a pin beside it.
    rollout = await serverWithTests(store.db, ['newest', '2025-11-25'], { name: 'rollout' });
    current = await serverWithTests(store.db, ['newest'], { name: 'current' });
    hostile = await serverWithTests(store.db, ['newest'], { name: 'hostile' });
    mover = await serverWithTests(store.db, ['newest'], { name: 'mover' });
    await state(rollout.tests[0]!.id, 'eu-west', '2025-11-25', 3);
    await state(rollout.tests[0]!.id, 'us-east', '2026-07-28');
    await state(rollout.tests[1]!.id, 'eu-west', '2025-11-25');
    await state(current.tests[0]!.id, 'eu-west', '2026-07-28');
    await state(hostile.tests[0]!.id, 'eu-west', '2025-03-26', 1);
    // The older detection found less; the latest (another region) found 2026-07-28.
    await detection(rollout.server.id, '2025-06-18', minute(10), 'eu-west');
    await detection(rollout.server.id, '2026-07-28', minute(20));
    await detection(current.server.id, '2026-07-28', minute(20));
    // A value that is no revision (a forged result): never an upgrade.
    await detection(hostile.server.id, '<img src=x onerror=alert(1)>', minute(20));
    await store.db
      .update(servers)
      .set({
        judgement: {
          quorum: 'all',
          failAfter: 2,
          confirmAfter: 3,
          flapWindowMs: 1_800_000,
          recheckMs: 86_400_000,
          disagreementAfterMs: 600_000,
          slo: 99,
        },
      })
      .where(eq(servers.id, rollout.server.id));
  });

  afterAll(() => backend.dispose());

  describe('upgrade available', () => {
    it('a newest-supported test behind the latest detection, in the regions behind it', async () => {
      const [u, ...rest] = await serverUpgrades(store.db, rollout.server.id);
      expect(rest).toEqual([]);
      expect(u).toMatchObject({
        testId: rollout.tests[0]!.id,
        revision: '2026-07-28',
        regions: [{ region: 'eu-west', current: '2025-11-25' }],
        detectedFrom: 'us-east',
      });
      expect(upgradeText(u!)).toBe('upgrade available: 2026-07-28');
      expect(upgradeText(u!, 2)).toBe('upgrade available: 2026-07-28 (in eu-west)');
    });

    it('none for a test already there, nor from a stored value that is no revision; a page in one call', async () => {
      const all = await upgradesAvailable(store.db, [rollout.server.id, current.server.id, hostile.server.id]);
      expect(all.map((u) => u.serverId)).toEqual([rollout.server.id]);
      expect(await upgradesAvailable(store.db, [])).toEqual([]);
    });

    it('until it moves: once every region speaks it, nothing is left', async () => {
      const t = await serverWithTests(store.db, ['newest'], { name: 'catching-up' });
      await state(t.tests[0]!.id, 'eu-west', '2025-06-18');
      await detection(t.server.id, '2025-11-25', minute(25));
      expect((await serverUpgrades(store.db, t.server.id)).map((u) => u.revision)).toEqual(['2025-11-25']);
      await store.db
        .update(testStates)
        .set({ currentRevision: '2025-11-25' })
        .where(eq(testStates.testId, t.tests[0]!.id));
      expect(await serverUpgrades(store.db, t.server.id)).toEqual([]);
    });
  });

  describe('confirmed and raw era moves', () => {
    const ids: Record<string, number> = {};
    beforeAll(async () => {
      ids.byRuns = await move({
        fromRevision: '2025-06-18',
        toRevision: '2025-11-25',
        at: minute(1),
        state: 'confirmed',
        seenRuns: 2,
        confirmedAt: minute(2),
        confirmedBy: 'runs',
      });
      // A flap: 2025-11-25 → 2026-07-28 → 2025-11-25, its move back a downgrade in raw terms.
      ids.flapFirst = await move({
        fromRevision: '2025-11-25',
        toRevision: '2026-07-28',
        at: minute(3),
        state: 'flapping',
      });
      ids.flapBack = await move({
        fromRevision: '2026-07-28',
        toRevision: '2025-11-25',
        at: minute(4),
        state: 'flapping',
        flapOf: ids.flapFirst,
      });
      ids.superseded = await move({
        fromRevision: '2025-11-25',
        toRevision: '2025-03-26',
        at: minute(5),
        state: 'superseded',
      });
      // Two regions moved alike and were confirmed together by a quorum of regions.
      ids.byRegions = await move({
        fromRevision: '2025-03-26',
        toRevision: '2026-07-28',
        at: minute(6),
        state: 'confirmed',
        confirmedAt: minute(7),
        confirmedBy: 'regions',
      });
      ids.byRegionsToo = await move({
        region: 'us-east',
        fromRevision: '2025-11-25',
        toRevision: '2026-07-28',
        at: minute(6),
        state: 'confirmed',
        confirmedAt: minute(7),
        confirmedBy: 'regions',
      });
      await move({
        region: 'us-east',
        fromRevision: '2025-03-26',
        toRevision: '2026-07-28',
        at: minute(6),
        state: 'confirmed',
        confirmedAt: minute(7),
        confirmedBy: 'regions',
      });
      ids.down = await move({
        fromRevision: '2026-07-28',
        toRevision: '2025-11-25',
        at: minute(8),
        state: 'confirmed',
        seenRuns: 2,
        confirmedAt: minute(9),
        confirmedBy: 'runs',
      });
      ids.pending = await move({
        fromRevision: '2025-11-25',
        toRevision: '2026-07-28',
        at: minute(10),
        state: 'pending',
      });
    });
    const list = (q: Partial<Parameters<typeof eraMovesList>[1]> = {}) =>
      eraMovesList(store.db, { serverId: mover.server.id, region: 'eu-west', limit: 100, ...q });

    it('confirmed (the default): confirmed moves and each flap once, as its move back', async () => {
      const { moves } = await list();
      expect(moves.map((m) => m.id)).toEqual([ids.down, ids.byRegions, ids.flapBack, ids.byRuns]);
      const flap = moves.find((m) => m.id === ids.flapBack)!;
      expect(moveText(flap)).toBe('flapping: 2025-11-25→2026-07-28→2025-11-25');
      expect(moveStateText(flap)).toBe('flapping');
      expect(flap.flapStartedAt).toEqual(minute(3));
      expect(moveStateText(moves.find((m) => m.id === ids.byRuns)!)).toBe('confirmed in 2 runs');
      expect(moveStateText(moves.find((m) => m.id === ids.byRegions)!)).toBe('confirmed by 2 regions');
      expect(moveText(moves.find((m) => m.id === ids.byRuns)!)).toBe('2025-06-18→2025-11-25');
    });

    it('raw: every move recorded, pending and superseded too, each with its state', async () => {
      const { moves } = await list({ view: 'raw' });
      expect(moves.map((m) => m.id)).toEqual([
        ids.pending,
        ids.down,
        ids.byRegions,
        ids.superseded,
        ids.flapBack,
        ids.flapFirst,
        ids.byRuns,
      ]);
      const pending = moves.find((m) => m.id === ids.pending)!;
      // The server's judgement: confirmAfter is the default 2.
      expect(moveStateText(pending)).toBe('pending: seen in 1 of 2 runs');
      expect(moveStateText(moves.find((m) => m.id === ids.superseded)!)).toBe('superseded');
      expect(moveStateText(moves.find((m) => m.id === ids.flapFirst)!)).toBe('flapping (undone)');
    });

    it('a flap is no downgrade in the confirmed view; raw still lists the move back', async () => {
      expect((await list({ downgrade: true })).moves.map((m) => m.id)).toEqual([ids.down]);
      expect((await list({ downgrade: true, view: 'raw' })).moves.map((m) => m.id)).toEqual([
        ids.down,
        ids.superseded,
        ids.flapBack,
      ]);
      expect((await list({ eraChanged: true })).moves.map((m) => m.id)).toEqual([ids.down, ids.byRegions]);
    });

    it('the fleet summary counts confirmed moves and flaps once; pending apart', async () => {
      const s = await fleetSummary(store.db, { since: minute(0), until: minute(60), countRuns: false });
      // down, byRegions, byRegionsToo, the third regions move, flapBack, byRuns.
      expect(s.eraMoves).toBe(6);
      expect(s.downgrades).toBe(1);
      expect(s.eraChanges).toBe(4);
      expect(s.flaps).toBe(1);
      expect(s.pendingMoves).toBe(1);
    });

    it('drift in the confirmed view does not draw the flap; raw does', async () => {
      await state(mover.tests[0]!.id, 'eu-west', '2026-07-28');
      // Drift draws a test only from its creation on: it existed before the moves.
      await store.db
        .update(tests)
        .set({ createdAt: minute(0) })
        .where(eq(tests.id, mover.tests[0]!.id));
      const window = { since: minute(0), until: minute(10), buckets: 10, region: 'eu-west' };
      const confirmed = await revisionDrift(store.db, window);
      const raw = await revisionDrift(store.db, { ...window, view: 'raw' });
      // The bucket ending at minute 3 (index 2): the flap's blip to 2026-07-28 is raw only.
      const at3 = (d: typeof raw) => d.points[2]!.servers;
      expect(at3(raw)['2026-07-28']).toBeGreaterThanOrEqual(1);
      expect(at3(confirmed)['2026-07-28']).toBe(at3(raw)['2026-07-28'] - 1);
      expect(at3(confirmed)['2025-11-25']).toBe(at3(raw)['2025-11-25'] + 1);
    });
  });

  describe("a page's verdicts", () => {
    it('consensus, open disagreements (unknown revisions dropped), availability and upgrades per server', async () => {
      const t = rollout.tests[0]!;
      await store.db.insert(regionDisagreements).values([
        {
          serverId: rollout.server.id,
          testId: t.id,
          revisions: { 'eu-west': '2025-11-25', 'us-east': '2026-07-28', '<b>x</b>': '<script>alert(1)</script>' },
          startedAt: minute(18),
          updatedAt: minute(20),
        },
        {
          serverId: rollout.server.id,
          testId: t.id,
          revisions: { 'eu-west': '2025-06-18', 'us-east': '2025-11-25' },
          startedAt: minute(1),
          endedAt: minute(5),
          updatedAt: minute(5),
        },
      ]);
      const now = new Date();
      await store.db.insert(testSlots).values([
        {
          testId: t.id,
          serverId: rollout.server.id,
          bucket: new Date(now.getTime() - 3_600_000),
          executions: 2,
          successes: 1,
        },
        {
          testId: t.id,
          serverId: rollout.server.id,
          bucket: new Date(now.getTime() - 7_200_000),
          executions: 2,
          successes: 0,
        },
      ]);
      const judged = await serversJudged(store.db, [rollout.server.id, current.server.id], { now });
      const r = judged[rollout.server.id]!;
      expect(r.disagreements).toHaveLength(1);
      expect(r.disagreements[0]!.revisions).toEqual({ 'eu-west': '2025-11-25', 'us-east': '2026-07-28' });
      expect(r.upgrades.map((u) => u.revision)).toEqual(['2026-07-28']);
      expect(r.availability?.windows['24h']).toMatchObject({ buckets: 2, upBuckets: 1, executions: 4, successes: 1 });
      // SLO 99 % and 50 % uptime: overspent.
      expect(r.availability?.slo.target).toBe(99);
      expect(r.availability?.slo.budgetLeft).toBeLessThan(0);
      const newest = r.consensus.find((c) => c.testId === t.id)!;
      // quorum all, failAfter 2: eu-west fails (3 in a row), us-east passes.
      expect(newest).toMatchObject({
        regionsTotal: 2,
        regionsFailing: 1,
        needed: 2,
        failing: false,
        failingRegions: ['eu-west'],
      });
      expect(judged[current.server.id]).toMatchObject({ disagreements: [], upgrades: [] });
      expect(judged[current.server.id]!.consensus[0]).toMatchObject({ regionsTotal: 1, regionsFailing: 0 });
    });
  });
});
