// Downgrades: runs where the server answered with an older revision than the one offered. They
// are rare, so a partial index (runs_downgrades) holds exactly them and a range reads only those.
import { and, eq, gte, lt, sql } from 'drizzle-orm';
import type { Db } from './db';
import { runs } from './schema';

export interface DowngradeQuery {
  since: Date;
  until: Date;
  buckets: number;
  region?: string | undefined;
}

export interface DowngradePair {
  requested: string;
  negotiated: string;
  runs: number;
  servers: number;
}

export interface Downgrades {
  bucketMs: number;
  /** Downgrade runs per bucket (its end), split by `requested → negotiated`. */
  points: { at: Date; total: number; pairs: Record<string, number> }[];
  /** The pairs over the whole range, most frequent first. */
  pairs: DowngradePair[];
  total: number;
}

export const pairKey = (requested: string, negotiated: string) => `${requested} → ${negotiated}`;

export async function downgradesOverTime(db: Db, q: DowngradeQuery): Promise<Downgrades> {
  const buckets = Math.max(1, Math.min(500, Math.floor(q.buckets)));
  const bucketMs = Math.max(1, (q.until.getTime() - q.since.getTime()) / buckets);
  const bucket = sql<number>`floor((extract(epoch from ${runs.finishedAt}) * 1000 - ${q.since.getTime()}) / ${bucketMs})`;
  const rows = await db
    .select({
      bucket: bucket.mapWith(Number),
      requested: sql<string>`coalesce(${runs.requested}, '?')`,
      negotiated: sql<string>`coalesce(${runs.negotiated}, '?')`,
      runs: sql<number>`count(*)`.mapWith(Number),
      servers: sql<string[]>`array_agg(distinct ${runs.serverId})`,
    })
    .from(runs)
    .where(
      and(
        // The partial index's own predicate, written the same way so the planner can use it.
        sql`${runs.outcome} = 'downgrade'`,
        gte(runs.finishedAt, q.since),
        lt(runs.finishedAt, q.until),
        q.region ? eq(runs.region, q.region) : undefined,
      ),
    )
    .groupBy(sql`1`, sql`2`, sql`3`);

  const points = Array.from({ length: buckets }, (_, i) => ({
    at: new Date(q.since.getTime() + (i + 1) * bucketMs),
    total: 0,
    pairs: {} as Record<string, number>,
  }));
  const pairs = new Map<string, DowngradePair & { ids: Set<string> }>();
  let total = 0;
  for (const r of rows) {
    const point = points[Math.min(buckets - 1, Math.max(0, r.bucket))]!;
    const key = pairKey(r.requested, r.negotiated);
    point.total += r.runs;
    point.pairs[key] = (point.pairs[key] ?? 0) + r.runs;
    total += r.runs;
    let pair = pairs.get(key);
    if (!pair) {
      pair = { requested: r.requested, negotiated: r.negotiated, runs: 0, servers: 0, ids: new Set() };
      pairs.set(key, pair);
    }
    pair.runs += r.runs;
    for (const id of r.servers) pair.ids.add(id);
  }
  const ranked = [...pairs.values()]
    .map(({ ids, ...p }) => ({ ...p, servers: ids.size }))
    .sort((a, b) => b.runs - a.runs || a.requested.localeCompare(b.requested));
  return { bucketMs, points, pairs: ranked, total };
}
