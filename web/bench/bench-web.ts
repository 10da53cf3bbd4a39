// `npm run bench:web`: how long the dashboard takes to render its pages on the server, for a
// small fleet (10 servers, 10,000 runs: the baseline, measured in the same run) and a large one
// (1,000 servers, 1,000,000 runs). Each fleet has its own database, seeded once by ./seed and
// reused while its marker (table bench_seed) matches the seed's version and size and is recent
// enough for the 24 h range to be full; `--reseed` seeds again. For each database the built
// dashboard runs as it does on its own (bin/dashboard.js) on a free loopback port; each page is fetched whole (the complete
// HTML, streaming included), 5 times to warm up, then 30 times in a row.
//
// Flags: --reseed, --build (run `next build` first even when web/.next exists), --requests (30),
// --warmup (5), --max-age-hours (6: an older seed is redone, its last day having thinned out),
// --large-servers (1000) and --large-runs (1000000): the large fleet's size (another size seeds its
// own database, named after it, so the default one is kept); --reads: also the overview's store
// reads one by one on the large fleet, in Postgres and node CPU ms per call (./overview-reads).
// Env: BENCH_ADMIN_URL (else MCP_FLEET_TEST_ADMIN_URL, else postgres://postgres@127.0.0.1:5432/postgres).
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openStore } from '@mcp-fleet/store';
import { ADMIN_URL as TEST_ADMIN_URL } from '@mcp-fleet/testkit';
import pg from 'pg';
import { build, isBuilt } from '../index';
import { startDashboardProcess } from '../tools/next-process';
import { measureOverviewReads } from './overview-reads';
import { DEFAULT_DAYS, DEFAULT_REGIONS, SEED_VERSION, seedFleet } from './seed';

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? TEST_ADMIN_URL;
const REQUEST_TIMEOUT_MS = 120_000;

interface Fleet {
  key: 'small' | 'large';
  database: string;
  servers: number;
  runs: number;
}

const SMALL: Fleet = { key: 'small', database: 'mcpfleet_bench_web_small', servers: 10, runs: 10_000 };
const LARGE = { servers: 1_000, runs: 1_000_000 };

function largeFleet(servers: number, runs: number): Fleet {
  const database =
    servers === LARGE.servers && runs === LARGE.runs ? 'mcpfleet_bench_web' : `mcpfleet_bench_web_${servers}_${runs}`;
  return { key: 'large', database, servers, runs };
}

/** The pages measured; `<id>` is a server with runs, a pinned test and era moves. */
const PAGES = [
  { label: '/', path: () => '/' },
  { label: '/?range=30d', path: () => '/?range=30d' },
  { label: '/servers', path: () => '/servers' },
  { label: '/servers/<id>', path: (id: string) => `/servers/${id}` },
  { label: '/servers/<id>?range=30d', path: (id: string) => `/servers/${id}?range=30d` },
  { label: '/era-moves', path: () => '/era-moves' },
];

// ─── a signal still runs the exit handlers (tools/next-process kills the dashboards there) ────

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    console.error(`\n${sig}: stopping`);
    process.exit(130);
  });
}

// ─── databases ────────────────────────────────────────────────────────────────────────────────

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function query<T extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

interface Marker {
  version: string;
  servers: number;
  runs: number;
  days: number;
  regions: string;
  seeded_at: Date;
}

/** A seeded database for the fleet: the existing one when its marker matches, else seeded afresh. */
async function prepare(fleet: Fleet, opts: { reseed: boolean; maxAgeHours: number }): Promise<string> {
  const url = databaseUrl(fleet.database);
  const regions = DEFAULT_REGIONS.join(',');
  const exists = (await query(ADMIN_URL, 'select 1 from pg_database where datname = $1', [fleet.database])).length > 0;
  let why = 'no database yet';
  if (exists) {
    const [found] = await query<{ has: boolean }>(url, `select to_regclass('bench_seed') is not null as has`);
    const [marker] = found?.has ? await query<Marker>(url, 'select * from bench_seed limit 1') : [];
    const ageH = marker ? (Date.now() - marker.seeded_at.getTime()) / 3_600_000 : 0;
    if (opts.reseed) why = '--reseed';
    else if (!marker) why = 'no seed marker';
    else if (marker.version !== SEED_VERSION) why = `seed version ${marker.version}, now ${SEED_VERSION}`;
    else if (
      marker.servers !== fleet.servers ||
      marker.runs !== fleet.runs ||
      marker.days !== DEFAULT_DAYS ||
      marker.regions !== regions
    )
      why = 'seeded with other parameters';
    else if (ageH > opts.maxAgeHours) why = `seeded ${ageH.toFixed(1)} h ago (over ${opts.maxAgeHours} h)`;
    else {
      // Migrations added since the seed (indexes, say) apply to the data already there.
      const store = await openStore({ databaseUrl: url });
      await store.migrate().finally(() => store.close());
      console.log(`${fleet.key}: reusing ${fleet.database} (seeded ${ageH.toFixed(1)} h ago)`);
      return url;
    }
  }
  console.log(`${fleet.key}: seeding ${fleet.database} (${why}): ${fleet.servers} servers, ${fmtInt(fleet.runs)} runs`);
  await adminStatement(`drop database if exists ${fleet.database} with (force)`);
  await adminStatement(`create database ${fleet.database}`);
  const t0 = performance.now();
  await seedFleet(url, { servers: fleet.servers, runs: fleet.runs, log: (m) => console.log(m) });
  await query(
    url,
    `create table bench_seed (version text not null, servers int not null, runs int not null, days int not null,
       regions text not null, seeded_at timestamptz not null default now());
     insert into bench_seed (version, servers, runs, days, regions)
       values (${[sqlText(SEED_VERSION), fleet.servers, fleet.runs, DEFAULT_DAYS, sqlText(regions)].join(', ')})`,
  );
  console.log(`${fleet.key}: seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return url;
}

function sqlText(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

async function adminStatement(statement: string): Promise<void> {
  await query(ADMIN_URL, statement);
}

/** A server the detail pages show at their fullest: runs, a pinned test, era moves. */
async function pickServer(url: string): Promise<{ id: string; name: string }> {
  const [server] = await query<{ id: string; name: string }>(
    url,
    `select s.id, s.name from servers s
     where s.retired_at is null
       and exists (select 1 from runs r where r.server_id = s.id)
     order by exists (select 1 from tests t where t.server_id = s.id and t.mode = 'pinned') desc,
       exists (select 1 from era_moves m where m.server_id = s.id) desc, s.name
     limit 1`,
  );
  if (!server) throw new Error('the seeded database has no server with runs');
  return server;
}

// ─── measuring ────────────────────────────────────────────────────────────────────────────────

interface Sample {
  ms: number;
  status: number;
  bytes: number;
  error?: string;
}

async function timeGet(url: string): Promise<Sample> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, {
      headers: { accept: 'text/html' },
      redirect: 'manual',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const body = await res.text();
    const ms = performance.now() - t0;
    return res.status === 200
      ? { ms, status: res.status, bytes: Buffer.byteLength(body) }
      : { ms, status: res.status, bytes: Buffer.byteLength(body), error: body.replace(/\s+/g, ' ').slice(0, 300) };
  } catch (err) {
    return { ms: performance.now() - t0, status: 0, bytes: 0, error: err instanceof Error ? err.message : String(err) };
  }
}

interface PageResult {
  label: string;
  path: string;
  p50: number;
  p95: number;
  max: number;
  bytes: number;
  failures: Sample[];
}

/** Nearest-rank quantile of sorted values. */
function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

async function measure(
  base: string,
  serverId: string,
  opts: { warmup: number; requests: number },
): Promise<PageResult[]> {
  const results: PageResult[] = [];
  for (const page of PAGES) {
    const path = page.path(serverId);
    const failures: Sample[] = [];
    for (let i = 0; i < opts.warmup; i++) {
      const s = await timeGet(base + path);
      if (s.error) failures.push(s);
    }
    const ms: number[] = [];
    let bytes = 0;
    for (let i = 0; i < opts.requests; i++) {
      const s = await timeGet(base + path);
      if (s.error) failures.push(s);
      ms.push(s.ms);
      bytes = s.bytes;
    }
    ms.sort((a, b) => a - b);
    results.push({
      label: page.label,
      path,
      p50: quantile(ms, 0.5),
      p95: quantile(ms, 0.95),
      max: ms[ms.length - 1] ?? Number.NaN,
      bytes,
      failures,
    });
  }
  return results;
}

// ─── output ───────────────────────────────────────────────────────────────────────────────────

function fmtInt(n: number): string {
  return n.toLocaleString('en-US');
}

function fmtMs(n: number): string {
  if (!Number.isFinite(n)) return '-';
  return n < 10 ? n.toFixed(1) : n.toFixed(0);
}

function fmtKb(n: number): string {
  return `${(n / 1024).toFixed(0)}k`;
}

function table(rows: string[][], rightAligned: (i: number) => boolean): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => (rightAligned(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function loadLine(): string {
  return `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (${cpus().length} CPUs)`;
}

// ─── main ─────────────────────────────────────────────────────────────────────────────────────

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      reseed: { type: 'boolean', default: false },
      build: { type: 'boolean', default: false },
      requests: { type: 'string', default: '30' },
      warmup: { type: 'string', default: '5' },
      'max-age-hours': { type: 'string', default: '6' },
      'large-servers': { type: 'string', default: String(LARGE.servers) },
      'large-runs': { type: 'string', default: String(LARGE.runs) },
      reads: { type: 'boolean', default: false },
    },
  });
  const largeServers = Number(values['large-servers']);
  const largeRuns = Number(values['large-runs']);
  if (!Number.isSafeInteger(largeServers) || largeServers < 1 || !Number.isSafeInteger(largeRuns) || largeRuns < 1)
    throw new Error('bad --large-servers/--large-runs');
  const FLEETS = [SMALL, largeFleet(largeServers, largeRuns)];
  const requests = Number(values.requests);
  const warmup = Number(values.warmup);
  const maxAgeHours = Number(values['max-age-hours']);
  if (!(requests >= 1) || !(warmup >= 0) || !(maxAgeHours > 0))
    throw new Error('bad --requests/--warmup/--max-age-hours');

  console.log(
    `bench:web — ${loadLine()}, node ${process.version}; large fleet ${fmtInt(largeServers)} servers, ${fmtInt(largeRuns)} runs`,
  );
  if (values.build || !isBuilt()) await build((m) => console.log(m));

  const urls = new Map<Fleet['key'], string>();
  for (const fleet of FLEETS) urls.set(fleet.key, await prepare(fleet, { reseed: values.reseed, maxAgeHours }));

  const results = new Map<Fleet['key'], PageResult[]>();
  for (const fleet of FLEETS) {
    const url = urls.get(fleet.key)!;
    const server = await pickServer(url);
    const dashboard = await startDashboardProcess({ DATABASE_URL: url }, { startTimeoutMs: 90_000 });
    try {
      console.log(
        `${fleet.key}: the dashboard on ${dashboard.url}, <id> = ${server.name} (${server.id}); ` +
          `${warmup} warm-up + ${requests} requests per page`,
      );
      results.set(fleet.key, await measure(dashboard.url, server.id, { warmup, requests }));
    } finally {
      await dashboard.stop();
    }
  }

  const small = results.get('small')!;
  const large = results.get('large')!;
  const header = [
    'page',
    'small p50',
    'p95',
    'max',
    'large p50',
    'p95',
    'max',
    'large/small p50',
    'html small',
    'large',
  ];
  const rows = small.map((s, i) => {
    const l = large[i]!;
    return [
      s.label,
      fmtMs(s.p50),
      fmtMs(s.p95),
      fmtMs(s.max),
      fmtMs(l.p50),
      fmtMs(l.p95),
      fmtMs(l.max),
      `${(l.p50 / s.p50).toFixed(1)}×`,
      fmtKb(s.bytes),
      fmtKb(l.bytes),
    ];
  });
  console.log();
  console.log('server-side render, full HTML over loopback, ms');
  console.log(table([header, ...rows], (i) => i > 0));
  if (values.reads) {
    // The overview's reads one by one on the large fleet: what each costs in CPU (overview-reads.ts).
    const costs = await measureOverviewReads(urls.get('large')!, { calls: requests });
    console.log();
    console.log(`the overview's reads on the large fleet, one at a time, mean of ${requests} calls, ms`);
    console.log(
      table(
        [
          ['range', 'read', 'Postgres CPU', 'node CPU', 'wall'],
          ...costs.map((c) => [c.range, c.read, c.postgresMs.toFixed(1), c.nodeMs.toFixed(1), c.wallMs.toFixed(1)]),
        ],
        (i) => i > 1,
      ),
    );
  }
  console.log();
  console.log(`done — ${loadLine()}`);

  let failed = 0;
  for (const [key, pages] of results) {
    for (const page of pages) {
      if (page.failures.length === 0) continue;
      failed += page.failures.length;
      const first = page.failures[0]!;
      console.error(
        `FAIL ${key} ${page.path}: ${page.failures.length} request(s) failed; first: ` +
          `${first.status || 'no answer'} ${first.error ?? ''}`,
      );
    }
  }
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
