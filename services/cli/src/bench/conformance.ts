// `npm run bench:conformance`: what a conformance run costs per era against the simulated fleet
// (in its own process): time p50/p99, requests and client CPU per run, sequentially and at
// concurrency 8, beside a handshake on the same target in the same process as the baseline.
import { type ConformanceProtocol, conformance, handshake, isPassing, type Revision } from '@mcp-fleet/probe';
import { columns } from '../table';
import { runLoad } from './load';
import { startSimProcess } from './sim-process-client';

const CASES: { era: string; target: string; revision: Revision }[] = [
  { era: 'legacy (HTTP+SSE)', target: 'legacy-sse', revision: '2024-11-05' },
  { era: 'legacy (sessions)', target: 'sessions-2025-11-25', revision: '2025-11-25' },
  { era: 'modern', target: 'modern', revision: '2026-07-28' },
];
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = [1, 8];

async function main(): Promise<void> {
  const sim = await startSimProcess();
  const table = [
    ['Era', 'Conc.', 'runs/s', 'p50 ms', 'p99 ms', 'req/run', 'CPU µs/run', 'err', 'handshake p50', 'CPU ×hs'],
  ];
  const rows: unknown[] = [];
  try {
    for (const c of CASES) {
      const url = sim.urls.get(c.target)!;
      let requests = 0;
      const run = async () => {
        const r = await conformance(url, { protocol: c.revision as ConformanceProtocol });
        requests += r.requests;
        return r.outcome === 'success';
      };
      const hs = async () => isPassing((await handshake(url, { revision: c.revision })).outcome);
      for (const concurrency of CONCURRENCY) {
        await runLoad(run, { concurrency, seconds: 0.5 });
        await runLoad(hs, { concurrency, seconds: 0.5 });
        requests = 0;
        const o = await runLoad(run, { concurrency, seconds: SECONDS });
        const perRun = Math.round((requests / Math.max(1, o.operations)) * 10) / 10;
        const h = await runLoad(hs, { concurrency, seconds: SECONDS });
        const cpuX = Math.round((o.cpuMicrosPerOp / Math.max(1, h.cpuMicrosPerOp)) * 10) / 10;
        rows.push({ ...c, concurrency, conformance: o, requestsPerRun: perRun, handshake: h });
        table.push([
          c.era,
          String(concurrency),
          String(o.perSecond),
          String(o.p50Ms),
          String(o.p99Ms),
          String(perRun),
          String(o.cpuMicrosPerOp),
          String(o.errors),
          String(h.p50Ms),
          `${cpuX}×`,
        ]);
        process.stderr.write(`${c.era} c=${concurrency}: ${o.perSecond} runs/s, p50 ${o.p50Ms} ms\n`);
      }
    }
  } finally {
    sim.stop();
  }
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  process.stdout.write(
    `\nConformance runs against the simulated fleet, ${SECONDS} s per cell (baseline: a handshake on the same target)\n\n${columns(table)}\n`,
  );
}

await main();
