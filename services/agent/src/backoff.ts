// How long a job waits before it comes back after a failure: doubling per redelivery, so a bus
// or ingest outage is not hammered, capped so the job is retried within a slot or two.

export const NAK_BASE_MS = 1_000;
export const NAK_MAX_MS = 30_000;

export function nakDelayMs(redeliveries: number): number {
  const n = Math.max(0, Math.min(redeliveries, 20));
  return Math.min(NAK_MAX_MS, NAK_BASE_MS * 2 ** n);
}
