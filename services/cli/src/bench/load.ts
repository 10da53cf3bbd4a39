// A closed-loop load: N workers each run one operation after another for a fixed time (and at
// most a fixed count), recording each latency. Bounded in time and count, so it always stops.

export interface LoadResult {
  concurrency: number;
  seconds: number;
  operations: number;
  errors: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Client CPU (user + system, this process) per operation: the engine's own cost, whatever the server's. */
  cpuMicrosPerOp: number;
  /** The first error seen, to say why errors happened. */
  firstError: string | undefined;
}

export interface LoadOptions {
  concurrency: number;
  seconds: number;
  maxOperations?: number;
}

/** `op` resolves true on success, false (or throws) on error. */
export async function runLoad(op: () => Promise<boolean>, opts: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let started = 0;
  let firstError: string | undefined;
  const max = opts.maxOperations ?? Number.POSITIVE_INFINITY;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const until = t0 + opts.seconds * 1000;
  const worker = async () => {
    while (performance.now() < until && started < max) {
      started += 1;
      const s = performance.now();
      let ok = false;
      try {
        ok = await op();
        if (!ok) firstError ??= 'operation reported failure';
      } catch (err) {
        firstError ??= (err as Error).message;
      }
      latencies.push(performance.now() - s);
      if (!ok) errors += 1;
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  return {
    concurrency: opts.concurrency,
    seconds: Math.round(elapsed * 100) / 100,
    operations: latencies.length,
    errors,
    perSecond: Math.round((latencies.length / elapsed) * 10) / 10,
    p50Ms: round(quantile(latencies, 0.5)),
    p99Ms: round(quantile(latencies, 0.99)),
    cpuMicrosPerOp: latencies.length ? Math.round((cpu.user + cpu.system) / latencies.length) : 0,
    firstError,
  };
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
