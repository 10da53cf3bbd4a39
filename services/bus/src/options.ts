// Options and defaults shared by both queues, so one-machine mode behaves like NATS.
import type { Logger } from './log';

export interface QueueOptions {
  log?: Logger;
  /** A job id (or a result's job id) seen within this window is dropped as a duplicate. Default 10 min. */
  duplicateWindowMs?: number;
  /** How long a delivery may stay unsettled before it is redelivered, unless a subscription says otherwise. Default 60 s. */
  ackWaitMs?: number;
  /** Deliveries of one message before it is dropped (and counted). Default 10. */
  maxDeliver?: number;
  /** Delay before redelivery after `nak()` without a delay, by redelivery count (the last repeats). */
  nakBackoffMs?: readonly number[];
}

export const BUS_DEFAULTS = {
  namespace: 'mcpfleet',
  duplicateWindowMs: 10 * 60_000,
  ackWaitMs: 60_000,
  maxDeliver: 10,
  nakBackoffMs: [1_000, 5_000, 15_000, 30_000, 60_000],
} as const;

/** The redelivery delay for a `nak()` without a delay: backs off with each redelivery. */
export function nakBackoff(backoff: readonly number[], redeliveries: number): number {
  return backoff[Math.min(redeliveries, backoff.length - 1)] ?? 0;
}
