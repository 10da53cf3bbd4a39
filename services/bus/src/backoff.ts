// How long a message waits before it comes back after a nak: the one place both schedules live.
// The queues' own schedule (a table, the last entry repeating) is what a bare `nak()` gets; the
// doubling one is what the agent and control's ingest ask for when their work failed for now.

/** The redelivery delay for a `nak()` without a delay: backs off with each redelivery. */
export function nakBackoff(backoff: readonly number[], redeliveries: number): number {
  return backoff[Math.min(redeliveries, backoff.length - 1)] ?? 0;
}

export const NAK_BASE_MS = 1_000;
export const NAK_MAX_MS = 30_000;

/**
 * Doubling per redelivery, so a bus, ingest or database outage is not hammered, capped so the
 * message is retried within a slot or two.
 */
export function nakDelayMs(redeliveries: number): number {
  const n = Math.max(0, Math.min(redeliveries, 20));
  return Math.min(NAK_MAX_MS, NAK_BASE_MS * 2 ** n);
}
