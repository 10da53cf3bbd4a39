// How old the fleet's data is, and the preset range that fits it: a fresh install's few minutes of
// runs would otherwise sit in one pixel of a 24 h chart. Only the default is fitted; a range the
// operator picks always wins.
import { sql } from 'drizzle-orm';
import type { Db } from './db';
import { RANGES, type RangeName } from './drift';
import { runs } from './schema';

/** What the dashboard shows when nobody has picked a range and there is at least a day of data. */
export const STANDARD_RANGE: RangeName = '24h';

/**
 * When the oldest stored run was received, or null when there is none. By control's clock
 * (received_at, indexed by runs_received), never an agent's: a skewed agent cannot stretch it.
 */
export async function oldestRunAt(db: Db): Promise<Date | null> {
  const [row] = await db.select({ at: sql<string | Date | null>`min(${runs.receivedAt})` }).from(runs);
  return row?.at ? new Date(row.at) : null;
}

/**
 * The smallest preset range that covers data this old, up to the standard one: 1 h until the
 * oldest run is an hour old (no data yet counts as new), then 24 h.
 */
export function fittedRange(oldest: Date | null, now = Date.now()): RangeName {
  const age = oldest ? now - oldest.getTime() : 0;
  const standard = RANGES[STANDARD_RANGE].ms;
  const fits = (Object.keys(RANGES) as RangeName[]).find(
    (name) => RANGES[name].ms >= age && RANGES[name].ms <= standard,
  );
  return fits ?? STANDARD_RANGE;
}
