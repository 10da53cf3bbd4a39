// Probes dial through the target policy (probe's TargetPolicy): the agent's own floor, narrowed by
// the job's allow/deny/schemes (the fleet's policy, copied into every job). A job can narrow the
// floor, never widen it. One guarded dispatcher per distinct job policy (a fleet has one), so
// connections are pooled across jobs. Every connection leaves from the agent's source address
// when it has one (`--source-address`: a multi-homed host, or two agents on one machine as two regions).
import { isIP } from 'node:net';
import { guardedDispatcher, type TargetPolicy } from '@mcp-fleet/probe';
import type { Dispatcher } from 'undici';

export class DispatcherCache {
  readonly #floor: TargetPolicy;
  readonly #byPolicy = new Map<string, Dispatcher>();
  readonly #sourceAddress: string | undefined;

  /**
   * `floor`: the agent's own policy (made with `{ floor: true }`), which every job narrows.
   * `sourceAddress`: the local IP address probes connect from (checked: SourceAddressError).
   */
  constructor(floor: TargetPolicy, opts: { sourceAddress?: string | undefined } = {}) {
    this.#floor = floor;
    this.#sourceAddress = checkSourceAddress(opts.sourceAddress);
  }

  for(allow: readonly string[], deny: readonly string[] = [], schemes?: readonly string[]): Dispatcher {
    const key = `${[...allow].sort().join(',')}|${[...deny].sort().join(',')}|${schemes ? [...schemes].sort().join(',') : '*'}`;
    let d = this.#byPolicy.get(key);
    if (!d) {
      d = guardedDispatcher(this.#floor.narrow({ allow, deny, ...(schemes ? { schemes } : {}) }), undefined, {
        localAddress: this.#sourceAddress,
      });
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

/** A source address that is no IP address: said before the agent takes a job. */
export class SourceAddressError extends Error {
  override readonly name = 'SourceAddressError';
}

/** The agent's source address, checked: an IPv4 or IPv6 address (no host name, no CIDR, no port). */
export function checkSourceAddress(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (isIP(value) === 0)
    throw new SourceAddressError(
      `source address: an IP address of this host, like 192.0.2.10 or 2001:db8::10, not ${JSON.stringify(value)}`,
    );
  return value;
}
