// Runs partitioned by day and their hourly rollups, on both databases: the day partitions are
// made, a run lands in its day, ingest stays idempotent by job id, retention drops whole days (and
// their references go null), the rollups count outcomes and latency as the runs say, and the 7 d
// and 30 d reads from rollups equal the answer from the raw runs.
import { type SQL, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dropRunPartitionsBefore,
  ensureRunPartitions,
  fitsRollups,
  fleetSummary,
  histogramQuantile,
  LATENCY_BOUNDS_MS,
  latencyByRegion,
  latencySlot,
  pruneRuns,
  RANGES,
  rangeWindow,
  recordRun,
  runPartitionName,
  runPartitions,
  type Store,
} from '../src';
import { BACKENDS, type Backend } from './backends';
import { handshakeRun, resultOf, serverWithTests } from './fixtures';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

async function rows<T>(store: Store, query: SQL): Promise<T[]> {
  return ((await store.db.execute(query)) as unknown as { rows: T[] }).rows;
}

describe('histogramQuantile', () => {
  it('interpolates inside the bucket holding the rank, and ends the top bucket at the max', () => {
    const counts = new Array(LATENCY_BOUNDS_MS.length + 1).fill(0);
    counts[latencySlot(7)] = 10; // (5, 10]
    expect(histogramQuantile(0.5, counts)).toBe(7.5);
    expect(histogramQuantile(1, counts)).toBe(10);
    const top = new Array(LATENCY_BOUNDS_MS.length + 1).fill(0);
    top[LATENCY_BOUNDS_MS.length] = 2;
    expect(histogramQuantile(1, top, 90_000)).toBe(90_000);
    expect(histogramQuantile(0.5, [0, 0])).toBeNaN();
  });
});

describe.each(BACKENDS)('runs partitioned by day and rolled up by hour (%s)', (_name, makeBackend) => {
  let backend: Backend;
  let store: Store;
  beforeAll(async () => {
    backend = makeBackend();
    store = await backend.open();
    await store.migrate();
  }, 120_000);
  afterAll(() => backend.dispose());

  it('makes today and the days ahead, and a run lands in its day', async () => {
    const now = new Date();
    await ensureRunPartitions(store.db, { now });
    const names = (await runPartitions(store.db)).map((p) => p.name);
    for (let d = 0; d <= 3; d++) expect(names).toContain(runPartitionName(new Date(now.getTime() + d * DAY_MS)));
    expect(names).toContain('runs_default');

    const { tests } = await serverWithTests(store.db);
    const answer = await recordRun(store.db, resultOf(tests[0]!, 'eu-west', now));
    expect(answer.duplicate).toBe(false);
    const [row] = await rows<{ part: string }>(
      store,
      sql`select tableoid::regclass::text as part from runs where job_id like 'job-%' order by id desc limit 1`,
    );
    // The fixture schedules 2 s before it finishes: at midnight that is yesterday.
    expect(row?.part).toBe(runPartitionName(new Date(now.getTime() - 2000)));
  });

  it('stays idempotent by job id: a redelivery writes no second run and no second rollup count', async () => {
    const { tests } = await serverWithTests(store.db);
    const at = new Date();
    const result = resultOf(tests[0]!, 'eu-west', at, handshakeRun(), `job-idem-${Date.now()}`);
    expect((await recordRun(store.db, result)).duplicate).toBe(false);
    expect((await recordRun(store.db, result)).duplicate).toBe(true);
    const [n] = await rows<{ runs: number; rolled: number }>(
      store,
      sql`select (select count(*)::int from runs where job_id = ${result.jobId}) as runs,
        (select coalesce(sum(runs), 0)::int from run_rollups_hourly where test_id = ${tests[0]!.id}) as rolled`,
    );
    expect(n).toEqual({ runs: 1, rolled: 1 });
  });

  it('a day made late takes its runs out of the default partition', async () => {
    const { tests } = await serverWithTests(store.db);
    const at = new Date(Date.now() + 10 * DAY_MS);
    await recordRun(store.db, resultOf(tests[0]!, 'eu-west', at));
    const part = async () =>
      (
        await rows<{ part: string }>(
          store,
          sql`select tableoid::regclass::text as part from runs where test_id = ${tests[0]!.id}`,
        )
      )[0]?.part;
    expect(await part()).toBe('runs_default');
    await ensureRunPartitions(store.db, { from: at, now: at, daysAhead: 0 });
    expect(await part()).toBe(runPartitionName(at));
  });

  it('retention drops whole days before the cutoff, deletes the rest row-wise, and leaves no reference', async () => {
    const { tests } = await serverWithTests(store.db, ['newest']);
    const test = tests[0]!;
    const old = new Date(Date.now() - 40 * DAY_MS);
    await ensureRunPartitions(store.db, { from: old, now: old, daysAhead: 1 });
    // Two runs on an old day; the second moves the revision (an era move pointing at it).
    await recordRun(store.db, resultOf(test, 'eu-west', old));
    await recordRun(
      store.db,
      resultOf(test, 'eu-west', new Date(old.getTime() + 60_000), handshakeRun({ negotiated: '2025-11-25' })),
    );
    // Received then, by control's clock.
    await store.db.execute(sql`update runs set received_at = scheduled_at where test_id = ${test.id}`);
    const dayName = runPartitionName(old);
    // A run filed under that old day but received now stays (retention keys on control's clock).
    const { tests: others } = await serverWithTests(store.db);
    await recordRun(store.db, resultOf(others[0]!, 'eu-west', new Date(old.getTime() + 120_000)));

    const cutoff = new Date(Date.now() - 30 * DAY_MS);
    const kept = await dropRunPartitionsBefore(store.db, cutoff);
    expect(kept.partitions).not.toContain(dayName);

    // Received lately, it goes row-wise, and the day goes with the next prune once it is empty of recent runs.
    await store.db.execute(
      sql`update runs set received_at = ${old.toISOString()}::timestamptz where test_id = ${others[0]!.id}`,
    );
    const pruned = await pruneRuns(store.db, { receivedBefore: cutoff });
    expect(pruned).toBe(3);
    expect((await runPartitions(store.db)).map((p) => p.name)).not.toContain(dayName);
    const [refs] = await rows<{ moves: number; states: number; nulls: number }>(
      store,
      sql`select
        (select count(*)::int from era_moves m where m.run_id is not null
          and not exists (select 1 from runs r where r.id = m.run_id)) as moves,
        (select count(*)::int from test_states s where s.last_run_id is not null
          and not exists (select 1 from runs r where r.id = s.last_run_id)) as states,
        (select count(*)::int from era_moves where test_id = ${test.id} and run_id is null) as nulls`,
    );
    expect(refs).toEqual({ moves: 0, states: 0, nulls: 1 });
  });

  it('rolls up outcomes and latency, and the 7 d and 30 d reads equal the raw runs', async () => {
    const { server, tests } = await serverWithTests(store.db, ['newest', '2025-03-26']);
    const now = new Date();
    await ensureRunPartitions(store.db, { from: new Date(now.getTime() - 31 * DAY_MS), now });
    const outcomes = ['success', 'success', 'timeout', 'downgrade', 'server_error'] as const;
    const millis = [3, 12, 10_020, 180, 47, 900, 2400];
    let i = 0;
    // Runs every ~7 h over 30 days, in two regions, for both tests.
    for (let t = now.getTime() - 30 * DAY_MS + HOUR_MS; t < now.getTime() - 60_000; t += 7 * HOUR_MS + 13 * 60_000) {
      for (const test of tests)
        for (const region of ['eu-west', 'us-east']) {
          const outcome = outcomes[i % outcomes.length]!;
          const m = millis[i % millis.length]!;
          i++;
          await recordRun(
            store.db,
            resultOf(
              test,
              region,
              new Date(t + (i % 5) * 60_000),
              handshakeRun({
                outcome,
                millis: m,
                negotiated: outcome === 'timeout' || outcome === 'server_error' ? null : '2025-06-18',
                mode: test.mode,
              }),
            ),
          );
        }
    }
    const [counts] = await rows<{ rolled: number; raw: number; timeouts: number; rawTimeouts: number }>(
      store,
      sql`select
        (select sum(runs)::int from run_rollups_hourly where server_id = ${server.id}) as rolled,
        (select count(*)::int from runs where server_id = ${server.id}) as raw,
        (select sum(outcomes[7])::int from run_rollups_hourly where server_id = ${server.id}) as timeouts,
        (select count(*)::int from runs where server_id = ${server.id} and outcome = 'timeout') as "rawTimeouts"`,
    );
    expect(counts!.rolled).toBe(counts!.raw);
    expect(counts!.timeouts).toBe(counts!.rawTimeouts);
    expect(counts!.raw).toBeGreaterThan(200);

    // Runs per region and outcome over a range not on the hour: whole hours from rollups, edges from runs.
    for (const [since, until] of [
      [new Date(now.getTime() - 30 * DAY_MS - 17 * 60_000), new Date(now.getTime() - 3 * DAY_MS + 29 * 60_000)],
      [new Date(now.getTime() - 7 * DAY_MS + 5 * 60_000), null],
    ] as const) {
      const summary = await fleetSummary(store.db, { since, until: until ?? undefined });
      const raw = await rows<{ region: string; outcome: string; runs: number }>(
        store,
        sql`select region, outcome, count(*)::int as runs from runs where finished_at >= ${since.toISOString()}::timestamptz
          ${until ? sql`and finished_at < ${until.toISOString()}::timestamptz` : sql``} group by 1, 2 order by 1, 2`,
      );
      expect(summary.runs.byRegionAndOutcome).toEqual(raw);
      expect(summary.runs.total).toBeGreaterThan(50);
    }

    for (const name of ['7d', '30d'] as const) {
      const window = rangeWindow(name, now.getTime());
      expect(fitsRollups(window)).toBe(true);
      const fromRollups = await latencyByRegion(store.db, server.id, window);
      const bucketMs = RANGES[name].ms / RANGES[name].buckets;
      expect(fromRollups.bucketMs).toBe(bucketMs);
      // The raw answer: the runs in each bucket and region, failures, nearest-rank quantiles.
      const stored = await rows<{ region: string; finished: Date | string; outcome: string; millis: number }>(
        store,
        sql`select region, finished_at as finished, outcome, millis from runs where server_id = ${server.id}
          and finished_at >= ${window.since.toISOString()}::timestamptz and finished_at < ${window.until.toISOString()}::timestamptz`,
      );
      const raw = new Map<string, { runs: number; failed: number; millis: number[] }>();
      const key = (at: Date, region: string) => `${at.toISOString()} ${region}`;
      for (const r of stored) {
        const b = Math.floor((new Date(r.finished).getTime() - window.since.getTime()) / bucketMs);
        const k = key(new Date(window.since.getTime() + (b + 1) * bucketMs), r.region);
        const e = raw.get(k) ?? { runs: 0, failed: 0, millis: [] };
        raw.set(k, e);
        e.runs++;
        if (r.outcome !== 'success' && r.outcome !== 'downgrade') e.failed++;
        e.millis.push(r.millis);
      }
      expect(fromRollups.points.map((p) => key(p.at, p.region)).sort()).toEqual([...raw.keys()].sort());
      const lower = (ms: number) => LATENCY_BOUNDS_MS[latencySlot(ms) - 1] ?? 0;
      const upper = (ms: number) => LATENCY_BOUNDS_MS[latencySlot(ms)] ?? Number.POSITIVE_INFINITY;
      for (const p of fromRollups.points) {
        const r = raw.get(key(p.at, p.region))!;
        expect([p.runs, p.failed]).toEqual([r.runs, r.failed]);
        const sorted = [...r.millis].sort((a, b) => a - b);
        for (const [q, got] of [
          [0.5, p.p50],
          [0.95, p.p95],
        ] as const) {
          // The histogram's quantile lies in the bucket of the exact (nearest-rank) one.
          const exact = sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
          expect(got).toBeGreaterThanOrEqual(lower(exact));
          expect(got).toBeLessThanOrEqual(upper(exact));
        }
      }
    }
  }, 120_000);
});
