// A fleet change told to the other controls on the database (docs/control-replicas.md): a change
// made through one control's API is written to Postgres, and the control that schedules — listening
// on its lease session — reads the schedule again at once instead of at its next periodic read.
// PGlite: one process, nobody to tell; pg_notify there is harmless.
import { sql } from 'drizzle-orm';
import type { Db } from './db';

export const FLEET_CHANGED_CHANNEL = 'mcp_fleet_changed';

/**
 * Tell every listening control that the fleet changed (delivered when the transaction, if any,
 * commits); `from` names the control that changed it, so it can tell its own notice from another's.
 */
export async function tellFleetChanged(db: Db, from: string): Promise<void> {
  await db.execute(sql`select pg_notify(${FLEET_CHANGED_CHANNEL}, ${from})`);
}
