// A server's handshake latency by region over a range, from its own runs (the runs_server_finished
// index bounds the read to this server and range).
import { PASSING_OUTCOMES } from '@mcp-fleet/probe';
import { and, eq, gte, lt, notInArray, sql } from 'drizzle-orm';
import type { Db } from './db';
import { runs } from './schema';

export interface LatencyPoint {
  at: Date;
  region: string;
  runs: number;
  failed: number;
  p50: number;
  p95: number;
}

export async function latencyByRegion(
  db: Db,
  serverId: string,
  q: { since: Date; until: Date; buckets: number },
): Promise<{ bucketMs: number; points: LatencyPoint[] }> {
  const buckets = Math.max(1, Math.min(500, Math.floor(q.buckets)));
  const bucketMs = Math.max(1, (q.until.getTime() - q.since.getTime()) / buckets);
  const bucket = sql`floor((extract(epoch from ${runs.finishedAt}) * 1000 - ${q.since.getTime()}) / ${bucketMs})`;
  const rows = await db
    .select({
      bucket: sql<number>`${bucket}`.mapWith(Number),
      region: runs.region,
      runs: sql<number>`count(*)`.mapWith(Number),
      failed: sql<number>`count(*) filter (where ${notInArray(runs.outcome, [...PASSING_OUTCOMES])})`.mapWith(Number),
      p50: sql<number>`percentile_cont(0.5) within group (order by ${runs.millis})`.mapWith(Number),
      p95: sql<number>`percentile_cont(0.95) within group (order by ${runs.millis})`.mapWith(Number),
    })
    .from(runs)
    .where(and(eq(runs.serverId, serverId), gte(runs.finishedAt, q.since), lt(runs.finishedAt, q.until)))
    .groupBy(sql`1`, sql`2`)
    .orderBy(sql`1`, sql`2`);
  return {
    bucketMs,
    points: rows.map((r) => ({
      at: new Date(q.since.getTime() + (Math.min(buckets - 1, r.bucket) + 1) * bucketMs),
      region: r.region,
      runs: r.runs,
      failed: r.failed,
      p50: Math.round(r.p50),
      p95: Math.round(r.p95),
    })),
  };
}
