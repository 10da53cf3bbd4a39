// Agents' heartbeats, recorded as they come: /api/agents and the agents-seen gauge read them, and
// retention forgets an agent by when control last heard it.
import type { Bus, Subscription } from '@mcp-fleet/bus';
import type { Logger } from '@mcp-fleet/log';
import { type Db, upsertAgentHeartbeat } from '@mcp-fleet/store';

export function recordHeartbeats(bus: Bus, db: Db, log: Logger): Subscription {
  return bus.onHeartbeat((hb) => {
    upsertAgentHeartbeat(db, {
      id: hb.agent,
      region: hb.region,
      version: hb.version,
      inFlight: hb.inFlight,
      startedAt: new Date(hb.startedAt),
      at: new Date(hb.at),
      stdioCommands: hb.stdioCommands,
    }).catch((err) => log.warn({ err: (err as Error).message }, 'could not record a heartbeat'));
  });
}
