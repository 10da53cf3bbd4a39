// Agents report in with heartbeats; the table holds the latest one per agent.
import { asc, getTableColumns, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
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
  /** The stdio commands it runs (issue 20); none given: it runs none (an agent from before stdio). */
  stdioCommands?: readonly string[] | undefined;
}

/**
 * Record a heartbeat. One that arrives after a newer one from the same agent (by the agent's clock)
 * changes none of what the agent reported; it still counts as heard (received_at, the database's
 * clock), which is what retention forgets silent agents by.
 */
export async function upsertAgentHeartbeat(db: Db, hb: AgentHeartbeat): Promise<void> {
  const values = {
    id: hb.id,
    region: hb.region,
    version: hb.version,
    inFlight: hb.inFlight,
    startedAt: new Date(hb.startedAt),
    lastSeen: new Date(hb.at),
    stdioCommands: [...(hb.stdioCommands ?? [])],
  };
  const newer = sql`${agents.lastSeen} <= excluded.last_seen`;
  const ifNewer = (column: AnyPgColumn) =>
    sql`case when ${newer} then excluded.${sql.identifier(column.name)} else ${column} end`;
  await db
    .insert(agents)
    .values(values)
    .onConflictDoUpdate({
      target: agents.id,
      set: {
        region: ifNewer(agents.region),
        version: ifNewer(agents.version),
        inFlight: ifNewer(agents.inFlight),
        startedAt: ifNewer(agents.startedAt),
        lastSeen: ifNewer(agents.lastSeen),
        stdioCommands: ifNewer(agents.stdioCommands),
        receivedAt: sql`now()`,
      },
    });
}

/**
 * An agent control has not heard from for this long is stale: six missed heartbeats (an agent
 * sends one every 10 s). It stays listed, marked, until retention forgets it after 7 days.
 */
export const AGENT_STALE_AFTER_SECONDS = 60;

export type ListedAgent = Agent & { stale: boolean };

/**
 * Agents by region and id, each marked `stale` by when control last heard from it (received_at,
 * the database's clock): an agent's own clock (lastSeen) may be skewed, and one running ahead
 * would otherwise never go stale.
 */
export function listAgents(db: Db): Promise<ListedAgent[]> {
  const stale = sql<boolean>`${agents.receivedAt} < now() - make_interval(secs => ${AGENT_STALE_AFTER_SECONDS})`;
  return db
    .select({ ...getTableColumns(agents), stale })
    .from(agents)
    .orderBy(asc(agents.region), asc(agents.id));
}

/**
 * Per region, the stdio commands some live (not stale) agent of it runs (issue 20): what the
 * editor offers and what control's API lets a stdio server name. A region without one: absent.
 */
export async function stdioCommandsByRegion(db: Db): Promise<Record<string, string[]>> {
  const rows = await db
    .selectDistinct({ region: agents.region, command: sql<string>`jsonb_array_elements_text(${agents.stdioCommands})` })
    .from(agents)
    .where(sql`${agents.receivedAt} >= now() - make_interval(secs => ${AGENT_STALE_AFTER_SECONDS})`);
  const out: Record<string, string[]> = {};
  for (const r of rows) out[r.region] = [...(out[r.region] ?? []), r.command];
  for (const list of Object.values(out)) list.sort();
  return out;
}
