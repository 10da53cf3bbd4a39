// `npm run bench:pipeline`: the whole monitor under load on Postgres + NATS JetStream. N cheap
// targets (one loopback port, N paths; in a child process so their CPU is not charged to the
// pipeline) each get one newest-supported test at an interval; control schedules, an agent probes,
// control ingests. The first interval warms up (first runs look their revision up, the start
// publishes every still-fresh slot at once); the rest is measured. `--find-max` then shortens the
// interval step by step until a step stops being sustained. Every pass has its own database and
// NATS namespace, both removed afterwards, on success, failure or Ctrl-C.
//
// Lags, all on this machine's one clock:
//   scheduling  bus accepted the job − slot start (what mcp_scheduler_lag_seconds observes; read
//               here by wrapping the Bus that control is given, so control needs no hook)
//   pick-up     run started_at − scheduled_at (from the runs table)
//   commit      ingest acked the result (it acks only after the commit) − run finished_at
//   slot→row    ingest ack − slot start: how old the newest data is when it lands
//
// A pass is sustained when scheduling and pick-up p99 stay under 2 s, jobs/s and runs/s reach 95% of
// the target rate, the bus backlog does not grow, and no slot is skipped, lost, doubled or failed.
//
// Flags: --json, --find-max. Env: BENCH_TARGETS (10000), BENCH_INTERVAL s (60), BENCH_SECONDS (150,
// warm-up included), BENCH_WARMUP s (one interval), BENCH_AGENT_PROCS (0 = one agent inside the
// control process; n = n agent processes), BENCH_AGENT_CONCURRENCY and BENCH_INGEST_CONCURRENCY (the
// services' defaults), BENCH_DRAIN s (30), BENCH_STEPS (find-max intervals in s; default the base
// rate × 1.25, 1.5, 1.75, 2, 2.5, 3, 4), BENCH_RAW (append one CSV line per job to this file),
// BENCH_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres), NATS_URL (nats://127.0.0.1:4222).
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type Agent, startAgent } from '@mcp-fleet/agent';
import { type Bus, connectNatsBus, type Delivery, type Job, type NatsBus, type Result } from '@mcp-fleet/bus';
import { type Control, parseFleet, startControl } from '@mcp-fleet/control';
import { startCheapFleet } from '@mcp-fleet/fleet-sim';
import { createLogger, type Logger } from '@mcp-fleet/log';
import { openStore, type Store } from '@mcp-fleet/store';
import { columns } from '../table';

const REGION = 'bench';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
/** The cheap fleet listens on loopback: the agents' floor (public addresses only by default) must allow it. */
const LOOPBACK_FLOOR = { allow: ['127.0.0.0/8'], deny: [] };
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SELF = fileURLToPath(import.meta.url);
/** The goal this benchmark exists for. */
const GOAL_P99_MS = 2_000;
/** A pass keeps up when it does at least this share of its target rate. */
const KEEP_UP = 0.95;

interface Config {
  targets: number;
  intervalS: number;
  seconds: number;
  /** Default: one interval. */
  warmupS: number | undefined;
  agentProcs: number;
  agentConcurrency: number | undefined;
  ingestConcurrency: number | undefined;
  drainS: number;
}

// ─── children: the cheap fleet and agent processes ────────────────────────────────────────────

type ToChild = { type: 'stats' } | { type: 'stop' };
type FromChild =
  | { type: 'ready'; urls?: string[] }
  | { type: 'stats'; requests?: number; deliveries?: number; repeats?: number; redelivered?: number }
  | { type: 'stopped' };

async function childMain(role: string, args: string[]): Promise<void> {
  const send = (m: FromChild) => process.send?.(m);
  // Ctrl-C reaches the whole process group: the parent decides when children stop (it still needs them to clean up).
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => {});
  if (role === 'fleet') {
    const fleet = await startCheapFleet({ count: Number(args[0]) });
    process.on('message', (m: ToChild) => m.type === 'stats' && send({ type: 'stats', requests: fleet.requests() }));
    // The parent going away (even killed) ends the fleet.
    process.on('disconnect', () => void fleet.close().then(() => process.exit(0)));
    send({ type: 'ready', urls: fleet.urls });
    return;
  }
  const [namespace, concurrency] = args;
  const log = benchLogger('agent');
  const bus = await connectNatsBus({ servers: NATS_URL, namespace: namespace!, name: 'bench-agent', log });
  const seen = countDeliveries();
  const agent = await startAgent({
    bus: seen.wrap(bus),
    region: REGION,
    id: `bench-agent-${process.pid}`,
    ...(concurrency ? { concurrency: Number(concurrency) } : {}),
    metricsPort: null,
    processMetrics: false,
    stopGraceMs: 5_000,
    log,
    probeFloor: LOOPBACK_FLOOR,
  });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= agent
      .stop()
      .then(() => bus.close())
      .catch(() => {});
    return stopping;
  };
  process.on('message', (m: ToChild) => {
    if (m.type === 'stats') send({ type: 'stats', ...seen.stats() });
    else void stop().then(() => send({ type: 'stopped' }));
  });
  process.on('disconnect', () => void stop().then(() => process.exit(0)));
  send({ type: 'ready' });
}

/** A forked copy of this file in a role; `ask` sends a message and waits for the answer of a type. */
function forkChild(role: string, args: string[]) {
  const child: ChildProcess = fork(SELF, ['--role', role, ...args], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // A send to a child that died is reported by the answer's timeout or exit, not as a crash here.
  child.on('error', (err) => note(`${role} process: ${err.message}`));
  const next = <T extends FromChild['type']>(type: T, timeoutMs = 60_000) =>
    new Promise<Extract<FromChild, { type: T }>>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`${role} process: no ${type} within ${timeoutMs} ms`)), timeoutMs);
      const onMessage = (m: FromChild) => m.type === type && done(undefined, m as Extract<FromChild, { type: T }>);
      const onExit = (code: number | null) => done(new Error(`${role} process exited (${code})`));
      const done = (err?: Error, m?: Extract<FromChild, { type: T }>) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (err) reject(err);
        else resolve(m!);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  return {
    pid: child.pid ?? 0,
    next,
    ask<T extends FromChild['type']>(msg: ToChild, type: T) {
      const answer = next(type);
      if (child.connected) child.send(msg);
      else return Promise.reject(new Error(`${role} process is gone`));
      return answer;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
type Child = ReturnType<typeof forkChild>;

/** Logs go to stderr, so `--json` keeps stdout to itself; only warnings and worse. */
function benchLogger(name: string): Logger {
  return createLogger(name, (process.env.LOG_LEVEL as 'warn' | undefined) ?? 'warn', process.stderr);
}

/** Jobs an agent was handed more than once (a redelivery or a double publish) show up here. */
function countDeliveries() {
  const seen = new Set<string>();
  let deliveries = 0;
  let repeats = 0;
  let redelivered = 0;
  return {
    stats: () => ({ deliveries, repeats, redelivered }),
    wrap: (bus: Bus): Bus => ({
      ...bus,
      consumeJobs: (region, handler, opts) =>
        bus.consumeJobs(
          region,
          (d) => {
            deliveries += 1;
            if (d.redeliveries > 0) redelivered += 1;
            if (seen.has(d.value.jobId)) repeats += 1;
            else seen.add(d.value.jobId);
            return handler(d);
          },
          opts,
        ),
    }),
  };
}

// ─── one pass ─────────────────────────────────────────────────────────────────────────────────

/** What control's bus saw: each job accepted (lag = accepted − slot), each result committed. */
function observeControlBus(bus: NatsBus) {
  const published = new Map<string, { slot: number; at: number }>();
  const committed = new Map<string, { slot: number; finishedAt: number; at: number }>();
  let publishErrors = 0;
  let resultRepeats = 0;
  const wrapped: Bus = {
    ...bus,
    async publishJob(job: Job) {
      try {
        const out = await bus.publishJob(job);
        if (!out.duplicate) published.set(job.jobId, { slot: job.slot, at: Date.now() });
        return out;
      } catch (err) {
        publishErrors += 1;
        throw err;
      }
    },
    consumeResults: (handler, opts) =>
      bus.consumeResults((d: Delivery<Result>) => {
        const r = d.value;
        // Ingest acks only after its commit (or after finding the run already written).
        const ack = async () => {
          if (committed.has(r.jobId)) resultRepeats += 1;
          else committed.set(r.jobId, { slot: r.slot, finishedAt: Date.parse(r.finishedAt), at: Date.now() });
          return d.ack();
        };
        return handler({
          value: r,
          redeliveries: d.redeliveries,
          ack,
          nak: (ms) => d.nak(ms),
          term: (reason) => d.term(reason),
          working: () => d.working(),
        });
      }, opts),
  };
  return { bus: wrapped, published, committed, errors: () => publishErrors, resultRepeats: () => resultRepeats };
}

function fleetYaml(urls: readonly string[], intervalS: number): string {
  const ms = Math.round(intervalS * 1000);
  const interval = ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
  const timeout = `${Math.min(5_000, ms)}ms`;
  const lines = [
    `regions: [${REGION}]`,
    `defaults: { interval: ${interval}, timeout: ${timeout} }`,
    'policy: { allow: ["127.0.0.0/8"] }',
    'servers:',
  ];
  for (const [i, url] of urls.entries())
    lines.push(`  - { name: t${i}, url: "${url}", tests: [{ revision: newest }] }`);
  return `${lines.join('\n')}\n`;
}

interface PassResult {
  intervalS: number;
  targetPerS: number;
  setupS: number;
  measuredS: number;
  jobsPerS: number;
  runsPerS: number;
  runsByFinishedPerS: number;
  schedLagMs: Quantiles;
  /** Control's mcp_scheduler_lag_seconds: bucket bounds over the window (a scrape at each end) and the whole pass. */
  histogram: { p50: string; p99: string; count: number; wholePassP99: string; scrapeMs: number } | null;
  pickupLagMs: Quantiles;
  commitLagMs: Quantiles;
  slotToRowMs: Quantiles;
  skippedSlots: number;
  publishErrors: number;
  published: number;
  /** Jobs published but not written once the drain ended; losses only when `drained`. */
  lost: number;
  /** Every published job was written before BENCH_DRAIN ran out (otherwise `lost` is partly backlog). */
  drained: boolean;
  duplicateRows: number;
  resultRedeliveries: number;
  jobsRunTwice: number;
  jobRedeliveries: number;
  failedRuns: Record<string, number>;
  /** Messages waiting in the bus (jobs, results) when the window opened and when it closed. */
  pendingAtStart: { jobs: number; results: number };
  pendingAtEnd: { jobs: number; results: number };
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
  /**
   * CPU the pipeline spent per job published (control, agents, nats-server, Postgres; not the
   * targets, which stand in for remote servers): what a machine's cores buy, whatever else runs.
   */
  cpuMsPerJob: number;
  cpu: Record<string, number>;
  targetRequests: number;
  sustained: boolean;
  why: string[];
}

type Quantiles = { p50: number; p99: number; max: number; n: number };

async function runPass(cfg: Config, fleet: Child, urls: readonly string[], admin: Store): Promise<PassResult> {
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

  let store: Store | undefined;
  let controlBus: NatsBus | undefined;
  let control: Control | undefined;
  // The agent inside this process (BENCH_AGENT_PROCS=0) has a NATS connection of its own, as it would apart.
  let agentBus: NatsBus | undefined;
  let agent: Agent | undefined;
  const agentChildren: Child[] = [];
  let dbCreated = false;
  try {
    const t0 = Date.now();
    await admin.db.execute(`create database ${dbName}`);
    dbCreated = true;
    const url = new URL(ADMIN_URL);
    url.pathname = `/${dbName}`;
    // Room for every ingest worker plus control's own reads (the default pool is 10).
    store = await openStore({ databaseUrl: url.toString(), poolSize: Math.max(10, (cfg.ingestConcurrency ?? 8) + 4) });
    await store.migrate();
    controlBus = await connectNatsBus({ servers: NATS_URL, namespace, name: 'bench-control', log });
    const seen = observeControlBus(controlBus);
    const fleetDef = parseFleet(fleetYaml(urls, cfg.intervalS), 'bench.yaml', {});

    // Agents first, so the first slots find someone to run them.
    const agentSeen = countDeliveries();
    if (cfg.agentProcs === 0) {
      agentBus = await connectNatsBus({ servers: NATS_URL, namespace, name: 'bench-agent', log });
      agent = await startAgent({
        bus: agentSeen.wrap(agentBus),
        region: REGION,
        id: `bench-agent-${process.pid}`,
        ...(cfg.agentConcurrency ? { concurrency: cfg.agentConcurrency } : {}),
        metricsPort: null,
        processMetrics: false,
        stopGraceMs: 5_000,
        log: benchLogger('agent'),
        probeFloor: LOOPBACK_FLOOR,
      });
    } else {
      for (let i = 0; i < cfg.agentProcs; i++) {
        const child = forkChild('agent', [namespace, String(cfg.agentConcurrency ?? '')]);
        agentChildren.push(child);
      }
      await Promise.all(agentChildren.map((c) => c.next('ready')));
    }

    control = await startControl({
      store,
      bus: seen.bus,
      log,
      fleet: fleetDef,
      port: 0,
      host: '127.0.0.1',
      ...(cfg.ingestConcurrency ? { ingestConcurrency: cfg.ingestConcurrency } : {}),
    });
    const started = Date.now();
    const setupS = (started - t0) / 1000;
    note(`  set up in ${round(setupS)} s (database, migrations, ${cfg.targets} servers applied); scheduling`);

    const progress = setInterval(() => {
      const s = Math.round((Date.now() - started) / 1000);
      note(`  +${s}s published ${seen.published.size}, committed ${seen.committed.size}`);
    }, 15_000);
    progress.unref();
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
      await sleep(measureS * 1000);
      throwIfAborted();
      const windowEnd = Date.now();
      loop.disable();
      const cpu1 = cpuSnapshot(fleet.pid, agentChildren);
      const h1 = await scrapeLagBuckets(control.url);
      const pendingAtEnd = await controlBus.pending();
      const requests1 = (await fleet.ask({ type: 'stats' }, 'stats')).requests ?? 0;
      const skippedSlots = control.scheduler.skipped - skipped0;

      // Drain: no new slots; wait for every job published so far to land as a row.
      control.scheduler.stop();
      const drainUntil = Date.now() + cfg.drainS * 1000;
      const allCommitted = () => [...seen.published.keys()].every((id) => seen.committed.has(id));
      while (Date.now() < drainUntil && !aborted && !allCommitted()) await sleep(250);
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
        ? agentSeen.stats()
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
    if (agentBus) await step('close the agent bus', () => agentBus!.close());
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
    if (control) await step('stop control', () => control!.stop());
    if (controlBus) {
      const nc = controlBus.connection;
      const names = controlBus.names;
      for (const stream of [names.jobsStream, names.resultsStream])
        await step(`delete stream ${stream}`, () =>
          nc.request(`$JS.API.STREAM.DELETE.${stream}`, '', { timeout: 5_000 }),
        );
      await step('close the control bus', () => controlBus!.close());
    }
    if (store) await step('close the store', () => store!.close());
    if (dbCreated)
      await step(`drop ${dbName}`, () => admin.db.execute(`drop database if exists ${dbName} with (force)`));
  }
}

function verdict(r: PassResult): string[] {
  const why: string[] = [];
  if (r.schedLagMs.p99 >= GOAL_P99_MS) why.push(`scheduling p99 ${r.schedLagMs.p99} ms ≥ ${GOAL_P99_MS}`);
  if (r.jobsPerS < KEEP_UP * r.targetPerS) why.push(`published ${r.jobsPerS}/s < ${KEEP_UP * 100}% of target`);
  if (r.runsPerS < KEEP_UP * r.targetPerS) why.push(`ingested ${r.runsPerS}/s < ${KEEP_UP * 100}% of target`);
  // Pick-up is read from the rows: slots whose runs never landed are not in it.
  if (r.pickupLagMs.n < KEEP_UP * r.schedLagMs.n)
    why.push(`only ${r.pickupLagMs.n} of the window's ${r.schedLagMs.n} slots have a run`);
  if (r.pickupLagMs.p99 >= GOAL_P99_MS)
    why.push(`pick-up p99 ${r.pickupLagMs.p99} ms ≥ ${GOAL_P99_MS} (jobs queue up)`);
  const backlog = (p: PassResult['pendingAtEnd']) => p.jobs + p.results;
  const grew = backlog(r.pendingAtEnd) - backlog(r.pendingAtStart);
  // More than two seconds of work piled up over the window: the pipeline is falling behind.
  if (grew > 2 * r.targetPerS) why.push(`the bus backlog grew by ${grew} messages`);
  if (r.skippedSlots > 0) why.push(`${r.skippedSlots} slots skipped`);
  if (r.publishErrors > 0) why.push(`${r.publishErrors} publish errors`);
  if (r.lost > 0 && r.drained) why.push(`${r.lost} jobs never written`);
  if (!r.drained) why.push(`${r.lost} jobs still unwritten after the drain (backlog)`);
  if (r.duplicateRows > 0) why.push(`${r.duplicateRows} job ids with more than one run`);
  const failed = Object.values(r.failedRuns).reduce((a, b) => a + b, 0);
  if (failed > 0) why.push(`${failed} runs did not succeed (${JSON.stringify(r.failedRuns)})`);
  return why;
}

type Buckets = { le: string; n: number }[];

/** Control's mcp_scheduler_lag_seconds buckets (cumulative), read from its /metrics. */
async function scrapeLagBuckets(controlUrl: string): Promise<{ buckets: Buckets; ms: number } | null> {
  const t0 = Date.now();
  try {
    const res = await fetch(`${controlUrl}/metrics`, { signal: AbortSignal.timeout(60_000) });
    const text = await res.text();
    const buckets: Buckets = [];
    for (const m of text.matchAll(/^mcp_scheduler_lag_seconds_bucket\{le="([^"]+)"\} (\d+)/gm))
      buckets.push({ le: m[1]!, n: Number(m[2]) });
    return { buckets, ms: Date.now() - t0 };
  } catch (err) {
    note(`  could not read control's /metrics: ${(err as Error).message}`);
    return null;
  }
}

/** The bucket bounds holding p50 and p99 between two scrapes, and p99 since control started. */
function lagHistogram(
  a: { buckets: Buckets; ms: number },
  b: { buckets: Buckets; ms: number },
): PassResult['histogram'] {
  const at = (buckets: Buckets, q: number) => {
    const count = buckets.at(-1)?.n ?? 0;
    const found = buckets.find((x) => x.n >= q * count);
    return found ? (found.le === '+Inf' ? '> 10 s' : `≤ ${Number(found.le) * 1000} ms`) : '-';
  };
  const window = b.buckets.map((x, i) => ({ le: x.le, n: x.n - (a.buckets[i]?.n ?? 0) }));
  return {
    p50: at(window, 0.5),
    p99: at(window, 0.99),
    count: window.at(-1)?.n ?? 0,
    wholePassP99: at(b.buckets, 0.99),
    scrapeMs: Math.max(a.ms, b.ms),
  };
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

// ─── CPU by process, from /proc ───────────────────────────────────────────────────────────────

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

function ticksOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

/** Every process with this command name (Postgres is one process per connection). */
function pidsNamed(name: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() === name) out.push(Number(d));
    } catch {}
  }
  return out;
}

function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busy: total - idle, total };
}

function cpuSnapshot(fleetPid: number, agents: readonly Child[]) {
  const sum = (pids: number[]) => pids.reduce((a, p) => a + ticksOf(p), 0);
  return {
    main: ticksOf(process.pid),
    agents: sum(agents.map((a) => a.pid)),
    fleet: ticksOf(fleetPid),
    nats: sum(pidsNamed('nats-server')),
    postgres: sum(pidsNamed('postgres')),
    machine: machineTicks(),
  };
}

/** % of one core over the window, per process group; the machine's busy share is of all cores. */
function cpuPercent(
  a: ReturnType<typeof cpuSnapshot>,
  b: ReturnType<typeof cpuSnapshot>,
  seconds: number,
  agentInline: boolean,
) {
  const pct = (ticks: number) => round((ticks / CLK_TCK / seconds) * 100);
  const parts: Record<string, number> = {
    [agentInline ? 'control+agent' : 'control']: pct(b.main - a.main),
    ...(agentInline ? {} : { agents: pct(b.agents - a.agents) }),
    'targets (child)': pct(b.fleet - a.fleet),
    'nats-server': pct(b.nats - a.nats),
    'postgres (all)': pct(b.postgres - a.postgres),
  };
  const busy = b.machine.busy - a.machine.busy;
  const total = b.machine.total - a.machine.total;
  // Busy share of the whole machine, as % of one core (2 cores = 200%); "other" is everyone else's work.
  const machine = round((busy / Math.max(1, total)) * 100 * cores());
  parts.other = round(Math.max(0, machine - Object.values(parts).reduce((x, y) => x + y, 0)));
  parts['machine busy'] = machine;
  return parts;
}

function cores(): number {
  return readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((l) => /^cpu\d/.test(l)).length;
}

// ─── output ───────────────────────────────────────────────────────────────────────────────────

function quantiles(values: number[]): Quantiles {
  const s = [...values].sort((x, y) => x - y);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(s.at(-1) ?? 0), n: s.length };
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

const pair = (q: Quantiles) => (q.n ? `${Math.round(q.p50)} / ${Math.round(q.p99)}` : '-');
const trio = (q: Quantiles) => (q.n ? `${Math.round(q.p50)} / ${Math.round(q.p99)} / ${Math.round(q.max)}` : '-');

function printTables(cfg: Config, passes: PassResult[], load: { start: number[]; end: number[] }): void {
  const agents = cfg.agentProcs === 0 ? "1 agent in control's process" : `${cfg.agentProcs} agent process(es)`;
  const head = [
    'interval',
    'target/s',
    'jobs/s',
    'runs/s',
    'sched ms p50/p99/max',
    'histogram p99',
    'pick-up ms p50/p99/max',
    'commit ms p50/p99',
    'slot→row p50/p99',
    'skip',
    'lost',
    'dup',
    'loop p99',
    'CPU ms/job',
    'sustained',
  ];
  const rows = passes.map((p) => [
    `${p.intervalS} s`,
    String(p.targetPerS),
    String(p.jobsPerS),
    String(p.runsPerS),
    trio(p.schedLagMs),
    p.histogram?.p99 ?? '-',
    trio(p.pickupLagMs),
    pair(p.commitLagMs),
    pair(p.slotToRowMs),
    String(p.skippedSlots),
    p.drained ? String(p.lost) : `${p.lost}?`,
    String(p.duplicateRows + p.jobsRunTwice),
    `${p.eventLoopP99Ms} ms`,
    String(p.cpuMsPerJob),
    p.sustained ? 'yes' : 'NO',
  ]);
  const cpuKeys = [...new Set(passes.flatMap((p) => Object.keys(p.cpu)))];
  const cpuRows = [
    ['interval', ...cpuKeys.map((k) => `${k} %`)],
    ...passes.map((p) => [`${p.intervalS} s`, ...cpuKeys.map((k) => String(p.cpu[k] ?? '-'))]),
  ];
  const out = [
    `Pipeline: ${cfg.targets} targets, Postgres + NATS JetStream, ${agents}` +
      `${cfg.agentConcurrency ? ` (concurrency ${cfg.agentConcurrency})` : ''}` +
      `${cfg.ingestConcurrency ? `, ingest concurrency ${cfg.ingestConcurrency}` : ''}; each pass: ` +
      `${cfg.warmupS === undefined ? 'one interval' : `${cfg.warmupS} s`} of warm-up, ` +
      `${Math.max(10, cfg.seconds - (cfg.warmupS ?? cfg.intervalS))} s measured`,
    `load average at start ${load.start.map((l) => l.toFixed(2)).join(' ')}, at end ${load.end.map((l) => l.toFixed(2)).join(' ')}`,
    '',
    columns([head, ...rows]),
    '',
    "sched = bus accepted − slot start (raw, over the window; histogram = control's own over the window);",
    'pick-up = started_at − scheduled_at; commit = ingest ack (after commit) − finished_at; slot→row = ingest ack − slot;',
    'lost "n?" = drain timed out with n unwritten; dup = job ids with >1 run + jobs an agent got twice.',
    '',
    'CPU over the measured window, % of one core:',
    columns(cpuRows),
  ];
  const whole = passes.filter((p) => p.histogram).map((p) => `${p.intervalS} s ${p.histogram!.wholePassP99}`);
  if (whole.length)
    out.push(
      '',
      `control's histogram p99 over the whole pass (the start publishes every still-fresh slot at once): ${whole.join(', ')}`,
    );
  for (const p of passes.filter((x) => !x.sustained))
    out.push('', `${p.intervalS} s not sustained: ${p.why.join('; ')}`);
  const best = passes.filter((p) => p.sustained).sort((a, b) => b.targetPerS - a.targetPerS)[0];
  out.push(
    '',
    best
      ? `Highest sustained rate: ${best.targetPerS} jobs/s (every ${best.intervalS} s), ${round(best.targetPerS / (10_000 / 60))}× the goal of 167 jobs/s`
      : 'No pass was sustained.',
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

function note(line: string): void {
  process.stderr.write(`${line}\n`);
}

// ─── main ─────────────────────────────────────────────────────────────────────────────────────

let aborted = false;
let wakeSleepers: (() => void)[] = [];

class Interrupted extends Error {}

function throwIfAborted(): void {
  if (aborted) throw new Interrupted('interrupted');
}

/** Sleeps that Ctrl-C cuts short, so cleanup starts at once. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      wakeSleepers = wakeSleepers.filter((w) => w !== done);
      resolve();
    }
    wakeSleepers.push(done);
  });
}

function envNumber(name: string, fallback: number | undefined): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number ≥ 0, not ${JSON.stringify(raw)}`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { json: { type: 'boolean', default: false }, 'find-max': { type: 'boolean', default: false } },
    strict: true,
  });
  const cfg: Config = {
    targets: envNumber('BENCH_TARGETS', 10_000)!,
    intervalS: envNumber('BENCH_INTERVAL', 60)!,
    seconds: envNumber('BENCH_SECONDS', 150)!,
    warmupS: envNumber('BENCH_WARMUP', undefined),
    agentProcs: envNumber('BENCH_AGENT_PROCS', 0)!,
    agentConcurrency: envNumber('BENCH_AGENT_CONCURRENCY', undefined),
    ingestConcurrency: envNumber('BENCH_INGEST_CONCURRENCY', undefined),
    drainS: envNumber('BENCH_DRAIN', 30)!,
  };
  const steps = values['find-max']
    ? (process.env.BENCH_STEPS?.split(',').map(Number) ??
      [1.25, 1.5, 1.75, 2, 2.5, 3, 4].map((m) => round(cfg.intervalS / m)))
    : [];
  const measureS = Math.max(10, cfg.seconds - (cfg.warmupS ?? cfg.intervalS));

  const onSignal = () => {
    if (aborted) process.exit(130);
    aborted = true;
    note('interrupted: cleaning up (Ctrl-C again to leave at once)');
    for (const w of [...wakeSleepers]) w();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const load = { start: loadavg(), end: [] as number[] };
  note(`load average at start: ${load.start.map((l) => l.toFixed(2)).join(' ')}`);
  const admin = await openStore({ databaseUrl: ADMIN_URL, poolSize: 1 });
  let fleet: Child | undefined;
  const passes: PassResult[] = [];
  try {
    fleet = forkChild('fleet', [String(cfg.targets)]);
    const { urls } = await fleet.next('ready');
    for (const intervalS of [cfg.intervalS, ...steps]) {
      if (aborted) break;
      // Later passes keep the first one's measured window; their warm-up is their own interval (or BENCH_WARMUP).
      const seconds = (cfg.warmupS ?? intervalS) + measureS;
      let pass: PassResult;
      try {
        pass = await runPass({ ...cfg, intervalS, seconds }, fleet, urls ?? [], admin);
      } catch (err) {
        // An interrupted pass is cleaned up and left out; the passes before it are still reported.
        if (err instanceof Interrupted) break;
        throw err;
      }
      passes.push(pass);
      note(
        `  → ${pass.jobsPerS} jobs/s, ${pass.runsPerS} runs/s, scheduling p99 ${pass.schedLagMs.p99} ms: ` +
          (pass.sustained ? 'sustained' : `not sustained (${pass.why.join('; ')})`),
      );
      if (!pass.sustained && intervalS !== cfg.intervalS) break;
    }
  } finally {
    await fleet?.kill();
    await admin.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  load.end = loadavg();
  if (values.json) process.stdout.write(`${JSON.stringify({ config: cfg, load, passes }, null, 2)}\n`);
  else if (passes.length) printTables(cfg, passes, load);
  else note('no pass completed');
  if (aborted) {
    note('bench:pipeline interrupted; everything it started is stopped and removed');
    process.exitCode = 130;
  }
}

const roleAt = process.argv.indexOf('--role');
if (roleAt >= 0) {
  await childMain(process.argv[roleAt + 1] ?? '', process.argv.slice(roleAt + 2));
} else {
  try {
    await main();
  } catch (err) {
    note(`bench:pipeline failed: ${(err as Error).stack ?? err}`);
    process.exitCode = 1;
  }
  // Nothing should be left running; if something is, say so rather than hang.
  setTimeout(() => {
    note('bench:pipeline: something kept the process alive after cleanup; exiting');
    process.exit(process.exitCode ?? 0);
  }, 10_000).unref();
}
