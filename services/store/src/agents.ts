// Agents report in with heartbeats; the table holds the latest one per agent.
import { asc, gte, sql } from 'drizzle-orm';
import type { Db } from './db';
import { agents } from './schema';

export type Agent = typeof agents.$inferSelect;

export interface AgentHeartbeat {
  id: string;
  region: string;
  version: string;
  inFlight: number;
  startedAt: Date | string;
  at: Date | string;
}

/** Record a heartbeat; one that arrives after a newer one from the same agent changes nothing. */
export async function upsertAgentHeartbeat(db: Db, hb: AgentHeartbeat): Promise<void> {
  const values = {
    id: hb.id,
    region: hb.region,
    version: hb.version,
    inFlight: hb.inFlight,
    startedAt: new Date(hb.startedAt),
    lastSeen: new Date(hb.at),
  };
  await db
    .insert(agents)
    .values(values)
    .onConflictDoUpdate({
      target: agents.id,
      set: {
        region: sql`excluded.region`,
        version: sql`excluded.version`,
        inFlight: sql`excluded.in_flight`,
        startedAt: sql`excluded.started_at`,
        lastSeen: sql`excluded.last_seen`,
      },
      setWhere: sql`${agents.lastSeen} <= excluded.last_seen`,
    });
}

/** Agents by region and id; `seenSince` leaves out the ones gone quiet. */
export function listAgents(db: Db, opts: { seenSince?: Date | undefined } = {}): Promise<Agent[]> {
  return db
    .select()
    .from(agents)
    .where(opts.seenSince ? gte(agents.lastSeen, opts.seenSince) : undefined)
    .orderBy(asc(agents.region), asc(agents.id));
}
