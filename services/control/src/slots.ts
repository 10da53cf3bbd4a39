// Slots: each (test or detection, region) runs once per interval, at a fixed offset inside the
// interval derived from its key, so a fleet's jobs spread over the interval instead of all
// firing at once. Job ids are deterministic per slot: a control restart can never double one.
import { createHash } from 'node:crypto';

/** A stable offset in [0, intervalMs) for a key. */
export function offsetFor(key: string, intervalMs: number): number {
  const h = createHash('sha1').update(key).digest();
  return h.readUInt32BE(0) % intervalMs;
}

/** The start of the slot `now` falls in. */
export function slotStart(now: number, intervalMs: number, offsetMs: number): number {
  return Math.floor((now - offsetMs) / intervalMs) * intervalMs + offsetMs;
}

export function handshakeJobId(testId: string, region: string, slot: number): string {
  return `hs.${testId}.${region}.${slot}`;
}

export function detectionJobId(serverId: string, region: string, slot: number): string {
  return `det.${serverId}.${region}.${slot}`;
}
