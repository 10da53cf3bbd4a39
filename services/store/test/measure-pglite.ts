// How much memory the embedded database costs, and how fast it ingests: open PGlite in a temporary
// directory, migrate, record 10,000 runs through recordRun, printing the process's memory as it goes;
// then the same in a new process reopening that directory (a restart: no initdb this time).
//
//   npx tsx services/store/test/measure-pglite.ts                 # PGlite
//   npx tsx services/store/test/measure-pglite.ts --postgres      # the same against Postgres (a temp database)
//   RUNS=50000 npx tsx services/store/test/measure-pglite.ts      # more runs
//   SHARED_BUFFERS=16MB npx tsx services/store/test/measure-pglite.ts
//   CONCURRENCY=10 npx tsx services/store/test/measure-pglite.ts --postgres   # 10 recordRun calls at a time
//   node --expose-gc --import tsx services/store/test/measure-pglite.ts   # figures after a full GC
//
// Against Postgres the database's memory is in the server's processes, not this one; their
// proportional set size (PSS, shared buffers counted once) is printed when /proc lets us read it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REVISION_NAMES } from '@mcp-fleet/probe';
import { createServer, createTest, EMBEDDED_SHARED_BUFFERS, openStore, recordRun, type Store, type Test } from '../src';
import { ADMIN_URL, postgresBackend } from './backends';
import { handshakeRun } from './fixtures';

const RUNS = Number(process.env.RUNS ?? 10_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 1);
const SERVERS = 100;
const REGIONS = ['eu-west', 'us-east'];
const postgres = process.argv.includes('--postgres');

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
function memory(label: string): void {
  globalThis.gc?.();
  const m = process.memoryUsage();
  const server = postgres ? `  postgres server PSS ${postgresPss()}` : '';
  console.log(
    `${label.padEnd(34)} rss ${mib(m.rss).padStart(10)}  heapUsed ${mib(m.heapUsed).padStart(9)}  ` +
      `external ${mib(m.external).padStart(9)}  arrayBuffers ${mib(m.arrayBuffers).padStart(9)}${server}`,
  );
}

/** Sum of PSS over the postgres processes (the server and its backends), if /proc allows. */
function postgresPss(): string {
  let kib = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      kib += Number(m?.[1] ?? 0);
    } catch {
      // a process that ended, or one we may not read
    }
  }
  return kib ? mib(kib * 1024) : 'n/a';
}

async function main(): Promise<void> {
  const reopen = process.argv.indexOf('--reopen');
  const sharedBuffers = process.env.SHARED_BUFFERS;
  const what = postgres
    ? `Postgres (${new URL(ADMIN_URL).host})`
    : `PGlite (shared_buffers ${sharedBuffers ?? `default ${EMBEDDED_SHARED_BUFFERS}`})`;
  const phase = reopen > 0 ? 'restart: a new process opens the same directory' : 'first start: a fresh directory';
  console.log(`\n${what}, ${postgres ? 'a fresh database' : phase}: ${RUNS} runs via recordRun`);
  memory('start');
  const dir = reopen > 0 ? process.argv[reopen + 1]! : postgres ? '' : mkdtempSync(join(tmpdir(), 'mcpfleet-measure-'));
  const pg = postgres ? postgresBackend() : undefined;
  let t = performance.now();
  const store: Store = pg ? await pg.open() : await openStore({ dataDir: join(dir, 'pgdata'), sharedBuffers });
  const openMs = performance.now() - t;
  await store.migrate();
  console.log(`opened in ${openMs.toFixed(0)} ms, migrated in ${(performance.now() - t - openMs).toFixed(0)} ms`);
  memory('after open + migrate');

  const tests: Test[] = [];
  for (let i = 0; i < SERVERS; i++) {
    const server = await createServer(store.db, {
      name: `measure-${reopen > 0 ? 'again-' : ''}${i}`,
      url: `https://mcp-${i}.example.com/mcp`,
      intervalMs: 60_000,
      timeoutMs: 10_000,
    });
    tests.push(await createTest(store.db, { serverId: server.id, mode: 'newest' }));
  }

  const start = Date.UTC(2026, 0, 1);
  let moves = 0;
  let next = 0;
  // Workers share one counter, as control's ingest would take results side by side.
  const worker = async () => {
    for (let i = next++; i < RUNS; i = next++) {
      const k = Math.floor(i / SERVERS); // the test's k-th run
      const test = tests[i % SERVERS]!;
      const region = REGIONS[k % REGIONS.length]!;
      // A test changes revision every 50 runs, so era moves are part of the work.
      const negotiated = REVISION_NAMES[(Math.floor(k / 50) + (i % SERVERS)) % REVISION_NAMES.length]!;
      const at = new Date(start + i * 1000);
      const answer = await recordRun(store.db, {
        jobId: `measure-${reopen > 0 ? 'again-' : ''}${i}`,
        testId: test.id,
        serverId: test.serverId,
        region,
        agent: `agent-${region}`,
        scheduledAt: at,
        startedAt: at,
        finishedAt: at,
        traceId: null,
        run: handshakeRun({ negotiated }),
      });
      if (!answer.duplicate && answer.eraMove) moves++;
      if ((i + 1) % 2500 === 0) memory(`after ${i + 1} runs`);
    }
  };
  t = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - t) / 1000;
  console.log(
    `recorded ${RUNS} runs (${moves} era moves, ${CONCURRENCY} at a time) in ${seconds.toFixed(1)} s: ${(RUNS / seconds).toFixed(0)} runs/s`,
  );
  if (!pg)
    console.log(
      `data directory: ${execFileSync('du', ['-sh', join(dir, 'pgdata')], { encoding: 'utf8' }).split('\t')[0]}`,
    );
  await (pg ? pg.dispose() : store.close());
  if (pg || reopen > 0) return;

  // What a restart costs: a new process, the directory already initialised (no initdb).
  const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, '--reopen', dir], {
    stdio: 'inherit',
  });
  rmSync(dir, { recursive: true, force: true });
  if (child.status !== 0) throw new Error(`the restart measurement failed (${child.status ?? child.signal})`);
}

await main();
