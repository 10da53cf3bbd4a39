// How many stdio processes an agent runs at once, apart from its job concurrency (issue 20): a
// process start costs tens of milliseconds of CPU where an HTTP request costs little, so the job
// limit (hundreds, sized for round trips) would let a burst of stdio jobs take the machine. A small
// fixed number per core (default 2), first come first served; a job waiting here still holds its
// job slot, and its delivery is kept alive like any long probe.
import { availableParallelism } from 'node:os';

/** Processes at once per core by default. */
export const STDIO_PER_CORE = 2;

export function defaultStdioConcurrency(): number {
  return STDIO_PER_CORE * availableParallelism();
}

export class StdioSlots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new TypeError('stdio concurrency: a whole number, at least 1');
    this.#free = limit;
  }

  /** Run `fn` once a slot is free; the slot is given back however it ends. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free -= 1;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      // Handed straight to the next in line, or freed.
      if (next) next();
      else this.#free += 1;
    }
  }

  /** Processes running now. */
  inUse(): number {
    return this.limit - this.#free;
  }
}
