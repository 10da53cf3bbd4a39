// Probes dial through the target policy (probe's TargetPolicy): one guarded dispatcher per
// distinct policy (a fleet has one), so connections are pooled across jobs.
import { guardedDispatcher, TargetPolicy } from '@mcp-fleet/probe';
import type { Dispatcher } from 'undici';

/** One dispatcher per distinct allow list (a fleet has one), so connections are pooled across jobs. */
export class DispatcherCache {
  readonly #byPolicy = new Map<string, Dispatcher>();

  for(allow: readonly string[], deny: readonly string[] = [], schemes?: readonly string[]): Dispatcher {
    const key = `${[...allow].sort().join(',')}|${[...deny].sort().join(',')}|${schemes ? [...schemes].sort().join(',') : '*'}`;
    let d = this.#byPolicy.get(key);
    if (!d) {
      d = guardedDispatcher(new TargetPolicy({ allow, deny, ...(schemes ? { schemes } : {}) }));
      this.#byPolicy.set(key, d);
    }
    return d;
  }

  /** Drop every connection, including those of probes abandoned at stop (they end at once instead of at their timeout). */
  async destroy(): Promise<void> {
    const all = [...this.#byPolicy.values()];
    this.#byPolicy.clear();
    await Promise.allSettled(all.map((d) => d.destroy()));
  }
}
