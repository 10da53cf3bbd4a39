// Group commit (batch-ingest.ts) must do exactly what recording the same runs one by one does. The
// oracle is recordRun itself: one database takes a seeded stream of results run by run, another the
// same stream in batches, and every table ingest writes, and every answer, must come out the same.
// Then the attacks: a batch carrying unknown tests, a test of another server, a forged surface, an id
// that is not a uuid, duplicates; and batches racing over the same tests.
import { DEFAULT_JUDGEMENT } from '@mcp-fleet/config';
import type { Revision } from '@mcp-fleet/probe';
import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eraMoves,
  type RecordRunAnswer,
  type RecordRunsAnswer,
  type RunResult,
  recordRun,
  recordRuns,
  regionDisagreements,
  runRollupsHourly,
  runs,
  type Store,
  type Test,
  testSlots,
  testStates,
} from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, minute, resultOf, seededRandom, serverWithTests } from './fixtures';

type Event = { test: number; region: string; slot: number; negotiated: string | null; outcome: string; job: string };

/** A fleet's results: mostly steady, with moves, failures, outages, late slots and redeliveries. */
function stream(seed: number, testCount: number, length: number): Event[] {
  const rnd = seededRandom(seed);
  const regions = ['eu-west', 'us-east'];
  const out: Event[] = [];
  for (let k = 0; k < length; k++) {
    const r = rnd();
    if (r < 0.06 && out.length) {
      out.push({ ...out[Math.floor(rnd() * out.length)]! }); // a redelivery: the same job again
      continue;
    }
    const test = Math.floor(rnd() * testCount);
    const region = regions[Math.floor(rnd() * regions.length)]!;
    // Slots mostly move forward; one in ten is late (an older slot than the last).
    const slot = Math.floor(k / 3) - (rnd() < 0.1 ? 5 : 0);
    const m = rnd();
    const [negotiated, outcome] =
      m < 0.8
        ? ['2025-06-18', 'success']
        : m < 0.88
          ? ['2025-11-25', 'success']
          : m < 0.96
            ? [null, 'timeout']
            : ['2025-03-26', 'downgrade'];
    out.push({ test, region, slot, negotiated, outcome, job: `job-${seed}-${test}-${region}-${slot}-${k}` });
  }
  return out;
}

describe.each(BACKENDS)('group commit on %s', (_name, make) => {
  const one = make();
  const batched = make();
  let a: Store;
  let b: Store;
  beforeAll(async () => {
    a = await one.open();
    b = await batched.open();
    await a.migrate();
    await b.migrate();
  });
  afterAll(async () => {
    await one.dispose();
    await batched.dispose();
  });

  /** The same fleet in a store: newest-supported and pinned tests, servers judged with confirmation and quorum. */
  async function fleet(store: Store, prefix: string): Promise<Test[]> {
    const made: Test[] = [];
    for (let s = 0; s < 24; s++) {
      const { tests } = await serverWithTests(store.db, s % 4 === 3 ? ['2025-06-18'] : ['newest'], {
        name: `${prefix}-${s}`,
        judgement: { ...DEFAULT_JUDGEMENT, confirmAfter: 2, failAfter: 2, disagreementAfterMs: 0 },
      });
      made.push(...tests);
    }
    return made;
  }

  const resultFor = (tests: Test[], e: Event): RunResult => ({
    ...resultOf(
      tests[e.test]!,
      e.region,
      minute(e.slot),
      handshakeRun({
        negotiated: e.negotiated as Revision | null,
        outcome: e.outcome as 'success',
        mode: tests[e.test]!.mode,
        requested: (tests[e.test]!.pinnedRevision ?? '2025-11-25') as Revision,
      }),
      e.job,
    ),
    scheduledAt: minute(e.slot),
  });

  /** What ingest wrote, by test instead of generated ids; the wall clock's receivedAt left out. */
  async function written(store: Store, tests: Test[]) {
    const name = new Map(tests.map((t, i) => [t.id, i]));
    const by = <T extends { testId: string }>(rows: T[]) =>
      rows
        .map(({ testId, ...rest }) => ({ test: name.get(testId), ...rest }))
        .filter((r) => r.test !== undefined)
        .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
    const strip = <T extends object>(rows: T[], keys: string[]) =>
      rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !keys.includes(k))));
    return {
      runs: by(strip(await store.db.select().from(runs), ['id', 'serverId', 'receivedAt']) as { testId: string }[]),
      states: by(strip(await store.db.select().from(testStates), ['lastRunId']) as { testId: string }[]),
      slots: by(strip(await store.db.select().from(testSlots), ['serverId']) as { testId: string }[]),
      rollups: by(strip(await store.db.select().from(runRollupsHourly), ['serverId']) as { testId: string }[]),
      moves: by(strip(await store.db.select().from(eraMoves), ['id', 'serverId', 'runId']) as { testId: string }[]),
      disagreements: by(
        strip(await store.db.select().from(regionDisagreements), ['id', 'serverId']) as { testId: string }[],
      ),
    };
  }

  const answerOf = (x: RecordRunAnswer) => (x.duplicate ? x : { ...x, runId: 0 });

  it.each([1, 2, 3])('writes what run-by-run ingest writes, and answers the same (stream %i)', async (seed) => {
    const [ta, tb] = [await fleet(a, `fleet-${seed}`), await fleet(b, `fleet-${seed}`)];
    const events = stream(seed, ta.length, 600);
    const taken = { quiet: 0, slow: 0, fallbacks: 0 };
    const rnd = seededRandom(seed * 7);
    const answersA: unknown[] = [];
    const answersB: unknown[] = [];
    for (const e of events) answersA.push(answerOf(await recordRun(a.db, resultFor(ta, e))));
    for (let k = 0; k < events.length; ) {
      const size = 1 + Math.floor(rnd() * 40);
      const batch = events.slice(k, k + size);
      k += batch.length;
      const stats = { quiet: 0, slow: 0, fallback: false };
      const answers = await recordRuns(
        b.db,
        batch.map((e) => resultFor(tb, e)),
        stats,
      );
      taken.quiet += stats.quiet;
      taken.slow += stats.slow;
      if (stats.fallback) taken.fallbacks++;
      for (const x of answers) {
        if (!x.ok) throw x.error;
        answersB.push(answerOf(x.answer));
      }
    }
    expect(answersB).toEqual(answersA);
    const [wa, wb] = [await written(a, ta), await written(b, tb)];
    expect(wb.runs).toHaveLength(new Set(events.map((e) => e.job)).size);
    // The stream must have exercised what it is for: quiet runs, moves, outages, disagreements.
    expect(wa.moves.length).toBeGreaterThan(3);
    expect(wa.disagreements.length).toBeGreaterThan(0);
    expect(answersA.filter((x) => (x as { stale?: boolean }).stale).length).toBeGreaterThan(0);
    expect(answersA.filter((x) => (x as { duplicate: boolean }).duplicate).length).toBeGreaterThan(0);
    // Both ways of a batch were taken, and no batch had to fall back to run by run.
    expect(taken.quiet).toBeGreaterThan(80);
    expect(taken.slow).toBeGreaterThan(100);
    expect(taken.fallbacks).toBe(0);
    expect(wb).toEqual(wa);
  });

  it('answers each bad run with its own error and writes the rest of the batch', async () => {
    const { tests } = await serverWithTests(b.db);
    const { tests: other } = await serverWithTests(b.db);
    const good = [0, 1, 2].map((n) => resultOf(tests[0]!, 'eu-west', minute(100 + n)));
    const unknown = { ...resultOf(tests[0]!, 'eu-west', minute(110)), testId: '00000000-0000-4000-8000-000000000000' };
    const foreign = { ...resultOf(tests[0]!, 'us-east', minute(111)), serverId: other[0]!.serverId };
    const forged = {
      ...resultOf(tests[0]!, 'eu-west', minute(112)),
      surfaces: [{ era: 'modern', revision: '2026-07-28', hash: 'f'.repeat(64), body: '{}' }],
    } as unknown as RunResult;
    const notUuid = { ...resultOf(other[0]!, 'eu-west', minute(113)), testId: 'not-a-uuid' };
    const answers = await recordRuns(b.db, [good[0]!, unknown, good[1]!, foreign, forged, notUuid, good[2]!]);
    const failed = (x: RecordRunsAnswer) => (x.ok ? null : x.error.message);
    expect(answers.map((x) => x.ok)).toEqual([true, false, true, false, false, false, true]);
    expect(failed(answers[1]!)).toMatch(/no test/);
    expect(failed(answers[3]!)).toMatch(/not a test of server/);
    expect(failed(answers[5]!)).toMatch(/not a test\/server id/);
    const rows = await b.db.select().from(runs).where(eq(runs.testId, tests[0]!.id)).orderBy(asc(runs.scheduledAt));
    expect(rows.map((r) => r.jobId)).toEqual(good.map((g) => g.jobId));
    // A second delivery of the whole batch writes nothing more and says so.
    const again = await recordRuns(b.db, good);
    expect(again.map((x) => x.ok && x.answer.duplicate)).toEqual([true, true, true]);
  });

  it('writes text that needs escaping exactly, and answers a run Postgres cannot hold with its own error', async () => {
    // Quiet runs travel to Postgres as one JSON parameter: a hostile agent's text must arrive as it
    // was sent (quotes, backslashes, JSON of its own, newlines, astral characters), and a NUL, which
    // no text column can hold, must cost only its own run.
    const made = await Promise.all([0, 1, 2, 3].map(() => serverWithTests(b.db)));
    const [t0, t1, t2, t3] = made.map((m) => m.tests[0]!);
    const odd = 'a "quoted" \\ back\\slash\n{"x":[1,2]} \u2028 😀 \'; drop table runs; --';
    const evidence = { status: 500, bodyPreview: odd, message: '"}]' };
    const first = [t0!, t1!].map((t) =>
      resultOf(t, 'eu-west', minute(200), handshakeRun({ message: odd, evidence: evidence as never })),
    );
    const nul = resultOf(t2!, 'eu-west', minute(200), handshakeRun({ message: 'a\u0000b' }));
    const plain = resultOf(t3!, 'eu-west', minute(200));
    const stats = { quiet: 0, slow: 0, fallback: false };
    const answers = await recordRuns(b.db, [...first, nul, plain], stats);
    expect(answers.map((x) => x.ok)).toEqual([true, true, false, true]);
    expect((answers[2] as { error: { code?: string } }).error.code ?? '').toMatch(/^22/);
    expect(stats.fallback).toBe(true);
    // Again without the NUL: the quiet way, one statement for all.
    const next = [t0!, t1!, t3!].map((t) =>
      resultOf(t, 'eu-west', minute(201), handshakeRun({ message: odd, evidence: evidence as never })),
    );
    const quietStats = { quiet: 0, slow: 0, fallback: false };
    const again = await recordRuns(b.db, next, quietStats);
    expect(again.every((x) => x.ok)).toBe(true);
    expect(quietStats).toEqual({ quiet: 3, slow: 0, fallback: false });
    for (const r of [...first, plain, ...next]) {
      const [row] = await b.db.select().from(runs).where(eq(runs.jobId, r.jobId));
      expect(row?.message).toBe(r.run.message);
      expect(row?.evidence).toEqual(r.run.evidence ?? null);
      expect(row?.scheduledAt.getTime()).toBe(new Date(r.scheduledAt).getTime());
    }
    expect(await b.db.select().from(runs).where(eq(runs.jobId, nul.jobId))).toEqual([]);
  });

  it('lets batches over the same tests race without losing or doubling a run', async () => {
    const made: Test[] = [];
    for (let s = 0; s < 6; s++) made.push(...(await serverWithTests(b.db)).tests);
    const all = made.flatMap((t, i) =>
      ['eu-west', 'us-east'].flatMap((region) => [0, 1, 2].map((n) => resultOf(t, region, minute(200 + n + i)))),
    );
    // Each batch takes every test, in its own order: they lock the same rows.
    const shuffled = (seed: number) => {
      const rnd = seededRandom(seed);
      return [...all].sort(() => rnd() - 0.5);
    };
    const batches = [1, 2, 3, 4].map((seed) => shuffled(seed).filter((_, k) => k % 4 === seed - 1 || k % 3 === 0));
    const answers = (await Promise.all(batches.map((batch) => recordRuns(b.db, batch)))).flat();
    expect(answers.every((x) => x.ok)).toBe(true);
    const ids = made.map((t) => t.id);
    const rows = (await b.db.select({ jobId: runs.jobId, testId: runs.testId }).from(runs)).filter((r) =>
      ids.includes(r.testId),
    );
    const sent = new Set(batches.flat().map((r) => r.jobId));
    expect(rows).toHaveLength(sent.size);
    expect(answers.filter((x) => x.ok && !x.answer.duplicate)).toHaveLength(sent.size);
    const states = (await b.db.select().from(testStates)).filter((s) => ids.includes(s.testId));
    expect(states).toHaveLength(made.length * 2);
  });
});
