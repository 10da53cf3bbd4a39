// What results ingest records across regions, on both databases: a region disagreement opened,
// kept current and ended (and exactly one when two regions ingest at once); consecutive failures
// and the test's consensus under failAfter and the quorum; the uptime rollup per interval bucket
// (late runs counted, redeliveries not); retention of old buckets only; and a result from a region
// the server is not probed from, which opens no disagreement and counts for nothing.
import { DEFAULT_JUDGEMENT, type Judgement } from '@mcp-fleet/config';
import type { Outcome } from '@mcp-fleet/probe';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTest,
  pruneHistory,
  type RecordRunAnswer,
  recordRun,
  regionDisagreementList,
  regionDisagreements,
  retentionCutoffs,
  type Store,
  servers,
  TEST_SLOTS_KEPT_MS,
  type Test,
  testSlots,
  testStates,
} from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, minute, resultOf, serverWithTests } from './fixtures';

type Written = Extract<RecordRunAnswer, { duplicate: false }>;
function written(a: RecordRunAnswer): Written {
  if (a.duplicate) throw new Error('a duplicate');
  return a;
}

describe.each(BACKENDS)('multi-region ingest on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  const judged = async (j: Partial<Judgement> = {}, regions: string[] = ['eu-west', 'us-east']) => {
    const { server, tests } = await serverWithTests(store.db, ['newest'], { regions });
    await store.db
      .update(servers)
      .set({ judgement: { ...DEFAULT_JUDGEMENT, ...j } })
      .where(eq(servers.id, server.id));
    return { server, test: tests[0]! };
  };
  const run = async (test: Test, region: string, n: number, negotiated: string | null, outcome: Outcome = 'success') =>
    written(await recordRun(store.db, resultOf(test, region, minute(n), handshakeRun({ negotiated, outcome }))));
  const disagreementsOf = (testId: string) =>
    store.db
      .select()
      .from(regionDisagreements)
      .where(eq(regionDisagreements.testId, testId))
      .orderBy(regionDisagreements.id);

  it('opens a region disagreement when regions differ, keeps it current, ends it when they agree', async () => {
    const { server, test } = await judged({}, ['eu-west', 'us-east', 'ap-south']);
    expect((await run(test, 'eu-west', 1, '2025-11-25')).disagreement).toBeNull();
    expect((await run(test, 'us-east', 1, '2025-11-25')).disagreement).toBeNull();
    const started = await run(test, 'eu-west', 2, '2026-07-28');
    const first = { 'eu-west': '2026-07-28', 'us-east': '2025-11-25' };
    expect(started.disagreement).toEqual({
      started: true,
      ended: false,
      revisions: first,
      startedAt: minute(2),
      endedAt: null,
    });
    // Nothing changed: kept as it is.
    expect((await run(test, 'us-east', 3, '2025-11-25')).disagreement).toMatchObject({ started: false, ended: false });
    expect(await disagreementsOf(test.id)).toMatchObject([{ revisions: first, updatedAt: minute(2), endedAt: null }]);
    // A third region with a third revision: the same disagreement, its revisions current.
    const third = { ...first, 'ap-south': '2025-06-18' };
    expect((await run(test, 'ap-south', 4, '2025-06-18')).disagreement).toMatchObject({
      started: false,
      revisions: third,
    });
    expect(await disagreementsOf(test.id)).toMatchObject([
      { revisions: third, updatedAt: minute(4), startedAt: minute(2) },
    ]);
    const open = await regionDisagreementList(store.db, { serverId: server.id });
    expect(open.map((d) => d.revisions)).toEqual([third]);

    await run(test, 'us-east', 5, '2026-07-28');
    const ended = await run(test, 'ap-south', 6, '2026-07-28');
    expect(ended.disagreement).toMatchObject({ started: false, ended: true, startedAt: minute(2), endedAt: minute(6) });
    expect(await disagreementsOf(test.id)).toMatchObject([{ startedAt: minute(2), endedAt: minute(6) }]);
    expect(await regionDisagreementList(store.db, { serverId: server.id })).toEqual([]);
    // Agreeing on, nothing to tell; a new split is a new disagreement, the old one kept as history.
    expect((await run(test, 'eu-west', 7, '2026-07-28')).disagreement).toBeNull();
    expect((await run(test, 'eu-west', 8, '2025-11-25')).disagreement).toMatchObject({ started: true });
    expect((await disagreementsOf(test.id)).map((d) => d.endedAt)).toEqual([minute(6), null]);
  });

  it('two regions ingested at once open exactly one disagreement, with both regions current, without a deadlock', async () => {
    // Both move away from where they agreed, at once: each run alone sees a disagreement. Without the
    // test row's lock both would open one (the second refused by the one-open index) or file stale
    // revisions. Their slots fall in different uptime buckets (us-east half a minute later), so the
    // rollup's row does not order them by accident.
    for (let round = 0; round < 4; round++) {
      const { test } = await judged();
      await Promise.all([run(test, 'eu-west', 1, '2025-11-25'), run(test, 'us-east', 1, '2025-11-25')]);
      const answers = await Promise.all([
        run(test, 'eu-west', 2, '2026-07-28'),
        run(test, 'us-east', 2.5, '2025-06-18'),
      ]);
      const rows = await disagreementsOf(test.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ endedAt: null, revisions: { 'eu-west': '2026-07-28', 'us-east': '2025-06-18' } });
      expect(answers.filter((a) => a.disagreement?.started)).toHaveLength(1);
      // And back together at once: ended once.
      const back = await Promise.all([run(test, 'eu-west', 3, '2025-11-25'), run(test, 'us-east', 3.5, '2025-11-25')]);
      expect(back.filter((a) => a.disagreement?.ended)).toHaveLength(1);
      expect((await disagreementsOf(test.id)).map((d) => d.endedAt === null)).toEqual([false]);
    }
  });

  it('a pinned test opens no disagreement', async () => {
    const { tests } = await serverWithTests(store.db, ['2025-06-18']);
    const pin = tests[0]!;
    const pinned = (negotiated: string) => handshakeRun({ mode: 'pinned', negotiated, requested: '2025-06-18' });
    await recordRun(store.db, resultOf(pin, 'eu-west', minute(1), pinned('2025-06-18')));
    // Both regions speak the pin: a pin cannot disagree; the answer says nothing.
    const answer = written(await recordRun(store.db, resultOf(pin, 'us-east', minute(1), pinned('2025-06-18'))));
    expect(answer.disagreement).toBeNull();
    expect(await disagreementsOf(pin.id)).toEqual([]);
  });

  it('a region the server is not probed from opens no disagreement and is not counted (a hostile bus message)', async () => {
    const { test } = await judged();
    await run(test, 'eu-west', 1, '2025-11-25');
    await run(test, 'us-east', 1, '2025-11-25');
    const foreign = await run(test, 'ap-south', 2, '2026-07-28', 'timeout');
    expect(foreign.disagreement).toBeNull();
    // Its state is kept (history), but the next real run compares only the server's regions.
    expect((await run(test, 'eu-west', 3, '2025-11-25')).disagreement).toBeNull();
    expect(await disagreementsOf(test.id)).toEqual([]);
    // Its failures are not the test's consensus, and its executions not the server's uptime.
    const again = await run(test, 'ap-south', 4, null, 'timeout');
    expect(again.consensus).toEqual({ was: false, now: false, regionsFailing: 0, regionsTotal: 2, needed: 1 });
    const slots = await store.db.select().from(testSlots).where(eq(testSlots.testId, test.id));
    expect(slots.reduce((n, s) => n + s.executions, 0)).toBe(3);
  });

  it('counts failed runs in a row, and turns the consensus only once failAfter runs failed in a quorum of regions', async () => {
    const { test } = await judged({ failAfter: 2, quorum: 'all' });
    const failures = async (region: string) =>
      (
        await store.db
          .select({ n: testStates.consecutiveFailures })
          .from(testStates)
          .where(and(eq(testStates.testId, test.id), eq(testStates.region, region)))
      )[0]?.n;
    expect((await run(test, 'eu-west', 1, '2025-11-25')).consensus).toEqual({
      was: false,
      now: false,
      regionsFailing: 0,
      regionsTotal: 1,
      needed: 1,
    });
    await run(test, 'us-east', 1, '2025-11-25');
    expect((await run(test, 'eu-west', 2, null, 'timeout')).consensus).toMatchObject({ now: false, regionsFailing: 0 });
    expect(await failures('eu-west')).toBe(1);
    expect((await run(test, 'eu-west', 3, null, 'timeout')).consensus).toMatchObject({
      was: false,
      now: false,
      regionsFailing: 1,
      regionsTotal: 2,
      needed: 2,
    });
    await run(test, 'us-east', 2, null, 'unreachable');
    // A late failed run (an older slot) counts for nothing.
    expect((await run(test, 'us-east', 1.5, null, 'timeout')).stale).toBe(true);
    expect(await failures('us-east')).toBe(1);
    const failing = await run(test, 'us-east', 3, null, 'timeout');
    expect(failing.consensus).toEqual({ was: false, now: true, regionsFailing: 2, regionsTotal: 2, needed: 2 });
    expect(await failures('us-east')).toBe(2);
    // One pass starts a region over.
    const recovered = await run(test, 'eu-west', 4, '2025-11-25');
    expect(recovered.consensus).toEqual({ was: true, now: false, regionsFailing: 1, regionsTotal: 2, needed: 2 });
    expect(await failures('eu-west')).toBe(0);
  });

  it('rolls runs up per test and interval bucket: executions, successes; late runs counted, redeliveries not', async () => {
    const { server, test } = await judged();
    const bucketOf = (ms: number, every: number) => new Date(Math.floor(ms / every) * every);
    const at = (n: number) => minute(n, Date.UTC(2026, 0, 1, 0, 0, 30));
    // Slots of one bucket from both regions (resultOf schedules 2 s before finishing).
    const a = resultOf(test, 'eu-west', at(1), handshakeRun());
    await recordRun(store.db, a);
    await recordRun(store.db, resultOf(test, 'us-east', at(1), handshakeRun({ negotiated: null, outcome: 'timeout' })));
    // Delivered again: not counted again.
    expect(await recordRun(store.db, a)).toEqual({ duplicate: true });
    await recordRun(store.db, resultOf(test, 'eu-west', at(3), handshakeRun()));
    // A late run of an older slot ran: counted in its own bucket.
    expect(written(await recordRun(store.db, resultOf(test, 'eu-west', at(2), handshakeRun()))).stale).toBe(true);
    const rows = await store.db.select().from(testSlots).where(eq(testSlots.testId, test.id)).orderBy(testSlots.bucket);
    const bucket = (n: number) => bucketOf(at(n).getTime() - 2000, 60_000);
    expect(rows.map((r) => [r.bucket, r.executions, r.successes, r.serverId])).toEqual([
      [bucket(1), 2, 1, server.id],
      [bucket(2), 1, 1, server.id],
      [bucket(3), 1, 1, server.id],
    ]);
    // A conformance test's bucket is its own interval (15 min unless it says).
    const conformance = await createTest(store.db, { serverId: server.id, mode: 'newest', depth: 'conformance' });
    for (const n of [1, 7, 14])
      await recordRun(store.db, resultOf(conformance, n % 2 ? 'eu-west' : 'us-east', at(n), handshakeRun()));
    const slots = await store.db.select().from(testSlots).where(eq(testSlots.testId, conformance.id));
    expect(slots.map((s) => [s.bucket, s.executions])).toEqual([[bucketOf(at(1).getTime(), 15 * 60_000), 3]]);
  });

  it('retention deletes uptime buckets older than TEST_SLOTS_KEPT_MS only, and keeps disagreements', async () => {
    const { server, test } = await judged();
    const now = Date.now();
    const kept = new Date(now - TEST_SLOTS_KEPT_MS + 3_600_000);
    const old = new Date(now - TEST_SLOTS_KEPT_MS - 3_600_000);
    await store.db.insert(testSlots).values(
      [old, kept, new Date(now - 60_000)].map((bucket) => ({
        testId: test.id,
        serverId: server.id,
        bucket,
        executions: 2,
        successes: 1,
      })),
    );
    await store.db.insert(regionDisagreements).values({
      serverId: server.id,
      testId: test.id,
      revisions: { 'eu-west': '2026-07-28', 'us-east': '2025-11-25' },
      startedAt: new Date(now - 400 * 86_400_000),
      endedAt: new Date(now - 399 * 86_400_000),
      updatedAt: new Date(now - 399 * 86_400_000),
    });
    // The other tests' buckets (January 2026) are old too: they go with it.
    const pruned = await pruneHistory(store.db, retentionCutoffs(30));
    expect(pruned.testSlots).toBeGreaterThanOrEqual(1);
    const rows = await store.db.select().from(testSlots).where(eq(testSlots.testId, test.id)).orderBy(testSlots.bucket);
    expect(rows.map((r) => r.bucket.getTime())).toEqual([kept.getTime(), now - 60_000]);
    expect(await disagreementsOf(test.id)).toHaveLength(1);
    expect((await pruneHistory(store.db, retentionCutoffs(30))).testSlots).toBe(0);
  });
});
