// `npm run bench:current-revisions`: what the scheduling control's read-back costs (store's
// currentRevisions, docs/control-replicas.md): before publishing the jobs due in a tick, it reads
// their tests' current revisions. A fleet of BENCH_TESTS tests (default 100,000) in 2 regions, each
// with a state, seeded in SQL into a fresh database; then reads of batches the size a tick holds at
// 100, 1,000 and 5,000 jobs/s (tick 200 ms: 20, 200, 1,000 tests) and a whole interval's worth.
// Prints p50/p99 per batch size. BENCH_ADMIN_URL: the Postgres to create databases in (loopback).
import { randomBytes } from 'node:crypto';
import { currentRevisions, openStore } from '@mcp-fleet/store';
import { columns } from '../table';

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TESTS = Number(process.env.BENCH_TESTS ?? 100_000);
const ROUNDS = 50;
const BATCHES = [20, 200, 1_000, 10_000];

async function admin(statement: string): Promise<void> {
  const store = await openStore({ databaseUrl: ADMIN_URL, poolSize: 1, keyring: null });
  try {
    await store.db.execute(statement);
  } finally {
    await store.close();
  }
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function main(): Promise<void> {
  const name = `mcpfleet_bench_cr_${randomBytes(5).toString('hex')}`;
  await admin(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const store = await openStore({ databaseUrl: url.toString(), keyring: null });
  try {
    await store.migrate();
    const seeded = Date.now();
    // One server per test, in SQL: the read only touches test_states (and its primary index).
    await store.db.execute(`
      insert into servers (name, url, interval_ms, timeout_ms)
      select 'bench-' || i, 'https://bench-' || i || '.example.com/mcp', 100000, 10000
      from generate_series(1, ${Math.floor(TESTS)}) as i`);
    await store.db.execute(`insert into tests (server_id, mode) select id, 'newest' from servers`);
    await store.db.execute(`
      insert into test_states (test_id, region, current_revision)
      select t.id, r.region, '2026-07-28' from tests t cross join (values ('eu-west'), ('us-east')) as r(region)`);
    await store.db.execute('analyze test_states');
    const ids = ((await store.db.execute('select id from tests')) as unknown as { rows: { id: string }[] }).rows.map(
      (r) => r.id,
    );
    console.log(`seeded ${ids.length} tests × 2 regions in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);
    const rows: string[][] = [];
    for (const size of BATCHES) {
      const times: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const start = (round * size) % Math.max(1, ids.length - size);
        const batch = ids.slice(start, start + size);
        const t0 = performance.now();
        const read = await currentRevisions(store.db, batch);
        times.push(performance.now() - t0);
        if (read.size !== batch.length * 2) throw new Error(`read ${read.size}, expected ${batch.length * 2}`);
      }
      rows.push([String(size), quantile(times, 0.5).toFixed(1), quantile(times, 0.99).toFixed(1)]);
    }
    console.log(`currentRevisions over ${TESTS} tests (2 regions), ${ROUNDS} reads per batch size:`);
    console.log(columns([['tests due', 'p50 ms', 'p99 ms'], ...rows]));
  } finally {
    await store.close();
    await admin(`drop database if exists ${name} with (force)`);
  }
}

await main();
