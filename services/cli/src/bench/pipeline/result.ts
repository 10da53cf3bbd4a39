// What one pass measured, and whether it was sustained: scheduling, pick-up and slot→row p99 under 2 s, jobs/s
// and runs/s at 95% of the target rate, a bus backlog that does not grow, and no slot skipped, lost,
// doubled or failed.
import { GOAL_P99_MS, KEEP_UP, round } from './settings';

export interface PassResult {
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
  /** Control's /metrics scraped as Prometheus would (scraper.ts), scrapes begun in the window. */
  scrapes: { everyS: number; ms: Quantiles; bytes: number };
  sustained: boolean;
  why: string[];
}

export type Quantiles = { p50: number; p99: number; max: number; n: number };

export function quantiles(values: number[]): Quantiles {
  const s = [...values].sort((x, y) => x - y);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(s.at(-1) ?? 0), n: s.length };
}

export function verdict(r: PassResult): string[] {
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
  if (r.slotToRowMs.p99 >= GOAL_P99_MS)
    why.push(`slot→row p99 ${r.slotToRowMs.p99} ms ≥ ${GOAL_P99_MS} (data lands late)`);
  if (r.skippedSlots > 0) why.push(`${r.skippedSlots} slots skipped`);
  if (r.publishErrors > 0) why.push(`${r.publishErrors} publish errors`);
  if (r.lost > 0 && r.drained) why.push(`${r.lost} jobs never written`);
  if (!r.drained) why.push(`${r.lost} jobs still unwritten after the drain (backlog)`);
  if (r.duplicateRows > 0) why.push(`${r.duplicateRows} job ids with more than one run`);
  const failed = Object.values(r.failedRuns).reduce((a, b) => a + b, 0);
  if (failed > 0) why.push(`${failed} runs did not succeed (${JSON.stringify(r.failedRuns)})`);
  return why;
}

/**
 * What held a pass back, or will first as the rate grows: the machine's cores (busy ≥ 90% of all of
 * them), one single-threaded Node process at its core (control, an agent: more of them would help),
 * or the stage whose lag broke the goal (scheduling, pick-up: the agents, commit: ingest).
 */
export function limitingResource(r: PassResult, cores: number): string {
  const busy = r.cpu['machine busy'] ?? 0;
  const parts = Object.entries(r.cpu).filter(([k]) => !['machine busy', 'other', 'targets (child)'].includes(k));
  const [top, topPct] = parts.sort((a, b) => b[1] - a[1])[0] ?? ['-', 0];
  if (busy >= 0.9 * cores * 100) return `CPU: machine ${busy}% of ${cores * 100}% (most: ${top} ${topPct}%)`;
  const node = parts.find(([k, pct]) => /control|agent/.test(k) && pct >= 90);
  if (node) return `${node[0]} at one core (${node[1]}%)`;
  if (r.schedLagMs.p99 >= GOAL_P99_MS) return 'scheduling (publish lag)';
  if (r.pickupLagMs.p99 >= GOAL_P99_MS) return 'agents (jobs wait for a probe slot)';
  if (r.commitLagMs.p99 >= GOAL_P99_MS || r.slotToRowMs.p99 >= GOAL_P99_MS) return 'ingest (commits behind)';
  return `none yet: machine ${busy}% of ${cores * 100}% (most: ${top} ${topPct}%)`;
}
