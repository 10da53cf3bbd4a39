// Prometheus at work: control's /metrics fetched every BENCH_SCRAPE seconds through the whole pass,
// as a deployment scrapes it, from the fleet's child process (another process, as Prometheus is:
// reading 34 MB of text is its cost, not control's). At 60,000 servers a scrape is ~480,000 series;
// the pass measures the pipeline with rendering and sending them in it, not beside it.
import type { Child } from './children';
import { type Quantiles, quantiles } from './result';

export type Scrape = { at: number; ms: number; bytes: number };

/** In the child: scrape `url` every `everyS` seconds, keeping what each took. */
export function scrapeEvery(url: string, everyS: number, onFirstError: (message: string) => void) {
  const done: Scrape[] = [];
  let failed = 0;
  const scrape = async () => {
    const at = Date.now();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(everyS * 1000) });
      const bytes = (await res.arrayBuffer()).byteLength;
      done.push({ at, ms: Date.now() - at, bytes });
    } catch (err) {
      if (failed++ === 0) onFirstError((err as Error).message);
    }
  };
  const timer = setInterval(() => void scrape(), everyS * 1000);
  return { scrapes: () => done, stop: () => clearInterval(timer) };
}

export interface Scraper {
  /** Scrapes that began in [from, to): how long each took, and the largest body. */
  between(from: number, to: number): Promise<{ everyS: number; ms: Quantiles; bytes: number }>;
  stop(): void;
}

/** In the parent: have the fleet's child scrape control (never, with `everyS` 0). */
export function startScraper(fleet: Child, controlUrl: string, everyS: number): Scraper {
  if (everyS > 0) fleet.send({ type: 'scrape-start', url: `${controlUrl}/metrics`, everyS });
  return {
    async between(from, to) {
      const all = everyS > 0 ? ((await fleet.ask({ type: 'scrapes' }, 'scrapes')).scrapes ?? []) : [];
      const inside = all.filter((s) => s.at >= from && s.at < to);
      return { everyS, ms: quantiles(inside.map((s) => s.ms)), bytes: Math.max(0, ...inside.map((s) => s.bytes)) };
    },
    stop: () => fleet.send({ type: 'scrape-stop' }),
  };
}
