// Options and defaults shared by both queues, so one-machine mode behaves like NATS.
import type { Logger } from '@mcp-fleet/log';

export interface QueueOptions {
  log?: Logger;
  /** A job id seen within this window is dropped as a duplicate (results are not deduplicated by the bus). Default 10 min. */
  duplicateWindowMs?: number;
  /** How long a delivery may stay unsettled before it is redelivered, unless a subscription says otherwise. Default 60 s. */
  ackWaitMs?: number;
  /** Deliveries of one message before it is dropped (and counted). Default 10. */
  maxDeliver?: number;
  /** Delay before redelivery after `nak()` without a delay, by redelivery count (the last repeats). */
  nakBackoffMs?: readonly number[];
  /**
   * A job no agent took within this long is removed from its queue (NATS: the jobs stream's
   * max_age). At least the dedupe window, which is cut to it. Default 1 h. Results never expire.
   */
  jobsMaxAgeMs?: number;
  /** Jobs a region's queue holds at most; past it the oldest goes (NATS: max_msgs_per_subject, discard old). Default 100 000. */
  jobsMaxPerRegion?: number;
}

export const BUS_DEFAULTS = {
  namespace: 'mcpfleet',
  duplicateWindowMs: 10 * 60_000,
  ackWaitMs: 60_000,
  maxDeliver: 10,
  nakBackoffMs: [1_000, 5_000, 15_000, 30_000, 60_000],
  // Jobs carry servers' credentials and go stale within an interval or two: an outage of every
  // agent of a region leaves at most an hour, and at most 100 000 jobs, of them on the broker's disk
  // (about 100 MB). Not fewer: a control taking over publishes every slot still fresh at once (10 s
  // of them), and at 1,000 jobs/s in one region a cap of 10 000 discarded fresh jobs of that burst
  // (bench:pipeline at 60,000 tests: about 1,000 of them lost, never run).
  jobsMaxAgeMs: 60 * 60_000,
  jobsMaxPerRegion: 100_000,
} as const;

/** The jobs queues' limits, and the dedupe window they allow (NATS refuses a window longer than max_age). */
export function jobLimits(opts: QueueOptions): { maxAgeMs: number; maxPerRegion: number; duplicateWindowMs: number } {
  const maxAgeMs = opts.jobsMaxAgeMs ?? BUS_DEFAULTS.jobsMaxAgeMs;
  const maxPerRegion = opts.jobsMaxPerRegion ?? BUS_DEFAULTS.jobsMaxPerRegion;
  if (!Number.isInteger(maxAgeMs) || maxAgeMs < 1_000) throw new TypeError('jobsMaxAgeMs: at least 1000 ms');
  if (!Number.isInteger(maxPerRegion) || maxPerRegion < 1) throw new TypeError('jobsMaxPerRegion: at least 1');
  const duplicateWindowMs = Math.min(opts.duplicateWindowMs ?? BUS_DEFAULTS.duplicateWindowMs, maxAgeMs);
  return { maxAgeMs, maxPerRegion, duplicateWindowMs };
}
