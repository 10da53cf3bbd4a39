// How many jobs an agent runs at once, sized from what it sees (Little's law: jobs in flight =
// arrival rate × time per job). A fleet of slow targets needs hundreds in flight where a fleet of
// fast ones needs a handful; a fixed number is either too small for the first (jobs queue, slots
// arrive late) or holds memory and sockets for nothing on the second. Every window the limit is set
// to twice the measured rate × mean job time (headroom for bursts: slots start together), never
// below `min`; when the agent ran at its limit for a good part of the window the measured rate is
// what the limit allowed, not what arrived, so the limit doubles instead, up to `max`. It shrinks by
// at most a quarter per window, so one quiet window does not starve the next busy one.

export interface SizerOptions {
  min: number;
  max: number;
  /** The limit before the first window has been measured. */
  initial: number;
  /** How often the limit is set again. Default 5 s. */
  windowMs?: number;
  now?: () => number;
}

export class ConcurrencySizer {
  private current: number;
  private windowStart: number;
  private finished = 0;
  private busyMs = 0;
  private starts = 0;
  private startsAtLimit = 0;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: SizerOptions) {
    if (!(Number.isInteger(opts.min) && opts.min >= 1 && Number.isInteger(opts.max) && opts.max >= opts.min))
      throw new TypeError('concurrency: min and max are whole numbers with 1 ≤ min ≤ max');
    this.now = opts.now ?? Date.now;
    this.windowMs = opts.windowMs ?? 5_000;
    this.current = clamp(opts.initial, opts.min, opts.max);
    this.windowStart = this.now();
  }

  /** The limit now (the bus reads it before each pull). */
  limit(): number {
    const now = this.now();
    if (now - this.windowStart >= this.windowMs) this.resize(now);
    return this.current;
  }

  /** A job started with `inFlight` jobs now running, itself included. */
  started(inFlight: number): void {
    this.starts++;
    if (inFlight >= this.current) this.startsAtLimit++;
  }

  /** A job ended after `ms`. */
  ended(ms: number): void {
    this.finished++;
    this.busyMs += Math.max(0, ms);
  }

  private resize(now: number): void {
    const seconds = (now - this.windowStart) / 1000;
    const { min, max } = this.opts;
    const saturated = this.starts > 0 && this.startsAtLimit / this.starts >= 0.25;
    let next: number;
    if (saturated) next = this.current * 2;
    else if (this.finished === 0) next = this.current;
    else {
      const rate = this.finished / seconds;
      const meanS = this.busyMs / this.finished / 1000;
      next = Math.max(Math.ceil(2 * rate * meanS), Math.floor(this.current * 0.75));
    }
    this.current = clamp(next, min, max);
    this.windowStart = now;
    this.finished = 0;
    this.busyMs = 0;
    this.starts = 0;
    this.startsAtLimit = 0;
  }
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.round(n)));
}
