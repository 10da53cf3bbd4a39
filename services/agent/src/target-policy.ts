// Probes dial through the target policy (probe's TargetPolicy): the agent's own floor, narrowed by
// the job's allow/deny/schemes (the fleet's policy, copied into every job). A job can narrow the
// floor, never widen it. One guarded dispatcher per distinct job policy (a fleet has one), so
// connections are pooled across jobs.
import { guardedDispatcher, type TargetPolicy } from '@mcp-fleet/probe';
import type { Dispatcher } from 'undici';

export class DispatcherCache {
  readonly #floor: TargetPolicy;
  readonly #byPolicy = new Map<string, Dispatcher>();

  /** `floor`: the agent's own policy (made with `{ floor: true }`), which every job narrows. */
  constructor(floor: TargetPolicy) {
    this.#floor = floor;
  }

  for(allow: readonly string[], deny: readonly string[] = [], schemes?: readonly string[]): Dispatcher {
    const key = `${[...allow].sort().join(',')}|${[...deny].sort().join(',')}|${schemes ? [...schemes].sort().join(',') : '*'}`;
    let d = this.#byPolicy.get(key);
    if (!d) {
      d = guardedDispatcher(this.#floor.narrow({ allow, deny, ...(schemes ? { schemes } : {}) }));
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
