// `npm run bench:stdio`: what a probe costs over stdio, where each conversation starts a process.
// Per era, a pinned handshake (one process) and a newest-supported one (the lookup's processes
// too) against fleet-sim's stdio servers (SDK 1.32 legacy, SDK 2.4 serveStdio modern), beside the
// baseline in the same run: a loopback HTTP handshake of the same SDK's server (fleet-sim in its
// own process). Per cell: runs/s, p50/p99, the prober's CPU per run (this process), the servers'
// CPU per run (reaped children), and this process's peak RSS; with the load average, as the
// machine is shared.
import { loadavg } from 'node:os';
import { stdioServer } from '@mcp-fleet/fleet-sim';
import { type CommandSpec, handshake, isPassing, type RevisionChoice } from '@mcp-fleet/probe';
import { columns } from '../table';
import { runLoad } from './load';
import { reapedChildrenCpuMicros } from './reaped-cpu';
import { startSimProcess } from './sim-process-client';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** 2 cores: 1 and 4 in flight (each stdio probe is a process start). */
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,4').split(',').map(Number);

interface Case {
  era: 'legacy' | 'modern';
  revision: RevisionChoice;
  stdio: CommandSpec;
  /** The fleet-sim HTTP target built on the same SDK. */
  http: string;
  sdk: string;
}

const CASES: Case[] = [
  { era: 'legacy', revision: '2025-11-25', stdio: stdioServer('v1'), http: 'sessions-2025-11-25', sdk: 'SDK 1.32' },
  { era: 'legacy', revision: 'newest', stdio: stdioServer('v1'), http: 'sessions-2025-11-25', sdk: 'SDK 1.32' },
  { era: 'modern', revision: '2026-07-28', stdio: stdioServer('v2'), http: 'modern', sdk: 'SDK 2.4' },
  { era: 'modern', revision: 'newest', stdio: stdioServer('v2'), http: 'modern', sdk: 'SDK 2.4' },
];

async function main(): Promise<void> {
  const sim = await startSimProcess();
  const table = [
    [
      'Era',
      'Revision',
      'Transport',
      'Conc.',
      'runs/s',
      'p50 ms',
      'p99 ms',
      'procs/run',
      'probe CPU µs/run',
      'server CPU µs/run',
      'peak RSS MiB',
      'err',
      'p50 ×HTTP',
    ],
  ];
  const rows: unknown[] = [];
  const load0 = loadavg();
  try {
    for (const c of CASES) {
      const url = sim.urls.get(c.http)!;
      let processes = 0;
      const overStdio = async () => {
        const run = await handshake(c.stdio, { revision: c.revision });
        processes += run.stdio?.processes ?? 0;
        return isPassing(run.outcome);
      };
      const overHttp = async () => isPassing((await handshake(url, { revision: c.revision })).outcome);
      for (const concurrency of CONCURRENCY) {
        // Warm both paths (module loading, the sim's first requests).
        await runLoad(overStdio, { concurrency, seconds: 0.5 });
        await runLoad(overHttp, { concurrency, seconds: 0.5 });
        const http = await runLoad(overHttp, { concurrency, seconds: SECONDS });
        processes = 0;
        let peakRss = process.memoryUsage().rss;
        const sampler = setInterval(() => {
          peakRss = Math.max(peakRss, process.memoryUsage().rss);
        }, 50);
        const children0 = reapedChildrenCpuMicros();
        const stdio = await runLoad(overStdio, { concurrency, seconds: SECONDS });
        clearInterval(sampler);
        const serverCpu = Math.round((reapedChildrenCpuMicros() - children0) / Math.max(1, stdio.operations));
        const perRun = Math.round((processes / Math.max(1, stdio.operations)) * 10) / 10;
        const ratio = Math.round((stdio.p50Ms / Math.max(0.01, http.p50Ms)) * 10) / 10;
        const mib = Math.round(peakRss / 1024 / 1024);
        rows.push({ ...c, stdio: undefined, concurrency, overStdio: stdio, overHttp: http, perRun, serverCpu, mib });
        const label = String(c.revision);
        table.push(
          [c.era, label, `stdio (${c.sdk})`, String(concurrency), String(stdio.perSecond), String(stdio.p50Ms)]
            .concat([String(stdio.p99Ms), String(perRun), String(stdio.cpuMicrosPerOp), String(serverCpu)])
            .concat([String(mib), String(stdio.errors), `${ratio}×`]),
          [c.era, label, `HTTP (${c.sdk})`, String(concurrency), String(http.perSecond), String(http.p50Ms)].concat([
            String(http.p99Ms),
            '-',
            String(http.cpuMicrosPerOp),
            '-',
            '-',
            String(http.errors),
            '1×',
          ]),
        );
        process.stderr.write(
          `${c.era} ${label} c=${concurrency}: stdio p50 ${stdio.p50Ms} ms (${stdio.errors} err${stdio.firstError ? `: ${stdio.firstError}` : ''}), HTTP p50 ${http.p50Ms} ms\n`,
        );
      }
    }
  } finally {
    sim.stop();
  }
  const load1 = loadavg();
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ loadavg: [load0, load1], rows }, null, 2)}\n`);
    return;
  }
  const avg = (l: number[]) => l.map((n) => n.toFixed(2)).join(' ');
  process.stdout.write(
    `\nHandshakes over stdio (a process per conversation) vs a loopback HTTP handshake of the same SDK's server, ${SECONDS} s per cell\n` +
      `load average before: ${avg(load0)}, after: ${avg(load1)}\n\n${columns(table)}\n`,
  );
}

await main();
