// What both buses do with a heartbeat that arrives: validate it first (a poison one is counted,
// logged once and reaches no listener), then hand it to each listener; one that throws is logged
// and the others still hear it.
import { type Context, decodeHeartbeat } from './delivery';
import type { Heartbeat } from './messages';

export type HeartbeatListener = (heartbeat: Heartbeat) => void;

export function receiveHeartbeat(
  subject: string,
  data: Uint8Array | string,
  listeners: Iterable<HeartbeatListener>,
  ctx: Context,
): void {
  const parsed = decodeHeartbeat(data, subject);
  if (!parsed.ok) {
    ctx.stats.poison++;
    ctx.log.warn({ consumer: 'heartbeats', subject, error: parsed.error }, 'poison heartbeat dropped');
    return;
  }
  for (const listener of listeners) {
    try {
      listener(parsed.value);
    } catch (err) {
      ctx.log.warn({ error: err instanceof Error ? err.message : String(err) }, 'heartbeat handler failed');
    }
  }
}
