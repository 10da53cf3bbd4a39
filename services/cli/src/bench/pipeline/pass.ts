// One pass of bench:pipeline: its own database and NATS namespace, agents, then the monitor
// (startMonitor) on the cheap fleet; a warm-up, a measured window, a drain, and every figure of
// PassResult. Everything the pass started is stopped and removed, on success, failure or Ctrl-C.

import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { connectNatsBus, type NatsBus } from '@mcp-fleet/bus';
import { fleetToYaml } from '@mcp-fleet/config';
import { parseFleet } from '@mcp-fleet/control';
import { type Monitor, startMonitor } from '@mcp-fleet/monitor';
import type { Store } from '@mcp-fleet/store';
import { type BenchAgent, startBenchAgent } from './bench-agent';
import { type Child, forkChild } from './children';
import { lagHistogram, scrapeLagBuckets } from './histogram';
import { isAborted, sleep, throwIfAborted } from './interrupt';
import { observeControlBus } from './observe';
import { cpuPercent, cpuSnapshot } from './proc-cpu';
import { startWindowProfile } from './profile';
import { type PassResult, quantiles, verdict } from './result';
import { startScraper } from './scraper';
import { ADMIN_URL, benchLogger, type Config, NATS_URL, note, REGION, round } from './settings';

export async function runPass(cfg: Config, fleet: Child, urls: readonly string[], admin: Store): Promise<PassResult> {
  const tag = randomBytes(4).toString('hex');
  const dbName = `mcpfleet_bench_${tag}`;
  const namespace = `bench_${tag}`;
  const log = benchLogger('control');
  const targetPerS = cfg.targets / cfg.intervalS;
  const warmupS = cfg.warmupS ?? cfg.intervalS;
  const measureS = Math.max(10, cfg.seconds - warmupS);
  note(
    `pass: ${cfg.targets} targets every ${cfg.intervalS} s = ${round(targetPerS)} jobs/s; ` +
      `${warmupS} s warm-up + ${measureS} s measured (db ${dbName}, namespace ${namespace})`,
  );

  let monitor: Monitor | undefined;
  let controlBus: NatsBus | undefined;
  let agent: BenchAgent | undefined;
  const agentChildren: Child[] = [];
  let dbCreated = false;
  try {
    const t0 = Date.now();
    await admin.db.execute(`create database ${dbName}`);
    dbCreated = true;
    const url = new URL(ADMIN_URL);
    url.pathname = `/${dbName}`;
    controlBus = await connectNatsBus({ servers: NATS_URL, namespace, name: 'bench-control', log });
    const seen = observeControlBus(controlBus);
    const fleetDef = parseFleet(fleetYaml(urls, cfg.intervalS), 'bench.yaml', {});

    // Agents first, so the first slots find someone to run them.
    if (cfg.agentProcs === 0) agent = await startBenchAgent(namespace, cfg.agentConcurrency);
    else {
      for (let i = 0; i < cfg.agentProcs; i++)
        agentChildren.push(forkChild('agent', [namespace, String(cfg.agentConcurrency ?? '')]));
      await Promise.all(agentChildren.map((c) => c.next('ready')));
    }

    monitor = await startMonitor({
      log,
      // Ingest's writers hold one connection each (group commit), whatever the results in flight.
      store: { open: { databaseUrl: url.toString() } },
      // The bus is the pass's own: its streams are deleted before it closes.
      bus: seen.bus,
      control: {
        fleet: fleetDef,
        port: 0,
        host: '127.0.0.1',
        ...(cfg.ingestConcurrency ? { ingestConcurrency: cfg.ingestConcurrency } : {}),
      },
      agents: false,
    });
    const { control, store } = monitor;
    const started = Date.now();
    const setupS = (started - t0) / 1000;
    note(`  set up in ${round(setupS)} s (database, migrations, ${cfg.targets} servers applied); scheduling`);

    const progress = setInterval(() => {
      const s = Math.round((Date.now() - started) / 1000);
      note(`  +${s}s published ${seen.published.size}, committed ${seen.committed.size}`);
    }, 15_000);
    progress.unref();
    const scraper = startScraper(fleet, control.url, cfg.scrapeS);
    try {
      await sleep(warmupS * 1000);
      throwIfAborted();
      // Just before the window: a scrape reads every server's state from the database, which takes a moment.
      const h0 = await scrapeLagBuckets(control.url);
      const windowStart = Date.now();
      const skipped0 = control.scheduler.skipped;
      const pendingAtStart = await controlBus.pending();
      const cpu0 = cpuSnapshot(fleet.pid, agentChildren);
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const requests0 = (await fleet.ask({ type: 'stats' }, 'stats')).requests ?? 0;
      const profileDir = process.env.BENCH_CPU_PROF;
      const profile = profileDir ? await startWindowProfile() : undefined;
      if (profileDir) await Promise.all(agentChildren.map((c) => c.ask({ type: 'profile-start' }, 'profiling')));
      await sleep(measureS * 1000);
      throwIfAborted();
      const windowEnd = Date.now();
      loop.disable();
      if (profileDir) {
        const prefix = `${profileDir}/${targetPerS.toFixed(0)}-per-s-${tag}`;
        await profile?.stop(`${prefix}-control.cpuprofile`);
        await Promise.all(
          agentChildren.map((c, i) =>
            c.ask({ type: 'profile-stop', file: `${prefix}-agent${i}.cpuprofile` }, 'profiled'),
          ),
        );
        note(`  CPU profiles of the window: ${prefix}-*.cpuprofile`);
      }
      const cpu1 = cpuSnapshot(fleet.pid, agentChildren);
      const h1 = await scrapeLagBuckets(control.url);
      const pendingAtEnd = await controlBus.pending();
      const requests1 = (await fleet.ask({ type: 'stats' }, 'stats')).requests ?? 0;
      const skippedSlots = control.scheduler.skipped - skipped0;

      // Drain: no new slots; wait for every job published so far to land as a row.
      control.scheduler.stop();
      const drainUntil = Date.now() + cfg.drainS * 1000;
      const allCommitted = () => [...seen.published.keys()].every((id) => seen.committed.has(id));
      while (Date.now() < drainUntil && !isAborted() && !allCommitted()) await sleep(250);
      const drained = allCommitted();
      if (process.env.BENCH_RAW) writeRaw(process.env.BENCH_RAW, cfg.intervalS, seen.published, seen.committed);
      clearInterval(progress);

      const inWindow = (t: number) => t >= windowStart && t < windowEnd;
      const sched = [...seen.published.values()].filter((p) => inWindow(p.slot)).map((p) => p.at - p.slot);
      const jobsInWindow = [...seen.published.values()].filter((p) => inWindow(p.at)).length;
      const commits = [...seen.committed.values()];
      const runsInWindow = commits.filter((c) => inWindow(c.at)).length;
      // Lags over the slots of the window (the warm-up's backlog is not this window's lag).
      const commitLag = commits.filter((c) => inWindow(c.slot)).map((c) => c.at - c.finishedAt);
      const slotToRow = commits.filter((c) => inWindow(c.slot)).map((c) => c.at - c.slot);

      const db = store.db;
      const ts = (ms: number) => `'${new Date(ms).toISOString()}'::timestamptz`;
      const rows = async <T>(q: string) => ((await db.execute(q)) as unknown as { rows: T[] }).rows;
      const [pickup] = await rows<{ p50: number | null; p99: number | null; max: number | null; n: string }>(
        `select percentile_cont(0.5) within group (order by ms) p50, percentile_cont(0.99) within group (order by ms) p99,
           max(ms) max, count(*) n
         from (select extract(epoch from started_at - scheduled_at) * 1000 ms from runs
               where scheduled_at >= ${ts(windowStart)} and scheduled_at < ${ts(windowEnd)}) l`,
      );
      const [byFinished] = await rows<{ n: string }>(
        `select count(*) n from runs where finished_at >= ${ts(windowStart)} and finished_at < ${ts(windowEnd)}`,
      );
      const [dups] = await rows<{ n: string }>(
        'select count(*) n from (select job_id from runs group by job_id having count(*) > 1) d',
      );
      const outcomes = await rows<{ outcome: string; n: string }>(
        `select outcome, count(*) n from runs
         where scheduled_at >= ${ts(windowStart)} and scheduled_at < ${ts(windowEnd)} group by outcome`,
      );
      const written = new Set((await rows<{ job_id: string }>('select job_id from runs')).map((r) => r.job_id));
      const lost = [...seen.published.keys()].filter((id) => !written.has(id)).length;
      const histogram = h0 && h1 ? lagHistogram(h0, h1) : null;

      const agentStats = agent
        ? agent.stats()
        : (await Promise.all(agentChildren.map((c) => c.ask({ type: 'stats' }, 'stats')))).reduce(
            (a, s) => ({
              deliveries: a.deliveries + (s.deliveries ?? 0),
              repeats: a.repeats + (s.repeats ?? 0),
              redelivered: a.redelivered + (s.redelivered ?? 0),
            }),
            { deliveries: 0, repeats: 0, redelivered: 0 },
          );
      const measuredS = (windowEnd - windowStart) / 1000;
      const failedRuns = Object.fromEntries(
        outcomes.filter((o) => o.outcome !== 'success').map((o) => [o.outcome, Number(o.n)]),
      );
      const result: PassResult = {
        intervalS: cfg.intervalS,
        targetPerS: round(targetPerS),
        setupS: round(setupS),
        measuredS: round(measuredS),
        jobsPerS: round(jobsInWindow / measuredS),
        runsPerS: round(runsInWindow / measuredS),
        runsByFinishedPerS: round(Number(byFinished?.n ?? 0) / measuredS),
        schedLagMs: quantiles(sched),
        histogram,
        pickupLagMs: {
          p50: round(pickup?.p50 ?? 0),
          p99: round(pickup?.p99 ?? 0),
          max: round(pickup?.max ?? 0),
          n: Number(pickup?.n ?? 0),
        },
        commitLagMs: quantiles(commitLag),
        slotToRowMs: quantiles(slotToRow),
        skippedSlots,
        publishErrors: seen.errors(),
        published: seen.published.size,
        lost,
        drained,
        duplicateRows: Number(dups?.n ?? 0),
        resultRedeliveries: seen.resultRepeats(),
        jobsRunTwice: agentStats.repeats,
        jobRedeliveries: agentStats.redelivered,
        failedRuns,
        pendingAtStart: {
          jobs: Object.values(pendingAtStart.jobs).reduce((a, b) => a + b, 0),
          results: pendingAtStart.results,
        },
        pendingAtEnd: {
          jobs: Object.values(pendingAtEnd.jobs).reduce((a, b) => a + b, 0),
          results: pendingAtEnd.results,
        },
        eventLoopP99Ms: round(loop.percentile(99) / 1e6),
        eventLoopMaxMs: round(loop.max / 1e6),
        cpu: cpuPercent(cpu0, cpu1, measuredS, cfg.agentProcs === 0),
        cpuMsPerJob: 0,
        targetRequests: requests1 - requests0,
        scrapes: await scraper.between(windowStart, windowEnd),
        sustained: false,
        why: [],
      };
      const { 'targets (child)': _targets, other: _other, 'machine busy': _machine, ...pipeline } = result.cpu;
      const pipelinePct = Object.values(pipeline).reduce((a, b) => a + b, 0);
      result.cpuMsPerJob = round((pipelinePct * 10) / Math.max(1, result.jobsPerS));
      result.why = verdict(result);
      result.sustained = result.why.length === 0;
      return result;
    } finally {
      clearInterval(progress);
      scraper.stop();
    }
  } finally {
    // Everything this pass started, in reverse, each step on its own so one failure stops no other.
    const step = async (what: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        note(`  cleanup: could not ${what}: ${(err as Error).message}`);
      }
    };
    if (agent) await step('stop the agent', () => agent!.stop());
    await step('stop the agent processes', () =>
      Promise.all(
        agentChildren.map((c) =>
          c.ask({ type: 'stop' }, 'stopped').then(
            () => c.kill(),
            () => c.kill(),
          ),
        ),
      ),
    );
    if (monitor) await step('stop control and close the store', () => monitor!.stop());
    if (controlBus) {
      const nc = controlBus.connection;
      const names = controlBus.names;
      for (const stream of [names.jobsStream, names.resultsStream])
        await step(`delete stream ${stream}`, () =>
          nc.request(`$JS.API.STREAM.DELETE.${stream}`, '', { timeout: 5_000 }),
        );
      await step('close the control bus', () => controlBus!.close());
    }
    if (dbCreated)
      await step(`drop ${dbName}`, () => admin.db.execute(`drop database if exists ${dbName} with (force)`));
  }
}

/** The pass's fleet: every target one newest-supported test at the interval. */
function fleetYaml(urls: readonly string[], intervalS: number): string {
  const ms = Math.round(intervalS * 1000);
  return fleetToYaml({
    regions: [REGION],
    defaults: { interval: ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`, timeout: `${Math.min(5_000, ms)}ms` },
    policy: { allow: ['127.0.0.0/8'] },
    servers: urls.map((url, i) => ({ name: `t${i}`, url, tests: [{ revision: 'newest' }] })),
  });
}

/** BENCH_RAW=<file>: one CSV line per job (ms since the epoch), for looking at lags over time. */
function writeRaw(
  file: string,
  intervalS: number,
  published: ReadonlyMap<string, { slot: number; at: number }>,
  committed: ReadonlyMap<string, { finishedAt: number; at: number }>,
): void {
  const lines = ['interval_s,job_id,slot,published,finished,committed'];
  for (const [id, p] of published) {
    const c = committed.get(id);
    lines.push(`${intervalS},${id},${p.slot},${p.at},${c?.finishedAt ?? ''},${c?.at ?? ''}`);
  }
  appendFileSync(file, `${lines.join('\n')}\n`);
}
