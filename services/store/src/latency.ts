// A server's handshake latency by region over a range. A range of whole-hour buckets starting on an
// hour (7 d, 30 d) reads the hourly rollups (rollups.ts: p50/p95 from the latency histogram, within
// a bucket of the exact answer); a shorter one reads the server's own runs (the runs_server_finished
// index bounds the read to this server and range).
import { PASSING_OUTCOMES } from '@mcp-fleet/probe';
import { and, eq, gte, lt, notInArray, sql } from 'drizzle-orm';
import type { Db } from './db';
import { addCounts, fitsRollups, histogramQuantile, outcomeSlot } from './rollups';
import { runRollupsHourly, runs } from './schema';

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
  q: { since: Date; until: Date; buckets: number; raw?: boolean },
): Promise<{ bucketMs: number; points: LatencyPoint[] }> {
  const buckets = Math.max(1, Math.min(500, Math.floor(q.buckets)));
  const bucketMs = Math.max(1, (q.until.getTime() - q.since.getTime()) / buckets);
  if (!q.raw && fitsRollups({ since: q.since, until: q.until, buckets })) {
    return { bucketMs, points: await fromRollups(db, serverId, { since: q.since, until: q.until, buckets, bucketMs }) };
  }
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

const PASSING_SLOTS = PASSING_OUTCOMES.map(outcomeSlot);

async function fromRollups(
  db: Db,
  serverId: string,
  q: { since: Date; until: Date; buckets: number; bucketMs: number },
): Promise<LatencyPoint[]> {
  const hours = await db
    .select({
      hour: runRollupsHourly.hour,
      region: runRollupsHourly.region,
      runs: runRollupsHourly.runs,
      outcomes: runRollupsHourly.outcomes,
      latency: runRollupsHourly.latency,
      maxMillis: runRollupsHourly.maxMillis,
    })
    .from(runRollupsHourly)
    .where(
      and(
        eq(runRollupsHourly.serverId, serverId),
        gte(runRollupsHourly.hour, q.since),
        lt(runRollupsHourly.hour, q.until),
      ),
    );
  const points = new Map<
    string,
    { bucket: number; region: string; runs: number; passed: number; latency: number[]; max: number }
  >();
  for (const h of hours) {
    const bucket = Math.min(q.buckets - 1, Math.floor((h.hour.getTime() - q.since.getTime()) / q.bucketMs));
    const key = `${bucket}\u0000${h.region}`;
    let p = points.get(key);
    if (!p) {
      p = { bucket, region: h.region, runs: 0, passed: 0, latency: [], max: 0 };
      points.set(key, p);
    }
    p.runs += h.runs;
    for (const slot of PASSING_SLOTS) p.passed += h.outcomes[slot] ?? 0;
    p.latency = addCounts(p.latency, h.latency);
    p.max = Math.max(p.max, h.maxMillis);
  }
  return [...points.values()]
    .sort((a, b) => a.bucket - b.bucket || (a.region < b.region ? -1 : a.region > b.region ? 1 : 0))
    .map((p) => ({
      at: new Date(q.since.getTime() + (p.bucket + 1) * q.bucketMs),
      region: p.region,
      runs: p.runs,
      failed: p.runs - p.passed,
      p50: Math.round(histogramQuantile(0.5, p.latency, p.max)),
      p95: Math.round(histogramQuantile(0.95, p.latency, p.max)),
    }));
}
