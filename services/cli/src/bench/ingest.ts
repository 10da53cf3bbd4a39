// `npm run bench:ingest`: what group commit buys ingest on Postgres. The same runs (BENCH_SERVERS
// servers, default 2,000, one newest-supported handshake test each; one untimed warm-up round, then
// BENCH_ROUNDS rounds, default 3, every test one run per round, one in fifty failing, the rest
// passing and unchanged as a steady fleet's are) are recorded
// into a fresh database per case: one transaction per run at control's old concurrency (the
// baseline), then batches of B runs in one transaction (recordRuns) with F batches at a time.
// Prints runs/s, p50/p99 of the time one run waits for its commit, this process's CPU per 1,000
// runs (what ingest costs control's core, Postgres's not included), and the ratio against the
// baseline of the same run of this program. BENCH_ADMIN_URL: the Postgres to create databases in
// (loopback).
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { createServer, createTest, openStore, type RunResult, recordRun, recordRuns } from '@mcp-fleet/store';
import { columns } from '../table';

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SERVERS = Number(process.env.BENCH_SERVERS ?? 2_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

type Case = { name: string; batch: number; flushes: number };
const CASES: Case[] = [
  { name: 'one transaction per run, 8 at a time (baseline)', batch: 1, flushes: 8 },
  { name: 'batches of 32, 4 at a time', batch: 32, flushes: 4 },
  { name: 'batches of 64, 4 at a time', batch: 64, flushes: 4 },
  { name: 'batches of 128, 2 at a time', batch: 128, flushes: 2 },
  { name: 'batches of 128, 4 at a time', batch: 128, flushes: 4 },
  { name: 'batches of 256, 4 at a time', batch: 256, flushes: 4 },
];

function runOf(test: { id: string; serverId: string }, i: number, round: number): RunResult {
  const at = Date.UTC(2026, 11, 1) + round * 60_000;
  // One run in fifty fails, as a steady fleet's do: the failing path (counters, consensus) is paid too.
  const failed = (i + round) % 50 === 0;
  return {
    jobId: `bench-${i}-${round}`,
    testId: test.id,
    serverId: test.serverId,
    region: 'eu-west',
    agent: 'bench',
    scheduledAt: new Date(at),
    startedAt: new Date(at + 10),
    finishedAt: new Date(at + 60),
    traceId: null,
    run: {
      mode: 'newest',
      requested: '2026-07-28',
      negotiated: failed ? null : '2026-07-28',
      previousRevision: null,
      generation: 'stateless',
      era: 'modern',
      outcome: failed ? 'timeout' : 'success',
      message: failed ? 'The server did not answer in time.' : 'The handshake succeeded at 2026-07-28.',
      requests: 1,
      millis: 42,
      assertion: null,
      evidence: null,
    },
  };
}

function quantile(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0;
}

async function runCase(c: Case) {
  const name = `mcpfleet_bench_ingest_${randomBytes(4).toString('hex')}`;
  const admin = await openStore({ databaseUrl: ADMIN_URL, poolSize: 1 });
  await admin.db.execute(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const store = await openStore({ databaseUrl: url.toString(), poolSize: c.flushes + 2 });
  try {
    await store.migrate();
    const tests: { id: string; serverId: string }[] = [];
    for (let i = 0; i < SERVERS; i++) {
      const server = await createServer(store.db, {
        name: `bench-${i}`,
        url: `http://127.0.0.1:${10_000 + (i % 50_000)}/mcp`,
        headers: {},
        regions: null,
        intervalMs: 60_000,
        timeoutMs: 10_000,
        detectionIntervalMs: null,
        source: 'api',
      });
      tests.push(await createTest(store.db, { serverId: server.id, mode: 'newest', depth: 'handshake' }));
    }
    // A warm-up round, not timed: every test gets its region state, as in a fleet that has been running.
    for (const [i, t] of tests.entries()) await recordRun(store.db, runOf(t, i, -1));
    await store.db.execute('vacuum analyze');
    // Each round's runs arrive shuffled, as results from many agents do.
    const queue: RunResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = tests.map((t, i) => runOf(t, i, round));
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      queue.push(...order);
    }
    const waits: number[] = [];
    let failed = 0;
    let next = 0;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const worker = async () => {
      while (next < queue.length) {
        const batch = queue.slice(next, next + c.batch);
        next += batch.length;
        const start = performance.now();
        if (c.batch === 1) await recordRun(store.db, batch[0]!);
        else for (const a of await recordRuns(store.db, batch)) if (!a.ok) failed++;
        const ms = performance.now() - start;
        for (let k = 0; k < batch.length; k++) waits.push(ms);
      }
    };
    await Promise.all(Array.from({ length: c.flushes }, worker));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const { rows } = (await store.db.execute('select count(*)::int as n from runs')) as unknown as {
      rows: { n: number }[];
    };
    const n = rows[0]?.n ?? 0;
    if (n !== queue.length + tests.length || failed)
      throw new Error(`${c.name}: ${n} runs written of ${queue.length}, ${failed} refused`);
    waits.sort((a, b) => a - b);
    return {
      runsPerS: queue.length / seconds,
      p50: quantile(waits, 0.5),
      p99: quantile(waits, 0.99),
      cpuMsPer1000: ((cpu.user + cpu.system) / 1000 / queue.length) * 1000,
    };
  } finally {
    await store.close();
    await admin.db.execute(`drop database ${name} with (force)`);
    await admin.close();
  }
}

const rows: string[][] = [];
let baseline = 0;
for (const c of CASES) {
  const r = await runCase(c);
  baseline ||= r.runsPerS;
  rows.push([
    c.name,
    r.runsPerS.toFixed(0),
    r.p50.toFixed(1),
    r.p99.toFixed(1),
    r.cpuMsPer1000.toFixed(0),
    `${(r.runsPerS / baseline).toFixed(2)}×`,
  ]);
  process.stderr.write(`${c.name}: ${r.runsPerS.toFixed(0)} runs/s\n`);
}
console.log(`bench:ingest — ${SERVERS} tests × ${ROUNDS} rounds of runs into Postgres, one fresh database per case`);
console.log(
  `load average at the end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  columns([['case', 'runs/s', 'commit wait p50 ms', 'p99 ms', 'CPU ms / 1,000 runs', 'vs baseline'], ...rows]),
);
