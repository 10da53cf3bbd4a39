// Era-move confirmation and flapping in results ingest, on both databases: a move is pending until
// its region saw it in confirmAfter passing runs or a quorum of regions moved alike; A→B→A inside
// the flap window is one flap (both rows flapping); a new move supersedes a pending one; stale and
// duplicate runs confirm nothing; a test beside a live handshake twin leaves moves to it; and a
// result from a region the server is not probed from confirms nothing (a hostile bus message).
import { DEFAULT_JUDGEMENT, type Judgement } from '@mcp-fleet/config';
import type { Outcome } from '@mcp-fleet/probe';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTest, eraMoves, type RecordRunAnswer, recordRun, type Store, servers, type Test } from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, minute, resultOf, serverWithTests } from './fixtures';

type Written = Extract<RecordRunAnswer, { duplicate: false }>;
function written(a: RecordRunAnswer): Written {
  if (a.duplicate) throw new Error('a duplicate');
  return a;
}

describe.each(BACKENDS)('era-move confirmation on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  /** A server (eu-west and us-east unless told) judged with these settings, and its newest test. */
  const judged = async (j: Partial<Judgement> = {}, regions?: string[]) => {
    const { server, tests } = await serverWithTests(store.db, ['newest'], regions ? { regions } : {});
    await store.db
      .update(servers)
      .set({ judgement: { ...DEFAULT_JUDGEMENT, ...j } })
      .where(eq(servers.id, server.id));
    return { server, test: tests[0]! };
  };
  const run = async (test: Test, region: string, n: number, negotiated: string | null, outcome: Outcome = 'success') =>
    written(await recordRun(store.db, resultOf(test, region, minute(n), handshakeRun({ negotiated, outcome }))));
  const moves = (testId: string) =>
    store.db.select().from(eraMoves).where(eq(eraMoves.testId, testId)).orderBy(eraMoves.id);

  it('confirms a move after confirmAfter runs of its region; a failed run neither counts nor resets', async () => {
    const { test } = await judged({ confirmAfter: 3 });
    await run(test, 'eu-west', 1, '2025-11-25');
    const moved = await run(test, 'eu-west', 2, '2026-07-28');
    expect(moved).toMatchObject({ eraMove: { from: '2025-11-25', to: '2026-07-28' }, confirmedMoves: [], flap: null });
    expect(await moves(test.id)).toMatchObject([{ state: 'pending', seenRuns: 1, confirmedAt: null }]);
    // An outage in between says nothing about the revision.
    expect((await run(test, 'eu-west', 3, null, 'timeout')).confirmedMoves).toEqual([]);
    expect((await run(test, 'eu-west', 4, '2026-07-28')).confirmedMoves).toEqual([]);
    const [pending] = await moves(test.id);
    expect(pending).toMatchObject({ state: 'pending', seenRuns: 2 });
    const third = await run(test, 'eu-west', 5, '2026-07-28');
    expect(third.confirmedMoves).toEqual([
      {
        id: pending!.id,
        region: 'eu-west',
        from: '2025-11-25',
        to: '2026-07-28',
        downgrade: false,
        eraChanged: true,
        by: 'runs',
        seen: 3,
      },
    ]);
    expect(await moves(test.id)).toMatchObject([
      { state: 'confirmed', seenRuns: 3, confirmedBy: 'runs', confirmedAt: minute(5) },
    ]);
    // Confirmed once: more runs confirm nothing more.
    expect((await run(test, 'eu-west', 6, '2026-07-28')).confirmedMoves).toEqual([]);
  });

  it('confirms a move seen in two regions at once, both rows by regions', async () => {
    const { test } = await judged();
    await run(test, 'eu-west', 1, '2025-11-25');
    await run(test, 'us-east', 1, '2025-11-25');
    expect((await run(test, 'eu-west', 2, '2026-07-28')).confirmedMoves).toEqual([]);
    const second = await run(test, 'us-east', 3, '2026-07-28');
    expect(second.confirmedMoves.map((m) => [m.region, m.from, m.to, m.by, m.seen])).toEqual([
      ['eu-west', '2025-11-25', '2026-07-28', 'regions', 2],
      ['us-east', '2025-11-25', '2026-07-28', 'regions', 2],
    ]);
    expect((await moves(test.id)).map((m) => [m.region, m.state, m.confirmedBy, m.confirmedAt])).toEqual([
      ['eu-west', 'confirmed', 'regions', minute(3)],
      ['us-east', 'confirmed', 'regions', minute(3)],
    ]);
    // The next run of either region has nothing pending to count.
    expect((await run(test, 'eu-west', 4, '2026-07-28')).confirmedMoves).toEqual([]);
  });

  it('one region of two does not confirm a move before its k runs; regions that moved elsewhere do not count', async () => {
    const { test } = await judged({ confirmAfter: 3 });
    await run(test, 'eu-west', 1, '2025-11-25');
    await run(test, 'us-east', 1, '2025-06-18');
    await run(test, 'eu-west', 2, '2026-07-28');
    // us-east moves too, but from elsewhere: not the same move.
    expect((await run(test, 'us-east', 2, '2026-07-28')).confirmedMoves).toEqual([]);
    expect((await run(test, 'eu-west', 3, '2026-07-28')).confirmedMoves).toEqual([]);
    expect((await moves(test.id)).map((m) => m.state)).toEqual(['pending', 'pending']);
    expect((await run(test, 'eu-west', 4, '2026-07-28')).confirmedMoves.map((m) => [m.region, m.by])).toEqual([
      ['eu-west', 'runs'],
    ]);
  });

  it('with one region of a one-region server, a quorum of regions never confirms: confirmAfter does', async () => {
    const { test } = await judged({ quorum: 'any' }, ['eu-west']);
    await run(test, 'eu-west', 1, '2025-11-25');
    expect((await run(test, 'eu-west', 2, '2026-07-28')).confirmedMoves).toEqual([]);
    expect((await run(test, 'eu-west', 3, '2026-07-28')).confirmedMoves).toHaveLength(1);
  });

  it('confirmAfter 1 confirms a move at once', async () => {
    const { test } = await judged({ confirmAfter: 1 });
    await run(test, 'eu-west', 1, '2025-11-25');
    const moved = await run(test, 'eu-west', 2, '2025-06-18');
    expect(moved.confirmedMoves).toMatchObject([
      { region: 'eu-west', from: '2025-11-25', to: '2025-06-18', downgrade: true, by: 'runs' },
    ]);
    expect(await moves(test.id)).toMatchObject([
      { state: 'confirmed', confirmedBy: 'runs', confirmedAt: minute(2), seenRuns: 1 },
    ]);
  });

  it('a move back inside the flap window is one flap: both rows flapping, the second naming the first', async () => {
    const { test } = await judged({ flapWindowMs: 10 * 60_000 });
    await run(test, 'eu-west', 1, '2025-11-25');
    await run(test, 'eu-west', 2, '2026-07-28');
    const back = await run(test, 'eu-west', 5, '2025-11-25');
    expect(back.eraMove).toMatchObject({ from: '2026-07-28', to: '2025-11-25', downgrade: true });
    expect(back.flap).toEqual({ region: 'eu-west', from: '2025-11-25', to: '2026-07-28', firstAt: minute(2) });
    expect(back.confirmedMoves).toEqual([]);
    const rows = await moves(test.id);
    expect(rows.map((m) => [m.state, m.flapOf])).toEqual([
      ['flapping', null],
      ['flapping', rows[0]!.id],
    ]);
    // Nothing is pending: the runs after it confirm nothing.
    expect((await run(test, 'eu-west', 6, '2025-11-25')).confirmedMoves).toEqual([]);
    expect((await run(test, 'eu-west', 7, '2025-11-25')).confirmedMoves).toEqual([]);

    // A confirmed move undone inside the window flaps too.
    const { test: other } = await judged({ confirmAfter: 1, flapWindowMs: 10 * 60_000 });
    await run(other, 'us-east', 1, '2025-11-25');
    await run(other, 'us-east', 2, '2026-07-28');
    expect((await run(other, 'us-east', 3, '2025-11-25')).flap).toMatchObject({ from: '2025-11-25', to: '2026-07-28' });
    expect((await moves(other.id)).map((m) => m.state)).toEqual(['flapping', 'flapping']);
  });

  it('a move back outside the flap window is two moves; the pending first is superseded', async () => {
    const { test } = await judged({ flapWindowMs: 5 * 60_000, confirmAfter: 5 });
    await run(test, 'eu-west', 1, '2025-11-25');
    await run(test, 'eu-west', 2, '2026-07-28');
    const back = await run(test, 'eu-west', 20, '2025-11-25');
    expect(back.flap).toBeNull();
    expect((await moves(test.id)).map((m) => [m.toRevision, m.state, m.flapOf])).toEqual([
      ['2026-07-28', 'superseded', null],
      ['2025-11-25', 'pending', null],
    ]);
  });

  it('a new move supersedes the pending one; the new one goes on to be confirmed', async () => {
    const { test } = await judged();
    await run(test, 'eu-west', 1, '2025-06-18');
    await run(test, 'eu-west', 2, '2025-11-25');
    await run(test, 'eu-west', 3, '2026-07-28');
    expect((await moves(test.id)).map((m) => [m.toRevision, m.state])).toEqual([
      ['2025-11-25', 'superseded'],
      ['2026-07-28', 'pending'],
    ]);
    expect((await run(test, 'eu-west', 4, '2026-07-28')).confirmedMoves.map((m) => m.to)).toEqual(['2026-07-28']);
  });

  it('a stale run and a duplicate delivery confirm and count nothing', async () => {
    const { test } = await judged({ confirmAfter: 3 });
    await run(test, 'eu-west', 1, '2025-11-25');
    await run(test, 'eu-west', 5, '2026-07-28');
    // An older slot delivered late, at the new revision: kept as a run, counted for nothing.
    const late = await run(test, 'eu-west', 3, '2026-07-28');
    expect(late).toMatchObject({ stale: true, confirmedMoves: [], flap: null, disagreement: null });
    expect(await moves(test.id)).toMatchObject([{ state: 'pending', seenRuns: 1 }]);
    // One run, delivered three times, counts once.
    const again = resultOf(test, 'eu-west', minute(6), handshakeRun({ negotiated: '2026-07-28' }));
    expect(written(await recordRun(store.db, again)).confirmedMoves).toEqual([]);
    expect(await recordRun(store.db, again)).toEqual({ duplicate: true });
    expect(await recordRun(store.db, again)).toEqual({ duplicate: true });
    expect(await moves(test.id)).toMatchObject([{ state: 'pending', seenRuns: 2 }]);
  });

  it('a surface or conformance test beside a live handshake twin records, confirms and compares nothing', async () => {
    const { server, test: handshake } = await judged({ confirmAfter: 1 });
    const surface = await createTest(store.db, { serverId: server.id, mode: 'newest', depth: 'surface' });
    const conformance = await createTest(store.db, { serverId: server.id, mode: 'newest', depth: 'conformance' });
    for (const t of [surface, conformance]) {
      await run(t, 'eu-west', 1, '2025-11-25');
      await run(t, 'us-east', 1, '2025-11-25');
      const moved = await run(t, 'eu-west', 2, '2026-07-28');
      expect(moved).toMatchObject({ eraMove: null, confirmedMoves: [], flap: null, disagreement: null });
      expect(await moves(t.id)).toEqual([]);
    }
    // The handshake test itself does.
    await run(handshake, 'eu-west', 1, '2025-11-25');
    await run(handshake, 'us-east', 1, '2025-11-25');
    const moved = await run(handshake, 'eu-west', 2, '2026-07-28');
    expect(moved.confirmedMoves).toHaveLength(1);
    expect(moved.disagreement).toMatchObject({ started: true });
  });

  it('a result from a region the server is not probed from confirms no move (a hostile bus message)', async () => {
    const { test } = await judged({ confirmAfter: 1 });
    await run(test, 'eu-west', 1, '2025-11-25');
    await run(test, 'ap-south', 1, '2025-11-25');
    // Its own move is kept as history, but confirmed neither at once nor by its runs.
    const foreign = await run(test, 'ap-south', 2, '2026-07-28');
    expect(foreign).toMatchObject({
      eraMove: { to: '2026-07-28' },
      confirmedMoves: [],
      flap: null,
      disagreement: null,
    });
    expect((await run(test, 'ap-south', 3, '2026-07-28')).confirmedMoves).toEqual([]);
    expect((await moves(test.id)).map((m) => [m.region, m.state])).toEqual([['ap-south', 'pending']]);
    // Nor does it make a quorum of regions with a real region's move.
    const { test: other } = await judged({ confirmAfter: 5 });
    for (const region of ['eu-west', 'us-east', 'ap-south']) await run(other, region, 1, '2025-11-25');
    await run(other, 'ap-south', 2, '2026-07-28');
    expect((await run(other, 'eu-west', 3, '2026-07-28')).confirmedMoves).toEqual([]);
    expect((await moves(other.id)).every((m) => m.state === 'pending')).toBe(true);
    // The two real regions do.
    expect((await run(other, 'us-east', 4, '2026-07-28')).confirmedMoves.map((m) => m.region)).toEqual([
      'eu-west',
      'us-east',
    ]);
  });
});
