// Stale jobs: a job carries `staleAt` (the scheduler's judgement: its next slot's job is due by
// then), and an agent that takes it later drops it unprobed — after an outage, a backlog of old
// slots must not be probed (and delay the fresh ones) only for ingest to file their results as late.
// A backlog drops many jobs at once, so the log says so once: the first drop with why, then at
// most one line a minute with how many followed.
import type { Job } from '@mcp-fleet/bus';
import type { Logger } from '@mcp-fleet/log';

export function isStale(job: Job, now: number): boolean {
  return job.staleAt !== undefined && now > job.staleAt;
}

export class StaleJobLog {
  readonly #log: Logger;
  readonly #everyMs: number;
  #logged = false;
  #since = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(log: Logger, everyMs = 60_000) {
    this.#log = log;
    this.#everyMs = everyMs;
  }

  dropped(job: Job, now: number): void {
    if (!this.#logged) {
      this.#logged = true;
      this.#log.warn(
        { jobId: job.jobId, kind: job.kind, scheduledAt: job.scheduledAt, lateMs: now - (job.staleAt ?? now) },
        "dropping stale jobs unprobed (their next slot's job is due: a backlog after an outage, or this agent's clock runs ahead of control's); further drops are summed up at most once a minute",
      );
      return;
    }
    this.#since += 1;
    if (!this.#timer) {
      this.#timer = setTimeout(() => this.flush(), this.#everyMs);
      this.#timer.unref();
    }
  }

  /** Log the drops not yet told (at the minute, and at stop). */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#since === 0) return;
    this.#log.warn({ dropped: this.#since }, 'more stale jobs dropped unprobed');
    this.#since = 0;
  }
}
