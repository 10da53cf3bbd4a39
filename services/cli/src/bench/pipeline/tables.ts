// The printed report: one row per pass, CPU by process, and why a pass was not sustained.

import { availableParallelism } from 'node:os';
import { columns } from '../../table';
import { limitingResource, type PassResult, type Quantiles } from './result';
import { type Config, GOAL_JOBS_PER_S, round } from './settings';

const pair = (q: Quantiles) => (q.n ? `${Math.round(q.p50)} / ${Math.round(q.p99)}` : '-');
const trio = (q: Quantiles) => (q.n ? `${Math.round(q.p50)} / ${Math.round(q.p99)} / ${Math.round(q.max)}` : '-');

export function printTables(cfg: Config, passes: PassResult[], load: { start: number[]; end: number[] }): void {
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
  const limits = columns([
    ['interval', 'target/s', 'limiting resource'],
    ...passes.map((p) => [`${p.intervalS} s`, String(p.targetPerS), limitingResource(p, availableParallelism())]),
  ]);
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
    '',
    'What held each pass back (or will first as the rate grows):',
    limits,
  ];
  const whole = passes.filter((p) => p.histogram).map((p) => `${p.intervalS} s ${p.histogram!.wholePassP99}`);
  if (whole.length)
    out.push(
      '',
      `control's histogram p99 over the whole pass (the start publishes every still-fresh slot at once): ${whole.join(', ')}`,
    );
  const scraped = passes.filter((p) => p.scrapes.ms.n > 0);
  if (scraped.length)
    out.push(
      '',
      `control's /metrics scraped every ${scraped[0]!.scrapes.everyS} s through each pass (as Prometheus would), in the window: ` +
        scraped
          .map(
            (p) =>
              `${p.intervalS} s ${p.scrapes.ms.n} scrapes, ${p.scrapes.ms.p50} / ${p.scrapes.ms.max} ms p50 / max, ${round(p.scrapes.bytes / 1e6)} MB`,
          )
          .join('; '),
    );
  for (const p of passes.filter((x) => !x.sustained))
    out.push('', `${p.intervalS} s not sustained: ${p.why.join('; ')}`);
  const best = passes.filter((p) => p.sustained).sort((a, b) => b.targetPerS - a.targetPerS)[0];
  out.push(
    '',
    best
      ? `Highest sustained rate: ${best.targetPerS} jobs/s (every ${best.intervalS} s), ${round(best.targetPerS / GOAL_JOBS_PER_S)}× the goal of ${GOAL_JOBS_PER_S} jobs/s`
      : 'No pass was sustained.',
  );
  process.stdout.write(`${out.join('\n')}\n`);
}
