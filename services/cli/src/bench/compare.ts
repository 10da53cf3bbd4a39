// `npm run bench`: handshakes per second and p50/p99 per generation, sequentially and at
// concurrency 32, for our engine and for the official v2 SDK Client pinned to the same revision,
// against the simulated fleet running in its own process. Prints the ratio ours / SDK.
import { handshake, isPassing, type Revision } from '@mcp-fleet/probe';
import { columns } from '../table';
import { type LoadResult, runLoad } from './load';
import { sdkHandshake } from './sdk-client';
import { startSimProcess } from './sim-process-client';

const CASES: { generation: string; target: string; revision: Revision }[] = [
  { generation: 'HTTP+SSE transport', target: 'legacy-sse', revision: '2024-11-05' },
  { generation: 'sessions', target: 'sessions-2025-11-25', revision: '2025-11-25' },
  { generation: 'stateless', target: 'modern', revision: '2026-07-28' },
];
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = [1, 32];

interface Row {
  generation: string;
  revision: Revision;
  concurrency: number;
  ours: LoadResult;
  sdk: LoadResult;
  ratio: number;
  cpuRatio: number;
}

async function main(): Promise<void> {
  const sim = await startSimProcess();
  const rows: Row[] = [];
  try {
    for (const c of CASES) {
      const url = sim.urls.get(c.target)!;
      const ours = async () => isPassing((await handshake(url, { revision: c.revision })).outcome);
      const sdk = () => sdkHandshake(url, c.revision);
      for (const concurrency of CONCURRENCY) {
        // A short warm-up of each so neither pays for JIT and connection set-up in the measurement.
        await runLoad(ours, { concurrency, seconds: 0.5 });
        await runLoad(sdk, { concurrency, seconds: 0.5 });
        const o = await runLoad(ours, { concurrency, seconds: SECONDS });
        const s = await runLoad(sdk, { concurrency, seconds: SECONDS });
        const row = {
          ...c,
          concurrency,
          ours: o,
          sdk: s,
          ratio: Math.round((o.perSecond / s.perSecond) * 100) / 100,
          cpuRatio: Math.round((s.cpuMicrosPerOp / Math.max(1, o.cpuMicrosPerOp)) * 100) / 100,
        };
        rows.push(row);
        process.stderr.write(`${c.generation} c=${concurrency}: ours ${o.perSecond}/s, sdk ${s.perSecond}/s\n`);
      }
    }
  } finally {
    sim.stop();
  }
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const table = [
    [
      'Generation',
      'Revision',
      'Conc.',
      'mcp-fleet/s',
      'p50 ms',
      'p99 ms',
      'CPU µs',
      'err',
      'SDK/s',
      'p50 ms',
      'p99 ms',
      'CPU µs',
      'err',
      'ratio/s',
      'CPU ratio',
    ],
  ];
  for (const r of rows)
    table.push([
      r.generation,
      r.revision,
      String(r.concurrency),
      String(r.ours.perSecond),
      String(r.ours.p50Ms),
      String(r.ours.p99Ms),
      String(r.ours.cpuMicrosPerOp),
      String(r.ours.errors),
      String(r.sdk.perSecond),
      String(r.sdk.p50Ms),
      String(r.sdk.p99Ms),
      String(r.sdk.cpuMicrosPerOp),
      String(r.sdk.errors),
      `${r.ratio}×`,
      `${r.cpuRatio}×`,
    ]);
  process.stdout.write(
    `\nHandshakes against the simulated fleet, ${SECONDS} s per cell (mcp-fleet engine vs official v2 SDK Client)\n\n${columns(table)}\n`,
  );
}

await main();
