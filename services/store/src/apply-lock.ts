// Applying the fleet from several controls at once (two replicas started with the same fleet file,
// an API change on each) takes turns: a transaction-level advisory lock, released at commit or
// rollback. Without it two applies read the same "not there yet" and both create the server.
import { sql } from 'drizzle-orm';
import type { Db } from './db';

/** Any number, as long as every mcp-fleet process applying to the same database uses it. */
export const APPLY_LOCK = 0x6d6366_6170; // "mcfap"

/** Take the fleet-apply lock for the rest of the transaction `tx` (waits for one held elsewhere). */
export async function lockFleetApply(tx: Db): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${APPLY_LOCK})`);
}
