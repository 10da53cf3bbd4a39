// `npm run bench:mcp`: what asking the monitor over MCP costs beside asking its REST API, in the
// same process, against one control (embedded PGlite, a fleet of BENCH_SERVERS servers with a test
// each). Baseline: the REST route the tool stands on (GET /api/servers, GET /api/servers/:id and
// /regions). Then the same answer through /mcp with the official SDK 2.x client: modern (2026-07-28,
// one stateless request per call), and legacy (2025-11-25, one session). Prints p50/p99, calls/s
// and each against its REST baseline, sequentially and at concurrency 8.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryBus } from '@mcp-fleet/bus';
import { parseFleet, startControl } from '@mcp-fleet/control';
import { createLogger } from '@mcp-fleet/log';
import { createServer, createTest, openStore } from '@mcp-fleet/store';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { columns } from '../table';
import { type LoadResult, runLoad } from './load';

const SERVERS = Number(process.env.BENCH_SERVERS ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = [1, 8];

async function main(): Promise<void> {
  const log = createLogger('bench', 'silent');
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-bench-mcp-'));
  const store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  for (let i = 0; i < SERVERS; i++) {
    const server = await createServer(store.db, {
      name: `bench-${String(i).padStart(5, '0')}`,
      url: `http://127.0.0.1:${10_000 + i}/mcp`,
      headers: {},
      regions: null,
      intervalMs: 3_600_000,
      timeoutMs: 10_000,
      detectionIntervalMs: null,
      source: 'api',
    });
    await createTest(store.db, { serverId: server.id, mode: 'newest', depth: 'handshake' });
  }
  const bus = createMemoryBus({ log });
  const control = await startControl({
    store,
    bus,
    log,
    port: 0,
    fleet: parseFleet('regions: [eu-west]\nservers: []\n', 'bench'),
    tickMs: 3_600_000,
  });
  // The fleet file above names no server: apply retired none of the seeded ones (source api).
  const { servers } = (await (await fetch(`${control.url}/api/servers`)).json()) as { servers: { id: string }[] };
  const one = servers[Math.floor(servers.length / 2)]!.id;

  const clients = {
    modern: new Client({ name: 'bench', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } }),
    legacy: new Client({ name: 'bench', version: '0' }, { supportedProtocolVersions: ['2025-11-25'] }),
  };
  for (const c of Object.values(clients))
    await c.connect(new StreamableHTTPClientTransport(new URL(`${control.url}/mcp`)));

  const rest = (paths: string[]) => async () => {
    for (const p of paths)
      if (!(await fetch(`${control.url}${p}`).then((r) => r.arrayBuffer().then(() => r.ok)))) return false;
    return true;
  };
  const tool = (era: keyof typeof clients, name: string, args: Record<string, unknown>) => async () =>
    !(await clients[era].callTool({ name, arguments: args })).isError;

  const cases: { what: string; baseline: () => Promise<boolean>; ops: [string, () => Promise<boolean>][] }[] = [
    {
      what: `list servers (${SERVERS}; MCP pages 50)`,
      baseline: rest(['/api/servers']),
      ops: [
        ['modern', tool('modern', 'list_servers', { limit: 50 })],
        ['legacy', tool('legacy', 'list_servers', { limit: 50 })],
      ],
    },
    {
      what: 'one server with its regions',
      baseline: rest([`/api/servers/${one}`, `/api/servers/${one}/regions`]),
      ops: [
        ['modern', tool('modern', 'get_server', { id: one })],
        ['legacy', tool('legacy', 'get_server', { id: one })],
      ],
    },
  ];

  const table = [['Call', 'Conc.', 'Face', 'calls/s', 'p50 ms', 'p99 ms', 'err', '× REST p50']];
  const rows: unknown[] = [];
  try {
    for (const c of cases)
      for (const concurrency of CONCURRENCY) {
        const measure = async (op: () => Promise<boolean>): Promise<LoadResult> => {
          await runLoad(op, { concurrency, seconds: 0.5 });
          return runLoad(op, { concurrency, seconds: SECONDS });
        };
        const base = await measure(c.baseline);
        const line = (face: string, r: LoadResult) => {
          const x = Math.round((r.p50Ms / Math.max(0.001, base.p50Ms)) * 100) / 100;
          table.push([
            c.what,
            String(concurrency),
            face,
            String(r.perSecond),
            String(r.p50Ms),
            String(r.p99Ms),
            String(r.errors),
            `${x}×`,
          ]);
          rows.push({ call: c.what, face, ...r, ratioToRest: x });
        };
        line('REST', base);
        for (const [face, op] of c.ops) line(`MCP ${face}`, await measure(op));
        process.stderr.write(`${c.what} c=${concurrency} done\n`);
      }
  } finally {
    for (const client of Object.values(clients)) await client.close();
    await control.stop();
    await bus.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  process.stdout.write(
    `\nThe monitor over MCP beside its REST API (embedded PGlite, ${SERVERS} servers, ${SECONDS} s per cell)\n\n${columns(table)}\n`,
  );
}

await main();
