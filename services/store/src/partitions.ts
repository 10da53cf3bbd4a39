// Runs are partitioned by day (UTC) on scheduled_at (migration 0007): a partition per day named
// runs_pYYYYMMDD, and runs_default for a slot time no day partition holds. Control makes the days
// ahead at start and daily (ensureRunPartitions); retention drops whole days (dropRunPartitionsBefore).
import { sql } from 'drizzle-orm';
import type { Db } from './db';

const DAY_MS = 86_400_000;
/** How many days after today get their partition ahead of time. */
export const PARTITION_DAYS_AHEAD = 3;

/** The partition name of the UTC day holding `at`. */
export function runPartitionName(at: Date): string {
  return `runs_p${at.toISOString().slice(0, 10).replaceAll('-', '')}`;
}

function dayStart(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/**
 * Make the day partitions from `from`'s day (default today) through today + `daysAhead`; the
 * existing ones stay. Rows a new day's range would take from the default partition are moved in
 * (Postgres refuses to attach a range the default already holds rows of).
 */
export async function ensureRunPartitions(
  db: Db,
  opts: { now?: Date; from?: Date; daysAhead?: number } = {},
): Promise<string[]> {
  const now = opts.now ?? new Date();
  const first = dayStart(opts.from ?? now).getTime();
  const last = dayStart(now).getTime() + (opts.daysAhead ?? PARTITION_DAYS_AHEAD) * DAY_MS;
  const existing = new Set((await runPartitions(db)).map((p) => p.name));
  const made: string[] = [];
  for (let day = first; day <= last; day += DAY_MS) {
    const start = new Date(day);
    const name = runPartitionName(start);
    if (existing.has(name)) continue;
    await makeDay(db, name, start, new Date(day + DAY_MS));
    made.push(name);
  }
  return made;
}

async function makeDay(db: Db, name: string, from: Date, to: Date): Promise<void> {
  const bounds = sql.raw(`from ('${from.toISOString()}') to ('${to.toISOString()}')`);
  const table = sql.identifier(name);
  await db.transaction(async (tx) => {
    // Two controls making the same day: the second finds it made.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('mcp-fleet run partitions'))`);
    const [found] = (
      (await tx.execute(sql`select to_regclass(${name}) is not null as made`)) as unknown as {
        rows: { made: boolean }[];
      }
    ).rows;
    if (found?.made) return;
    const inRange = sql`scheduled_at >= ${from.toISOString()}::timestamptz and scheduled_at < ${to.toISOString()}::timestamptz`;
    const [held] = (
      (await tx.execute(sql`select exists (select 1 from runs_default where ${inRange}) as held`)) as unknown as {
        rows: { held: boolean }[];
      }
    ).rows;
    if (!held) {
      await tx.execute(sql`create table ${table} partition of runs for values ${bounds}`);
      return;
    }
    // The default partition holds runs of that day (a day not made in time): move them into it.
    await tx.execute(sql`create table ${table} (like runs including defaults)`);
    await tx.execute(sql`with moved as (delete from runs_default where ${inRange} returning *)
      insert into ${table} select * from moved`);
    await tx.execute(sql`alter table runs attach partition ${table} for values ${bounds}`);
  });
}

export interface RunPartition {
  name: string;
  /** The day's start and end (UTC); null for the default partition. */
  from: Date | null;
  to: Date | null;
}

/** The partitions of runs, by their names (runs_pYYYYMMDD, runs_default). */
export async function runPartitions(db: Db): Promise<RunPartition[]> {
  const { rows } = (await db.execute(sql`
    select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'runs'::regclass order by c.relname`)) as unknown as { rows: { name: string }[] };
  return rows.map(({ name }) => {
    const m = /^runs_p(\d{4})(\d{2})(\d{2})$/.exec(name);
    if (!m) return { name, from: null, to: null };
    const from = new Date(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`);
    return { name, from, to: new Date(from.getTime() + DAY_MS) };
  });
}

/**
 * Drop the day partitions whose whole day ends at or before `cutoff` and whose every run control
 * received before it (received_at is control's clock; a slot time is only what the result says, so a
 * run filed under an old day but received lately stays, for the row-wise prune). The references to
 * their runs (once foreign keys with ON DELETE SET NULL) are set null first, in the same transaction.
 */
export async function dropRunPartitionsBefore(db: Db, cutoff: Date): Promise<{ partitions: string[]; runs: number }> {
  const old = (await runPartitions(db)).filter((p) => p.to && p.to.getTime() <= cutoff.getTime());
  let gone = 0;
  const dropped: string[] = [];
  for (const p of old) {
    const table = sql.identifier(p.name);
    await db.transaction(async (tx) => {
      // Two controls pruning at once: the second finds the day gone.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('mcp-fleet run partitions'))`);
      const [found] = (
        (await tx.execute(sql`select to_regclass(${p.name}) is not null as made`)) as unknown as {
          rows: { made: boolean }[];
        }
      ).rows;
      if (!found?.made) return;
      const [n] = (
        (await tx.execute(sql`select count(*)::int as n, max(received_at) as newest from ${table}`)) as unknown as {
          rows: { n: number; newest: Date | string | null }[];
        }
      ).rows;
      if (n?.newest && new Date(n.newest).getTime() >= cutoff.getTime()) return;
      await forgetRuns(tx, sql`select id from ${table}`);
      await tx.execute(sql`drop table ${table}`);
      gone += n?.n ?? 0;
      dropped.push(p.name);
    });
  }
  return { partitions: dropped, runs: gone };
}

/** Set null every reference to the runs `ids` selects (what the foreign keys' ON DELETE SET NULL did). */
export async function forgetRuns(tx: Db, ids: ReturnType<typeof sql>): Promise<void> {
  for (const [table, column] of [
    ['test_states', 'last_run_id'],
    ['check_states', 'last_run_id'],
    ['check_changes', 'run_id'],
    ['surface_heads', 'last_run_id'],
    ['surface_changes', 'run_id'],
    ['era_moves', 'run_id'],
  ] as const) {
    const c = sql.identifier(column);
    await tx.execute(sql`update ${sql.identifier(table)} set ${c} = null where ${c} in (${ids})`);
  }
}
