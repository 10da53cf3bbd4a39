// `npm run bench:surface-store`: what surfaces cost in Postgres. One day of 5-minute conformance
// runs (288) for BENCH_SERVERS servers (default 50), each carrying one realistic snapshot (40 tools
// with schemas and annotations, resources, templates, prompts), ingested through recordRun into a
// fresh database per scenario: a handshake-only baseline (the same runs, no surface), a surface
// that never changes, one that changes every hour, and one that changes every run (the worst
// case). Prints the bytes stored per server per day (runs' surfaces column, surface_blobs,
// surface_heads, surface_changes) and the ratio against the baseline's whole day, then the time a
// diff of two such surfaces takes. BENCH_ADMIN_URL: the Postgres to create databases in (loopback).
import { randomBytes } from 'node:crypto';
import { diffSurfaces, type Surface, type SurfaceTool, snapshotOf } from '@mcp-fleet/probe';
import { createServer, createTest, openStore, recordRun, type Store } from '@mcp-fleet/store';
import { columns } from '../table';

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SERVERS = Number(process.env.BENCH_SERVERS ?? 50);
const RUNS_PER_DAY = 288;
const TOOLS = 40;
const CONCURRENCY = 8;

type Scenario = { name: string; surfaces: boolean; changeEvery: number | null };
const SCENARIOS: Scenario[] = [
  { name: 'handshake only (baseline)', surfaces: false, changeEvery: null },
  { name: 'surface, no change', surfaces: true, changeEvery: null },
  { name: 'surface, a change per hour', surfaces: true, changeEvery: 12 },
  { name: 'surface, a change every run', surfaces: true, changeEvery: 1 },
];

/** A realistic catalogue: tools of 3–8 typed parameters (enums, nested objects), annotations, prose. */
function catalogue(server: number): Surface {
  const tools: SurfaceTool[] = [];
  for (let i = 0; i < TOOLS; i++) {
    const properties: Record<string, unknown> = {};
    const n = 3 + (i % 6);
    for (let p = 0; p < n; p++)
      properties[`param_${p}`] =
        p % 3 === 0
          ? { type: 'string', description: `The ${p}th parameter of tool ${i}: an identifier as the API returns it.` }
          : p % 3 === 1
            ? { type: 'string', enum: ['eur', 'usd', 'gbp', 'jpy'], description: 'A currency code.' }
            : {
                type: 'object',
                properties: {
                  from: { type: 'string', format: 'date-time' },
                  to: { type: 'string', format: 'date-time' },
                },
                required: ['from'],
              };
    tools.push({
      name: `tool_${String(i).padStart(2, '0')}`,
      description: `Tool ${i} of server ${server}: looks up, filters and summarises the records of one account, paged, newest first. Fails when the account is closed.`,
      inputSchema: { type: 'object', properties, required: ['param_0'] },
      ...(i % 4 === 0
        ? { outputSchema: { type: 'object', properties: { items: { type: 'array' }, next: { type: 'string' } } } }
        : {}),
      annotations: { readOnlyHint: i % 3 !== 0, idempotentHint: true, openWorldHint: false },
    });
  }
  return {
    era: 'modern',
    revision: '2026-07-28',
    serverInfo: { name: `bench-${server}`, version: '1.4.2' },
    capabilities: { tools: { listChanged: true }, resources: { subscribe: false }, prompts: {} },
    tools,
    resources: Array.from({ length: 5 }, (_, i) => ({
      uri: `docs://server-${server}/guide-${i}`,
      name: `guide-${i}`,
      description: 'A guide to the API.',
      mimeType: 'text/markdown',
    })),
    resourceTemplates: [{ uriTemplate: 'accounts://{id}', name: 'account', mimeType: 'application/json' }],
    prompts: Array.from({ length: 3 }, (_, i) => ({
      name: `prompt_${i}`,
      description: 'Summarise an account.',
      arguments: [{ name: 'account', required: true }],
    })),
    truncated: false,
  };
}

/** The surface at run `k`: the first tool's description says another revision each `every` runs (one warning change each time). */
function surfaceAt(base: Surface, k: number, every: number | null): Surface {
  if (every === null) return base;
  const version = Math.floor(k / every);
  if (version === 0) return base;
  const tools = base.tools.map((t, i) => (i === 0 ? { ...t, description: `${t.description} (rev ${version})` } : t));
  return { ...base, tools };
}

async function sizes(store: Store): Promise<Record<string, number>> {
  const { rows } = (await store.db.execute(`
    select pg_total_relation_size('runs') as runs,
      coalesce((select sum(pg_column_size(surfaces)) from runs), 0) as runs_surfaces,
      pg_total_relation_size('surface_blobs') as blobs,
      pg_total_relation_size('surface_heads') as heads,
      pg_total_relation_size('surface_changes') as changes,
      (select count(*) from surface_changes) as change_rows,
      (select count(*) from surface_blobs) as blob_rows`)) as unknown as { rows: Record<string, string>[] };
  return Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, Number(v)]));
}

async function runScenario(admin: Store, s: Scenario) {
  const name = `mcpfleet_bench_surface_${randomBytes(4).toString('hex')}`;
  await admin.db.execute(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const store = await openStore({ databaseUrl: url.toString(), poolSize: CONCURRENCY + 2 });
  try {
    await store.migrate();
    const tests: Awaited<ReturnType<typeof createTest>>[] = [];
    for (let i = 0; i < SERVERS; i++) {
      const server = await createServer(store.db, {
        name: `bench-${i}`,
        url: `http://127.0.0.1:${10_000 + i}/mcp`,
        headers: {},
        regions: null,
        intervalMs: 300_000,
        timeoutMs: 10_000,
        detectionIntervalMs: null,
        source: 'api',
      });
      tests.push(await createTest(store.db, { serverId: server.id, mode: 'newest', depth: 'conformance' }));
    }
    await store.db.execute('vacuum analyze');
    const before = await sizes(store);
    const day = Date.UTC(2026, 11, 1);
    const t0 = performance.now();
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < tests.length; i = next++) {
        const test = tests[i]!;
        const base = catalogue(i);
        for (let k = 0; k < RUNS_PER_DAY; k++) {
          const at = day + k * 300_000;
          await recordRun(store.db, {
            jobId: `bench-${i}-${k}`,
            testId: test.id,
            serverId: test.serverId,
            region: 'eu-west',
            agent: 'bench',
            scheduledAt: new Date(at),
            startedAt: new Date(at + 10),
            finishedAt: new Date(at + 900),
            traceId: null,
            run: {
              mode: 'newest',
              requested: '2026-07-28',
              negotiated: '2026-07-28',
              previousRevision: null,
              generation: 'stateless',
              era: 'modern',
              outcome: 'success',
              message: 'The handshake succeeded at 2026-07-28.',
              requests: 3,
              millis: 42,
              assertion: null,
              evidence: null,
            },
            surfaces: s.surfaces ? [snapshotOf(surfaceAt(base, k, s.changeEvery))] : [],
          });
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const ms = performance.now() - t0;
    await store.db.execute('vacuum analyze');
    const after = await sizes(store);
    const d = (k: string) => (after[k]! - before[k]!) / SERVERS;
    return {
      scenario: s.name,
      runsBytes: d('runs'),
      runsSurfacesBytes: d('runs_surfaces'),
      blobsBytes: d('blobs'),
      headsBytes: d('heads'),
      changesBytes: d('changes'),
      changeRows: after.change_rows! / SERVERS,
      blobRows: after.blob_rows! / SERVERS,
      ingestMsPerRun: ms / (SERVERS * RUNS_PER_DAY),
    };
  } finally {
    await store.close();
    await admin.db.execute(`drop database if exists ${name} with (force)`);
  }
}

function diffTiming() {
  const a = catalogue(0);
  const b = surfaceAt(a, 12 * 7, 12);
  const body = snapshotOf(a).body.length;
  let changes = 0;
  for (let i = 0; i < 50; i++) changes = diffSurfaces(a, b).length;
  const n = 500;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) diffSurfaces(a, b);
  const same = performance.now();
  for (let i = 0; i < n; i++) diffSurfaces(a, a);
  const end = performance.now();
  return { bodyChars: body, changes, diffMs: (same - t0) / n, sameMs: (end - same) / n };
}

async function main(): Promise<void> {
  const host = new URL(ADMIN_URL).hostname;
  if (!/^(127\.|localhost$|\[::1\]$)/.test(host)) throw new Error(`BENCH_ADMIN_URL must be on loopback, not ${host}`);
  const admin = await openStore({ databaseUrl: ADMIN_URL, poolSize: 1 });
  const results = [];
  try {
    for (const s of SCENARIOS) {
      process.stderr.write(`${s.name}: ${SERVERS} servers × ${RUNS_PER_DAY} runs…\n`);
      results.push(await runScenario(admin, s));
    }
  } finally {
    await admin.close();
  }
  const baseline = results[0]!.runsBytes;
  const kb = (n: number) => (n / 1024).toFixed(1);
  const table = [
    [
      'Scenario',
      'runs KiB',
      'of which surfaces',
      'blobs KiB',
      'heads KiB',
      'changes KiB',
      'changes',
      'total KiB',
      '× baseline',
      'ms/run',
    ],
  ];
  for (const r of results) {
    const total = r.runsBytes + r.blobsBytes + r.headsBytes + r.changesBytes;
    table.push([
      r.scenario,
      kb(r.runsBytes),
      kb(r.runsSurfacesBytes),
      kb(r.blobsBytes),
      kb(r.headsBytes),
      kb(r.changesBytes),
      String(Math.round(r.changeRows)),
      kb(total),
      `${(total / baseline).toFixed(2)}×`,
      r.ingestMsPerRun.toFixed(2),
    ]);
  }
  const diff = diffTiming();
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ servers: SERVERS, runsPerDay: RUNS_PER_DAY, results, diff }, null, 2)}\n`);
    return;
  }
  process.stdout.write(
    `Bytes stored per server per day (${SERVERS} servers, ${RUNS_PER_DAY} conformance runs each, one ${diff.bodyChars}-character snapshot of ${TOOLS} tools per run):\n`,
  );
  process.stdout.write(`${columns(table)}\n`);
  process.stdout.write(
    `diffSurfaces of two such surfaces: ${diff.diffMs.toFixed(3)} ms (${diff.changes} change); of a surface with itself: ${diff.sameMs.toFixed(3)} ms\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
