// The detection tools make control send traffic to a URL the caller names (up to 8 requests and
// 20 s for a detection, more for a check): an agent in a loop must not turn the monitor into a
// load generator. A token bucket per principal (a token's digest, or the client's address) admits
// a burst and then a steady rate; a refusal says when to try again. Small enough to write here
// (a dozen lines) rather than pull in a limiter built for HTTP middleware.

export interface DetectionLimits {
  /** Calls admitted at once (default 5). */
  burst: number;
  /** Calls admitted per minute after the burst (default 10). */
  perMinute: number;
}

export const DEFAULT_DETECTION_LIMITS: DetectionLimits = { burst: 5, perMinute: 10 };

/** At most this many principals are remembered; the least recently seen go first. */
const MAX_PRINCIPALS = 10_000;

export class DetectionLimiter {
  readonly limits: DetectionLimits;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #now: () => number;

  constructor(limits: Partial<DetectionLimits> = {}, now: () => number = Date.now) {
    this.limits = { ...DEFAULT_DETECTION_LIMITS, ...limits };
    this.#now = now;
  }

  /** Take one call for `principal`: null when admitted, else the seconds to wait. */
  take(principal: string): number | null {
    const now = this.#now();
    const perMs = this.limits.perMinute / 60_000;
    const held = this.#buckets.get(principal);
    const tokens = Math.min(
      this.limits.burst,
      (held?.tokens ?? this.limits.burst) + (held ? (now - held.at) * perMs : 0),
    );
    this.#buckets.delete(principal); // re-inserted last: the map's order is how recently each was seen
    if (tokens < 1) {
      this.#buckets.set(principal, { tokens, at: now });
      return Math.ceil((1 - tokens) / perMs / 1000);
    }
    this.#buckets.set(principal, { tokens: tokens - 1, at: now });
    if (this.#buckets.size > MAX_PRINCIPALS) this.#buckets.delete(this.#buckets.keys().next().value as string);
    return null;
  }
}
