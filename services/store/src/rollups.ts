// Hourly rollups of runs per test and region (run_rollups_hourly): how many runs, how many of each
// outcome, and a latency histogram in fixed buckets, so the dashboard's 7 d and 30 d ranges read
// hours, not runs. Ingest writes them in the run's own transaction, only for a run it newly
// inserted, so a redelivered result counts once; one multi-row upsert per call, so a batch of
// results rolls up in one statement.
import { OUTCOME_NAMES } from '@mcp-fleet/probe';
import { sql } from 'drizzle-orm';
import type { Db } from './db';

export const HOUR_MS = 3_600_000;

/**
 * The outcomes counted, by position in `outcomes` (one more slot counts any other). Append only:
 * stored rows count by these positions (migration 0007's backfill lists them too).
 */
export const ROLLUP_OUTCOMES: readonly string[] = OUTCOME_NAMES;

/**
 * Upper bounds (ms, inclusive) of the latency buckets; one more bucket holds runs above the last.
 * Append only, like ROLLUP_OUTCOMES. Fine where handshakes sit (5 ms – 1 s), coarse up to a minute.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = [
  5, 10, 25, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 4000, 5000, 7500, 10000, 15000, 20000,
  30000, 60000,
];

/** What a run contributes to its hour. */
export interface RollupRun {
  testId: string;
  serverId: string;
  region: string;
  outcome: string;
  millis: number;
  finishedAt: Date;
}

export function outcomeSlot(outcome: string): number {
  const i = ROLLUP_OUTCOMES.indexOf(outcome);
  return i === -1 ? ROLLUP_OUTCOMES.length : i;
}

export function latencySlot(millis: number): number {
  const i = LATENCY_BOUNDS_MS.findIndex((b) => millis <= b);
  return i === -1 ? LATENCY_BOUNDS_MS.length : i;
}

export function hourOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
}

/** Element-wise sum; the shorter array counts as zeros (a row stored before a slot was appended). */
export function addCounts(a: readonly number[], b: readonly number[]): number[] {
  return Array.from({ length: Math.max(a.length, b.length) }, (_, i) => (a[i] ?? 0) + (b[i] ?? 0));
}

/** `a + b` element-wise in SQL, for the upsert (same rule as addCounts). */
const addSql = (column: string) =>
  sql.raw(`array(select coalesce(x, 0) + coalesce(y, 0)
    from unnest(run_rollups_hourly.${column}, excluded.${column}) with ordinality as t(x, y, n) order by n)`);

/**
 * Add the runs to their hours: one statement for all of them. Call it in the transaction that
 * inserted the runs, with only the runs it newly inserted.
 */
export async function rollUpRuns(tx: Db, list: readonly RollupRun[]): Promise<void> {
  if (list.length === 0) return;
  // One row per (test, region, hour): an upsert may not touch a row twice in one statement.
  const rows = new Map<
    string,
    {
      testId: string;
      serverId: string;
      region: string;
      hour: Date;
      runs: number;
      o: number[];
      l: number[];
      max: number;
    }
  >();
  for (const r of list) {
    const hour = hourOf(r.finishedAt);
    const key = `${r.testId}\u0000${r.region}\u0000${hour.getTime()}`;
    let row = rows.get(key);
    if (!row) {
      row = {
        testId: r.testId,
        serverId: r.serverId,
        region: r.region,
        hour,
        runs: 0,
        o: new Array(ROLLUP_OUTCOMES.length + 1).fill(0),
        l: new Array(LATENCY_BOUNDS_MS.length + 1).fill(0),
        max: 0,
      };
      rows.set(key, row);
    }
    const millis = Math.max(0, Math.round(r.millis));
    row.runs++;
    row.o[outcomeSlot(r.outcome)]!++;
    row.l[latencySlot(millis)]!++;
    row.max = Math.max(row.max, millis);
  }
  // Sorted: two batches touching the same hours lock them in the same order (kept by `order by n`).
  // The rows travel as one JSON parameter: building a multi-row insert through drizzle cost control
  // more CPU than the statement costs Postgres (bench:pipeline's profile).
  const json = JSON.stringify(
    [...rows.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, r]) => ({
        test_id: r.testId,
        server_id: r.serverId,
        region: r.region,
        hour: r.hour.toISOString(),
        runs: r.runs,
        outcomes: r.o,
        latency: r.l,
        max_millis: r.max,
      })),
  );
  await tx.execute(sql`
    insert into run_rollups_hourly (test_id, server_id, region, hour, runs, outcomes, latency, max_millis)
    select v.test_id, v.server_id, v.region, v.hour, v.runs, v.outcomes, v.latency, v.max_millis
    from rows from (jsonb_to_recordset(${json}::jsonb) as (
      test_id uuid, server_id uuid, region text, hour timestamptz, runs integer, outcomes integer[],
      latency integer[], max_millis integer)) with ordinality as v(
      test_id, server_id, region, hour, runs, outcomes, latency, max_millis, n)
    order by v.n
    on conflict (test_id, region, hour) do update set
      runs = run_rollups_hourly.runs + excluded.runs,
      outcomes = ${addSql('outcomes')},
      latency = ${addSql('latency')},
      max_millis = greatest(run_rollups_hourly.max_millis, excluded.max_millis)`);
}

/**
 * The q-quantile (0..1) of a latency histogram in LATENCY_BOUNDS_MS buckets, interpolated linearly
 * inside its bucket (as Prometheus' histogram_quantile); the top bucket ends at `maxMillis`.
 * NaN for an empty histogram.
 */
export function histogramQuantile(q: number, counts: readonly number[], maxMillis?: number): number {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return Number.NaN;
  const rank = Math.min(1, Math.max(0, q)) * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] ?? 0;
    if (n > 0 && seen + n >= rank) {
      const lower = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      const upper =
        i < LATENCY_BOUNDS_MS.length ? LATENCY_BOUNDS_MS[i]! : Math.max(lower, maxMillis ?? LATENCY_BOUNDS_MS.at(-1)!);
      const top = maxMillis === undefined ? upper : Math.min(upper, Math.max(lower, maxMillis));
      return lower + ((top - lower) * (rank - seen)) / n;
    }
    seen += n;
  }
  return maxMillis ?? LATENCY_BOUNDS_MS.at(-1)!;
}

/** Whether a range can be read from hourly rollups: it starts on an hour and its buckets are whole hours. */
export function fitsRollups(q: { since: Date; until: Date; buckets: number }): boolean {
  const bucketMs = (q.until.getTime() - q.since.getTime()) / q.buckets;
  return q.since.getTime() % HOUR_MS === 0 && bucketMs >= HOUR_MS && bucketMs % HOUR_MS === 0;
}

/**
 * Roll up runs already stored (finished in [since, until), all when omitted) into empty hours:
 * for a database filled without ingest (the benchmark's seed). Not additive: run it on hours that
 * have no rollup yet.
 */
export async function rollUpStoredRuns(db: Db, range: { since?: Date; until?: Date } = {}): Promise<void> {
  const outcomes = [
    ...ROLLUP_OUTCOMES.map((o) => sql`count(*) filter (where outcome = ${o})`),
    sql`count(*) filter (where outcome not in (${sql.join(
      ROLLUP_OUTCOMES.map((o) => sql`${o}`),
      sql`, `,
    )}))`,
  ];
  const latency = LATENCY_BOUNDS_MS.map((b, i) =>
    i === 0
      ? sql`count(*) filter (where millis <= ${b})`
      : sql`count(*) filter (where millis > ${LATENCY_BOUNDS_MS[i - 1]} and millis <= ${b})`,
  );
  latency.push(sql`count(*) filter (where millis > ${LATENCY_BOUNDS_MS.at(-1)})`);
  await db.execute(sql`
    insert into run_rollups_hourly (test_id, server_id, region, hour, runs, outcomes, latency, max_millis)
    select test_id, min(server_id::text)::uuid, region,
      date_trunc('hour', finished_at at time zone 'UTC') at time zone 'UTC',
      count(*), array[${sql.join(outcomes, sql`, `)}]::integer[], array[${sql.join(latency, sql`, `)}]::integer[],
      max(millis)
    from runs
    where true ${range.since ? sql`and finished_at >= ${range.since.toISOString()}::timestamptz` : sql``}
      ${range.until ? sql`and finished_at < ${range.until.toISOString()}::timestamptz` : sql``}
    group by 1, 3, 4`);
}

/**
 * Runs per region and outcome finished in [since, until) (no end when until is null): the whole
 * hours inside from the rollups, the partial hours at either edge from the runs themselves, so the
 * answer is exact while a long range reads hours. An outcome not in ROLLUP_OUTCOMES reads `other`
 * from the rollups.
 */
export async function outcomeCounts(
  db: Db,
  q: { since: Date; until: Date | null; now?: Date },
): Promise<{ region: string; outcome: string; runs: number }[]> {
  const since = q.since.getTime();
  const end = q.until?.getTime() ?? (q.now ?? new Date()).getTime();
  const firstHour = Math.ceil(since / HOUR_MS) * HOUR_MS;
  const lastHour = Math.floor(end / HOUR_MS) * HOUR_MS;
  const iso = (ms: number) => new Date(ms).toISOString();
  const untilSql = q.until ? sql`and finished_at < ${q.until.toISOString()}::timestamptz` : sql``;
  const counted = new Map<string, { region: string; outcome: string; runs: number }>();
  const add = (region: string, outcome: string, runs: number) => {
    const key = `${region}\u0000${outcome}`;
    const row = counted.get(key) ?? { region, outcome, runs: 0 };
    counted.set(key, row);
    row.runs += runs;
  };
  const rawWhere =
    firstHour < lastHour
      ? sql`(finished_at >= ${iso(since)}::timestamptz and finished_at < ${iso(firstHour)}::timestamptz)
          or (finished_at >= ${iso(lastHour)}::timestamptz ${untilSql})`
      : sql`finished_at >= ${iso(since)}::timestamptz ${untilSql}`;
  const raw = (await db.execute(
    sql`select region, outcome, count(*)::int as runs from runs where ${rawWhere} group by 1, 2`,
  )) as unknown as { rows: { region: string; outcome: string; runs: number }[] };
  for (const r of raw.rows) add(r.region, r.outcome, Number(r.runs));
  if (firstHour < lastHour) {
    const hours = (await db.execute(sql`
      select region, u.slot::int as slot, sum(u.n)::bigint as runs
      from run_rollups_hourly, unnest(outcomes) with ordinality as u(n, slot)
      where hour >= ${iso(firstHour)}::timestamptz and hour < ${iso(lastHour)}::timestamptz and u.n > 0
      group by 1, 2`)) as unknown as { rows: { region: string; slot: number; runs: string | number }[] };
    for (const h of hours.rows) add(h.region, ROLLUP_OUTCOMES[h.slot - 1] ?? 'other', Number(h.runs));
  }
  return [...counted.values()].sort((a, b) =>
    a.region < b.region ? -1 : a.region > b.region ? 1 : a.outcome < b.outcome ? -1 : a.outcome > b.outcome ? 1 : 0,
  );
}
