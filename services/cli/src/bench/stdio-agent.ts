// `npm run bench:stdio-agent`: a real agent running stdio jobs at the process bound it allows
// (issue 20: `--stdio-concurrency`, default 2 per core), against fleet-sim's stdio servers (SDK
// 1.32 legacy, SDK 2.4 modern), each job a pinned handshake (one process). The agent runs in this
// process on the in-process bus, kept busy (twice its bound of jobs waiting): per era and bound,
// runs/s, job time p50/p99, the agent's CPU per run and in all (this process: the agent, the bus and
// the few lines that publish), the servers' CPU per run (reaped children), and the agent's peak RSS.
// With the load average: the machine may be shared, and a process start is what every run pays.
import { availableParallelism, loadavg } from 'node:os';
import { startAgent } from '@mcp-fleet/agent';
import { createMemoryBus, type Job, type Result } from '@mcp-fleet/bus';
import { stdioServer } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { columns } from '../table';
import { reapedChildrenCpuMicros } from './reaped-cpu';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const DEFAULT_BOUND = 2 * availableParallelism();
/** 1 (a baseline), then the agent's default bound. */
const BOUNDS = (process.env.BENCH_CONCURRENCY ?? `1,${DEFAULT_BOUND}`).split(',').map(Number);
const REGION = 'bench';

const CASES = [
  { era: 'legacy', revision: '2025-11-25', server: stdioServer('v1'), sdk: 'SDK 1.32' },
  { era: 'modern', revision: '2026-07-28', server: stdioServer('v2'), sdk: 'SDK 2.4' },
] as const;

const quantile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0;

let serial = 0;
function job(c: (typeof CASES)[number]): Job {
  const now = Date.now();
  serial += 1;
  return {
    jobId: `bench-stdio-${serial}`,
    kind: 'handshake',
    region: REGION,
    serverId: `srv-${c.era}`,
    serverName: `stdio-${c.era}`,
    testId: `test-${c.era}`,
    command: { command: c.server.command, args: [...c.server.args], env: { ...c.server.env } },
    headers: {},
    depth: 'handshake',
    script: null,
    revision: c.revision,
    currentRevision: c.revision,
    recheck: false,
    timeoutMs: 20_000,
    slot: now,
    scheduledAt: new Date(now).toISOString(),
    allow: [],
    deny: [],
  };
}

async function pass(c: (typeof CASES)[number], bound: number) {
  const log = createLogger('bench', 'warn', process.stderr);
  const bus = createMemoryBus({ log });
  const results: Result[] = [];
  bus.consumeResults(
    async (d) => {
      results.push(d.value);
      await d.ack();
    },
    { concurrency: 64 },
  );
  const agent = await startAgent({
    bus,
    region: REGION,
    log,
    processMetrics: false,
    metricsPort: null,
    concurrency: 4 * bound,
    stdioCommands: [c.server.command],
    stdioConcurrency: bound,
  });
  let stop = false;
  // Keep twice the bound waiting: the agent never idles for want of a job.
  const feeder = (async () => {
    while (!stop) {
      const waiting = (await bus.pending()).jobs[REGION] ?? 0;
      for (let i = waiting; i < 2 * bound; i++) await bus.publishJob(job(c));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  // One warm-up second, then the measured window.
  await new Promise((r) => setTimeout(r, 1_000));
  const first = results.length;
  const cpu0 = process.cpuUsage();
  const children0 = reapedChildrenCpuMicros();
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 100);
  const began = performance.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const elapsedMs = performance.now() - began;
  const cpu = process.cpuUsage(cpu0);
  const children = reapedChildrenCpuMicros() - children0;
  clearInterval(sampler);
  const window = results.slice(first);
  stop = true;
  await feeder;
  await agent.stop();
  await bus.close();
  const runs = window.length;
  const times = window.map((r) => Date.parse(r.finishedAt) - Date.parse(r.startedAt)).sort((a, b) => a - b);
  const failed = window.filter((r) => r.run?.outcome !== 'success').length;
  const ownMicros = cpu.user + cpu.system;
  return {
    runsPerS: runs / (elapsedMs / 1000),
    p50: quantile(times, 0.5),
    p99: quantile(times, 0.99),
    agentMsPerRun: runs ? ownMicros / runs / 1000 : 0,
    agentCorePct: (ownMicros / 1000 / elapsedMs) * 100,
    serverMsPerRun: runs ? children / runs / 1000 : 0,
    peakRssMiB: peakRss / 2 ** 20,
    failed,
  };
}

async function main(): Promise<void> {
  const load0 = loadavg().map((n) => n.toFixed(2));
  const table = [
    [
      'era',
      'revision',
      'SDK',
      'stdio bound',
      'runs/s',
      'p50 ms',
      'p99 ms',
      'agent CPU ms/run',
      'agent % of a core',
      'server CPU ms/run',
      'agent peak RSS MiB',
      'failed',
    ],
  ];
  for (const c of CASES)
    for (const bound of BOUNDS) {
      const r = await pass(c, bound);
      table.push([
        c.era,
        c.revision,
        c.sdk,
        String(bound),
        r.runsPerS.toFixed(1),
        r.p50.toFixed(0),
        r.p99.toFixed(0),
        r.agentMsPerRun.toFixed(1),
        r.agentCorePct.toFixed(1),
        r.serverMsPerRun.toFixed(0),
        r.peakRssMiB.toFixed(0),
        String(r.failed),
      ]);
    }
  console.log(
    `stdio jobs on a real agent, ${SECONDS} s measured per row (pinned handshakes, one process each); ` +
      `default bound ${DEFAULT_BOUND} (2 per core); load average at start ${load0.join(' ')}, at end ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
  );
  console.log(columns(table));
}

await main();
