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
// BENCH_SCRAPE s (15: control's /metrics scraped as Prometheus would; 0 = not),
// BENCH_TRACE_AGENT (each agent appends its concurrency limit and jobs in flight every 250 ms),
// BENCH_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres), NATS_URL (nats://127.0.0.1:4222).
//
// This file is the entry and the find-max loop; pass.ts is one pass, child.ts the child processes,
// proc-cpu.ts the CPU sampler, histogram.ts control's own lag histogram, tables.ts the report.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { openStore } from '@mcp-fleet/store';
import { type Child, forkChild } from './children';
import { abort, Interrupted, isAborted } from './interrupt';
import { runPass } from './pass';
import type { PassResult } from './result';
import { ADMIN_URL, type Config, note, round } from './settings';
import { printTables } from './tables';

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
    scrapeS: envNumber('BENCH_SCRAPE', 15)!,
  };
  const steps = values['find-max']
    ? (process.env.BENCH_STEPS?.split(',').map(Number) ??
      [1.25, 1.5, 1.75, 2, 2.5, 3, 4].map((m) => round(cfg.intervalS / m)))
    : [];
  const measureS = Math.max(10, cfg.seconds - (cfg.warmupS ?? cfg.intervalS));

  const onSignal = () => {
    if (isAborted()) process.exit(130);
    note('interrupted: cleaning up (Ctrl-C again to leave at once)');
    abort();
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
      if (isAborted()) break;
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
  if (isAborted()) {
    note('bench:pipeline interrupted; everything it started is stopped and removed');
    process.exitCode = 130;
  }
}

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
