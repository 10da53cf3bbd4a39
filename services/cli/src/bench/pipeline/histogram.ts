// Control's own mcp_scheduler_lag_seconds, scraped from its /metrics at each end of the measured
// window: the bucket bounds holding p50 and p99, to set beside the lags the bench measures itself.
import type { PassResult } from './result';
import { note } from './settings';

export type Buckets = { le: string; n: number }[];

/** Control's mcp_scheduler_lag_seconds buckets (cumulative), read from its /metrics. */
export async function scrapeLagBuckets(controlUrl: string): Promise<{ buckets: Buckets; ms: number } | null> {
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
export function lagHistogram(
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
