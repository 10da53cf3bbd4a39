// A realistic fleet for the dashboard's benchmark, written fast: servers, their tests and test
// states, a month of runs, era moves and one detection per server, into an already-created, empty
// database (migrated here). The small tables are planned here and inserted in one statement each;
// the runs (a million in the large fleet) are one `insert … select … from generate_series(…)`, into
// day partitions made for the range first, and rolled up by hour in one statement after.
//
// The data tells one consistent story per test and region:
//   - runs come in slots: slot s holds one run of every test × region, spread evenly over `days`;
//   - a newest-supported test speaks a timeline of revisions; the run at each change is the move's
//     run (`now X, was Y`, previous_revision set, a downgrade when X is older), and era_moves are
//     exactly those runs; test_states.current_revision is the timeline's last revision, so it is
//     the to_revision of the test/region's latest move;
//   - a few pinned tests (2025-03-26) stop passing near the end of the range and fail their
//     `mcp.protocol.revision` assertion from then on;
//   - ~1% of runs fail (timeout, server_error, unsupported_version) and ~0.5% are downgrades: the
//     server now and then answering one revision older. Those blips are not era moves (the next run
//     is back on the timeline), which keeps the era-move history near three per server;
//   - test_states are the latest run of each test/region; detections agree with what the tests speak.
//
// CLI: tsx web/bench/seed.ts <databaseUrl> [--servers 1000] [--runs 1000000] [--days 30] [--regions eu-west,us-east]
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureRunPartitions, openStore, rollUpStoredRuns } from '@mcp-fleet/store';
import pg from 'pg';
import { detectionOf } from './seed-detection';
import {
  DAY_MS,
  DEFAULT_DAYS,
  DEFAULT_REGIONS,
  INTERVAL_MS,
  NEVER,
  noise,
  planFleet,
  type SeedOptions,
  TIMEOUT_MS,
} from './seed-plan';
import { ERAS_SQL, PASSING_SQL, REVS_SQL, RUNS_SQL } from './seed-runs-sql';

export { DEFAULT_DAYS, DEFAULT_REGIONS, type SeedOptions } from './seed-plan';

/** Bump when the shape of the seeded data changes: the benchmark reseeds databases of another version. */
export const SEED_VERSION = '2';

export async function seedFleet(databaseUrl: string, opts: SeedOptions): Promise<{ serverIds: string[] }> {
  const days = opts.days ?? DEFAULT_DAYS;
  const regions = opts.regions ?? DEFAULT_REGIONS;
  const now = opts.now ?? new Date();
  const log = opts.log ?? (() => {});
  if (!Number.isInteger(opts.servers) || opts.servers < 1) throw new Error(`servers must be ≥ 1: ${opts.servers}`);
  if (!Number.isInteger(opts.runs) || opts.runs < 1) throw new Error(`runs must be ≥ 1: ${opts.runs}`);
  if (!(days > 0)) throw new Error(`days must be > 0: ${days}`);
  if (regions.length === 0 || new Set(regions).size !== regions.length) throw new Error('regions must be distinct');

  const plan = planFleet({ servers: opts.servers, runs: opts.runs, days, regions, now });
  const start = new Date(now.getTime() - days * DAY_MS);
  const store = await openStore({ databaseUrl });
  try {
    await store.migrate();
    // A day partition for every day of the range (a run's slot is before its finish): none in the default.
    await ensureRunPartitions(store.db, { from: new Date(start.getTime() - DAY_MS), now });
  } finally {
    await store.close();
  }

  const createdAt = new Date(now.getTime() - (days + 1) * DAY_MS);
  const slotMs = (days * DAY_MS) / plan.slotsPerTr;

  // One connection: the plan lives in a temporary table, and the session settings hold throughout.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const phase = async (what: string, fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    log(`  ${what}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  };
  try {
    const existing = await client.query<{ n: number }>(
      'select (select count(*) from servers)::int + (select count(*) from runs)::int as n',
    );
    if (existing.rows[0]!.n > 0) throw new Error('the database is not empty: seed a fresh one');
    await client.query(`set synchronous_commit = off`);
    await client.query(`set maintenance_work_mem = '256MB'`);
    await client.query(`set work_mem = '64MB'`);

    await phase(`servers, tests (${plan.servers.length}, ${plan.tests.length})`, async () => {
      await client.query(
        `insert into servers (id, name, url, headers, regions, interval_ms, timeout_ms, detection_interval_ms, source,
           created_at, updated_at)
         select id, name, 'http://127.0.0.1:9/' || name, '{}'::jsonb, null, ${INTERVAL_MS}, ${TIMEOUT_MS}, null, 'api',
           $2, $2
         from jsonb_to_recordset($1::jsonb) as x(id uuid, name text)
         order by name`,
        [JSON.stringify(plan.servers.map((s) => ({ id: s.id, name: s.name }))), createdAt],
      );
      await client.query(
        `insert into tests (id, server_id, mode, pinned_revision, created_at)
         select id, server_id, mode, pinned_revision, $2
         from jsonb_to_recordset($1::jsonb) as x(id uuid, server_id uuid, mode text, pinned_revision text)`,
        [JSON.stringify(plan.tests), createdAt],
      );
    });

    await client.query(
      `create temporary table seed_tr (
         q int primary key, test_id uuid not null, server_id uuid not null, region text not null, mode text not null,
         pin text, fail_from int, last_s int not null,
         rev0 text not null, s1 int not null, rev1 text, s2 int not null, rev2 text, s3 int not null, rev3 text)`,
    );
    await client.query(
      `insert into seed_tr
       select * from jsonb_to_recordset($1::jsonb) as x(q int, test_id uuid, server_id uuid, region text, mode text,
         pin text, fail_from int, last_s int, rev0 text, s1 int, rev1 text, s2 int, rev2 text, s3 int, rev3 text)`,
      [
        JSON.stringify(
          plan.trs.map((t) => ({
            q: t.q,
            test_id: t.testId,
            server_id: t.serverId,
            region: t.region,
            mode: t.mode,
            pin: t.pin,
            fail_from: t.failFrom,
            last_s: t.lastSlot,
            rev0: t.revs[0],
            s1: t.slots[0] ?? NEVER,
            rev1: t.revs[1] ?? null,
            s2: t.slots[1] ?? NEVER,
            rev2: t.revs[2] ?? null,
            s3: t.slots[2] ?? NEVER,
            rev3: t.revs[3] ?? null,
          })),
        ),
      ],
    );
    await client.query('analyze seed_tr');

    // The runs' secondary indexes are built once after the insert rather than maintained row by row:
    // whatever indexes the migrations define, recreated from their own definitions.
    const runIndexes = await client.query<{ name: string; def: string }>(
      `select quote_ident(i.indexname) as name, i.indexdef as def from pg_indexes i
       where i.schemaname = current_schema() and i.tablename = 'runs'
         and i.indexname not in (select conname from pg_constraint where conrelid = 'runs'::regclass)`,
    );
    await phase(`runs (${opts.runs.toLocaleString('en-US')})`, async () => {
      for (const ix of runIndexes.rows) await client.query(`drop index ${ix.name}`);
      await client.query(RUNS_SQL, [opts.runs, plan.Q, start, slotMs]);
      await client.query(`select setval(pg_get_serial_sequence('runs', 'id'), $1)`, [opts.runs]);
    });
    await phase(`runs indexes (${runIndexes.rows.length})`, async () => {
      // runs is partitioned: its indexes' definitions say ON ONLY (the parent alone); built here on every partition.
      for (const ix of runIndexes.rows) await client.query(ix.def.replace(/ ON ONLY /, ' ON '));
    });

    // What ingest would have rolled up run by run, in one statement.
    await phase('hourly rollups', async () => {
      const rollups = await openStore({ databaseUrl });
      try {
        await rollUpStoredRuns(rollups.db);
      } finally {
        await rollups.close();
      }
    });

    await phase('test states, era moves, detections', async () => {
      // Each test/region's state is its latest run: run (last slot)·Q + q.
      await client.query(
        `insert into test_states (test_id, region, current_revision, last_outcome, last_message, last_assertion,
           failing, last_run_id, last_run_at, last_scheduled_at)
         select t.test_id, t.region, coalesce(t.rev3, t.rev2, t.rev1, t.rev0), r.outcome, r.message, r.assertion,
           r.outcome not in ${PASSING_SQL}, r.id, r.finished_at, r.scheduled_at
         from seed_tr t join runs r on r.id = t.last_s::bigint * $1 + t.q + 1
         order by t.q`,
        [plan.Q],
      );
      await client.query(
        `insert into era_moves (server_id, test_id, region, run_id, from_revision, to_revision, downgrade,
           era_changed, at)
         select server_id, test_id, region, id, previous_revision, negotiated,
           array_position(k.revs, negotiated) < array_position(k.revs, previous_revision),
           k.eras[array_position(k.revs, negotiated)] <> k.eras[array_position(k.revs, previous_revision)],
           finished_at
         from runs cross join (select ${REVS_SQL} as revs, ${ERAS_SQL} as eras) k
         where previous_revision is not null
         order by finished_at, id`,
      );
      const detections = plan.servers.map((s) => {
        const d = detectionOf(s);
        // The latest detection: within the last day, from the first region.
        const at = new Date(now.getTime() - Math.floor(noise(s.n, 11) * DAY_MS));
        return {
          job_id: `seed-detect-${s.n}`,
          server_id: s.id,
          region: regions[0],
          outcome: d.outcome,
          newest_supported: d.newestSupported,
          result: d,
          at,
        };
      });
      await client.query(
        `insert into detections (job_id, server_id, region, outcome, newest_supported, result, at)
         select job_id, server_id, region, outcome, newest_supported, result, at
         from jsonb_to_recordset($1::jsonb) as x(job_id text, server_id uuid, region text, outcome text,
           newest_supported text, result jsonb, at timestamptz)
         order by at`,
        [JSON.stringify(detections)],
      );
    });

    // Vacuum as well as analyze: the visibility map lets the count queries scan indexes alone, as
    // they do on a database autovacuum has been keeping.
    // With asynchronous commit, vacuum may not mark pages all-visible before the commits are flushed.
    await client.query('set synchronous_commit = on');
    await client.query('select txid_current()');
    await phase('vacuum analyze', () => client.query('vacuum analyze'));
    return { serverIds: plan.servers.map((s) => s.id) };
  } finally {
    await client.end();
  }
}

/** Sanity of a seeded database: counts and the invariants the data promises. */
export async function describeSeed(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(`
      select
        (select count(*) from servers)::int as servers,
        (select count(*) from tests)::int as tests,
        (select count(*) from test_states)::int as test_states,
        (select count(*) from runs)::int as runs,
        (select count(*) from era_moves)::int as era_moves,
        (select count(*) from detections)::int as detections,
        (select count(*) from test_states where failing)::int as failing_states,
        (select count(*) from runs where outcome = 'downgrade')::int as downgrades,
        (select count(*) from runs where outcome not in ${PASSING_SQL})::int as failed_runs,
        (select count(*) from test_states s where s.current_revision is distinct from (
           select m.to_revision from era_moves m
           where m.test_id = s.test_id and m.region = s.region order by m.at desc, m.id desc limit 1)
         and exists (select 1 from era_moves m where m.test_id = s.test_id and m.region = s.region)
        )::int as states_off_their_latest_move`);
    return rows[0] as Record<string, number>;
  } finally {
    await client.end();
  }
}

async function cli(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      servers: { type: 'string', default: '1000' },
      runs: { type: 'string', default: '1000000' },
      days: { type: 'string', default: String(DEFAULT_DAYS) },
      regions: { type: 'string', default: DEFAULT_REGIONS.join(',') },
    },
  });
  const url = positionals[0];
  if (!url) {
    console.error(
      'usage: tsx web/bench/seed.ts <databaseUrl> [--servers 1000] [--runs 1000000] [--days 30] [--regions a,b]',
    );
    process.exit(2);
  }
  const opts = {
    servers: Number(values.servers),
    runs: Number(values.runs),
    days: Number(values.days),
    regions: values.regions.split(',').filter(Boolean),
    log: (m: string) => console.log(m),
  };
  const t0 = performance.now();
  console.log(`seeding ${opts.servers} servers, ${opts.runs.toLocaleString('en-US')} runs over ${opts.days} days`);
  await seedFleet(url, opts);
  console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  console.log(await describeSeed(url));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
