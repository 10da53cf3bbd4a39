// Control's fleet-wide gauges (a series per server, or per server and test) are filled at each
// scrape from a snapshot list. Filled in one piece, that blocks the event loop as long as it runs,
// and ingest shares the loop: at 60,000 servers the eight such gauges took 1–3 s per scrape (prom-
// client hashes each series' labels), and bench:pipeline saw commits 3–5 s late behind a scrape.
// Filled a slice at a time with a turn of the event loop between slices, ingest keeps moving; the
// scrape takes as long. Two scrapes at once (two Prometheus servers) share one fill: each fill
// starts with reset(), and a second one interleaved with the first would empty it half-way.

import type { Gauge, LabelValues } from 'prom-client';

/** Series set between two turns of the event loop. */
export const FILL_SLICE = 2_000;

/**
 * A gauge's `collect`: reset it, then `each` item of `list()` sets its series (or none), a slice
 * at a time. Concurrent scrapes share the fill under way.
 */
export function fillInSlices<T, L extends string>(
  list: () => Promise<readonly T[]>,
  each: (item: T, set: (labels: LabelValues<L>, value: number) => void) => void,
): (this: Gauge<L>) => Promise<void> {
  let filling: Promise<void> | undefined;
  return function collect(this: Gauge<L>) {
    filling ??= fill(this).finally(() => {
      filling = undefined;
    });
    return filling;
  };

  async function fill(gauge: Gauge<L>): Promise<void> {
    const items = await list();
    gauge.reset();
    const set = (labels: LabelValues<L>, value: number) => gauge.set(labels, value);
    for (let i = 0; i < items.length; i++) {
      if (i > 0 && i % FILL_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      each(items[i] as T, set);
    }
  }
}
