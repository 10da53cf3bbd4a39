// How many jobs an agent runs at once, sized from what it sees (Little's law: jobs in flight =
// arrival rate × time per job). A fleet of slow targets needs hundreds in flight where a fleet of
// fast ones needs a handful; a fixed number is either too small for the first (jobs queue, slots
// arrive late) or holds memory and sockets for nothing on the second.
//
// Every window the limit is set again:
// - when the agent spent a tenth of the window or more at its limit, jobs waited for a slot, and
//   what it measured is what the limit allowed, not what arrived: the limit doubles, up to `max`;
// - otherwise it is twice the measured rate × mean job time (headroom: a scheduler's tick publishes
//   its slots together), and it shrinks only after a window that never reached the limit, by at
//   most a quarter, never below `min`, so one quiet window does not starve the next busy one.
// Time at the limit, not starts at the limit: jobs end in clumps (an agent's results share one
// message, so their acks land together), and a clump's slots refill with one pull whose starts are
// mostly below the limit, though the agent sat at its limit until the clump ended. Counting starts
// missed that (bench:pipeline at 1,000 jobs/s: at the limit 40% of the time, the limit shrinking,
// pick-up p99 1.9 s).

export interface SizerOptions {
  min: number;
  max: number;
  /** The limit before the first window has been measured. */
  initial: number;
  /** How often the limit is set again. Default 5 s. */
  windowMs?: number;
  now?: () => number;
}

/** The share of a window at the limit from which the limit doubles. */
const SATURATED = 0.1;

export class ConcurrencySizer {
  private current: number;
  private windowStart: number;
  private finished = 0;
  private busyMs = 0;
  /** Jobs in flight now, and since when the count has been that. */
  private inFlight = 0;
  private since: number;
  private atLimitMs = 0;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: SizerOptions) {
    if (!(Number.isInteger(opts.min) && opts.min >= 1 && Number.isInteger(opts.max) && opts.max >= opts.min))
      throw new TypeError('concurrency: min and max are whole numbers with 1 ≤ min ≤ max');
    this.now = opts.now ?? Date.now;
    this.windowMs = opts.windowMs ?? 5_000;
    this.current = clamp(opts.initial, opts.min, opts.max);
    this.windowStart = this.now();
    this.since = this.windowStart;
  }

  /** The limit now (the bus reads it before each pull). */
  limit(): number {
    const now = this.now();
    if (now - this.windowStart >= this.windowMs) this.resize(now);
    return this.current;
  }

  /** A job started; `inFlight` jobs run now, itself included. */
  started(inFlight: number): void {
    this.moved(inFlight);
  }

  /** A job ended after `ms`; `inFlight` jobs run now. */
  ended(ms: number, inFlight: number): void {
    this.finished++;
    this.busyMs += Math.max(0, ms);
    this.moved(inFlight);
  }

  /** The count in flight changed: the time it spent at the limit until now counts. */
  private moved(inFlight: number): void {
    const now = this.now();
    this.countUntil(now);
    this.inFlight = inFlight;
  }

  private countUntil(now: number): void {
    if (this.inFlight >= this.current) this.atLimitMs += Math.max(0, now - this.since);
    this.since = now;
  }

  private resize(now: number): void {
    this.countUntil(now);
    const elapsed = now - this.windowStart;
    const { min, max } = this.opts;
    let next: number;
    if (this.atLimitMs >= SATURATED * elapsed) next = this.current * 2;
    else if (this.finished === 0) next = this.current;
    else {
      const rate = this.finished / (elapsed / 1000);
      const meanS = this.busyMs / this.finished / 1000;
      const floor = this.atLimitMs > 0 ? this.current : Math.floor(this.current * 0.75);
      next = Math.max(Math.ceil(2 * rate * meanS), floor);
    }
    this.current = clamp(next, min, max);
    this.windowStart = now;
    this.finished = 0;
    this.busyMs = 0;
    this.atLimitMs = 0;
  }
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.round(n)));
}
