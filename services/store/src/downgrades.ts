// Downgrades: runs where the server answered with an older revision than the one offered. They
// are rare, so a partial index (runs_downgrades, covering what is read here) holds exactly them
// and a range reads only that index.
import { sql } from 'drizzle-orm';
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
  // One statement, two answers over the same rows (read from the covering partial index alone):
  // downgrades per bucket and pair, and per pair over the range with its distinct servers. Hash
  // aggregates throughout (distinct servers as a group by, not count(distinct), which sorts), and
  // date_part, a float8, where extract would compute in numeric: together a third of the cost at
  // 44,000 downgrades in 30 d (bench:web's large fleet).
  const { rows } = (await db.execute(sql`
    with d as materialized (
      select floor((round(date_part('epoch', finished_at) * 1000) - ${q.since.getTime()}) / ${bucketMs})::int as bucket,
        coalesce(requested, '?') as requested, coalesce(negotiated, '?') as negotiated, server_id
      from ${runs}
      -- The partial index's own predicate, written the same way so the planner can use it.
      where ${runs.outcome} = 'downgrade'
        and finished_at >= ${q.since.toISOString()}::timestamptz and finished_at < ${q.until.toISOString()}::timestamptz
        ${q.region ? sql`and region = ${q.region}` : sql``}
    )
    select bucket, requested, negotiated, count(*)::int as runs, null::int as servers from d group by 1, 2, 3
    union all
    select null, requested, negotiated, sum(n)::int, count(*)::int
    from (select requested, negotiated, server_id, count(*) as n from d group by 1, 2, 3) as per_server
    group by 2, 3`)) as unknown as {
    rows: { bucket: number | null; requested: string; negotiated: string; runs: number; servers: number | null }[];
  };

  const points = Array.from({ length: buckets }, (_, i) => ({
    at: new Date(q.since.getTime() + (i + 1) * bucketMs),
    total: 0,
    pairs: {} as Record<string, number>,
  }));
  const pairs = new Map<string, DowngradePair>();
  let total = 0;
  for (const r of rows) {
    const key = pairKey(r.requested, r.negotiated);
    if (r.bucket === null) {
      pairs.set(key, {
        requested: r.requested,
        negotiated: r.negotiated,
        runs: Number(r.runs),
        servers: Number(r.servers),
      });
      continue;
    }
    const point = points[Math.min(buckets - 1, Math.max(0, Number(r.bucket)))]!;
    point.total += Number(r.runs);
    point.pairs[key] = (point.pairs[key] ?? 0) + Number(r.runs);
    total += Number(r.runs);
  }
  const ranked = [...pairs.values()].sort((a, b) => b.runs - a.runs || a.requested.localeCompare(b.requested));
  return { bucketMs, points, pairs: ranked, total };
}
