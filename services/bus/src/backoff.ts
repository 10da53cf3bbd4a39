// How long to wait before trying again: the one place the bus's schedules live. The queues' own
// schedule (a table, the last entry repeating) is what a bare `nak()` gets; the doubling one is
// what the agent and control's ingest ask for when their work failed for now, and what a pull
// loop waits between attempts while NATS is away.

/** The redelivery delay for a `nak()` without a delay: backs off with each redelivery. */
export function nakBackoff(backoff: readonly number[], redeliveries: number): number {
  return backoff[Math.min(redeliveries, backoff.length - 1)] ?? 0;
}

/** `baseMs` doubled per earlier attempt (`attempt` 0 waits `baseMs`), never more than `maxMs`. */
export function doublingDelayMs(baseMs: number, maxMs: number, attempt: number): number {
  return Math.min(maxMs, baseMs * 2 ** attempt);
}

export const NAK_BASE_MS = 1_000;
export const NAK_MAX_MS = 30_000;

/**
 * Doubling per redelivery, so a bus, ingest or database outage is not hammered, capped so the
 * message is retried within a slot or two.
 */
export function nakDelayMs(redeliveries: number): number {
  return doublingDelayMs(NAK_BASE_MS, NAK_MAX_MS, Math.max(0, Math.min(redeliveries, 20)));
}
