// Raw runs are kept for a while; era moves and test states (the history that matters) stay.
import { inArray, lt } from 'drizzle-orm';
import type { Db } from './db';
import { runs } from './schema';

/** How long raw runs are kept unless configured otherwise. */
export const DEFAULT_RUN_RETENTION_DAYS = 30;

/**
 * Delete runs that finished before `olderThan`, `batchSize` at a time (each batch its own short
 * transaction, so ingest never waits long). Returns how many runs were deleted.
 */
export async function pruneRuns(db: Db, opts: { olderThan: Date; batchSize?: number }): Promise<number> {
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? 5000));
  let deleted = 0;
  for (;;) {
    const batch = db.select({ id: runs.id }).from(runs).where(lt(runs.finishedAt, opts.olderThan)).limit(batchSize);
    const gone = await db.delete(runs).where(inArray(runs.id, batch)).returning({ id: runs.id });
    deleted += gone.length;
    if (gone.length < batchSize) return deleted;
  }
}
