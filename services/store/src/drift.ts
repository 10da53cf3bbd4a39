// Revision drift over time: how many servers negotiate each revision, bucket by bucket. It is
// rebuilt from the current picture (test_states) and the era-move log, not from raw runs: a
// server speaks what its newest-supported test last negotiated until a move says otherwise, so
// the cost grows with servers and moves, never with runs.
import { REVISION_NAMES, type Revision } from '@mcp-fleet/probe';
import { sql } from 'drizzle-orm';
import type { Db } from './db';
import { eraMoves, servers, testStates, tests } from './schema';

export interface DriftQuery {
  since: Date;
  until: Date;
  /** How many points the range is cut into (each point is the picture at its bucket's end). */
  buckets: number;
  /** One region, or every region (a server split across regions counts under each revision it speaks). */
  region?: string | undefined;
  /**
   * `confirmed` (default): a flap (A→B→A, both halves marked flapping by ingest) is not drawn: the
   * server spoke A throughout, as the counters say. `raw`: every recorded move, the blip included.
   * Pending and superseded moves are walked in both: the current revision already reflects them.
   */
  view?: 'confirmed' | 'raw' | undefined;
}

export interface DriftPoint {
  at: Date;
  /** Distinct servers per revision at `at`; revisions nobody speaks are 0. */
  servers: Record<Revision, number>;
  /** Distinct servers speaking any revision at `at`. */
  speaking: number;
}

export interface Drift {
  bucketMs: number;
  points: DriftPoint[];
}

const MAX_BUCKETS = 500;

export async function revisionDrift(db: Db, q: DriftQuery): Promise<Drift> {
  const buckets = Math.max(1, Math.min(MAX_BUCKETS, Math.floor(q.buckets)));
  const bucketMs = Math.max(1, (q.until.getTime() - q.since.getTime()) / buckets);
  // One statement: each state with its moves in the range (oldest first, as arrays), by server, so
  // the walk below sees a server's states together. Times as whole epoch ms, as a Date holds them.
  const { rows } = (await db.execute(sql`
    with moves as (
      select test_id, region,
        array_agg(from_revision order by at, id) as froms,
        array_agg(floor(extract(epoch from at) * 1000)::float8 order by at, id) as ats
      from ${eraMoves}
      where at >= ${q.since.toISOString()}::timestamptz
        ${q.region ? sql`and region = ${q.region}` : sql``}
        ${
          // Both halves of a flap are consecutive moves of one test and region: leaving both out keeps the walk's chain.
          (q.view ?? 'confirmed') === 'confirmed' ? sql`and state <> 'flapping'` : sql``
        }
      group by 1, 2
    )
    select t.server_id as "serverId", ts.current_revision as current,
      floor(extract(epoch from t.created_at) * 1000)::float8 as created, m.froms, m.ats
    from ${testStates} ts
    join ${tests} t on t.id = ts.test_id
    join ${servers} s on s.id = t.server_id
    left join moves m on m.test_id = ts.test_id and m.region = ts.region
    where t.mode = 'newest' and t.retired_at is null and s.retired_at is null and ts.current_revision is not null
      ${q.region ? sql`and ts.region = ${q.region}` : sql``}
    order by t.server_id`)) as unknown as {
    rows: { serverId: string; current: string; created: number; froms: string[] | null; ats: number[] | null }[];
  };

  const ends = Array.from({ length: buckets }, (_, i) => q.since.getTime() + (i + 1) * bucketMs);
  /** The first bucket whose end is at or after `at` (`buckets` when none): a move at `at` is undone before it. */
  const firstEndingBy = (at: number) => {
    let k = Math.max(0, Math.min(buckets, Math.ceil((at - q.since.getTime()) / bucketMs) - 1));
    while (k > 0 && ends[k - 1]! >= at) k--;
    while (k < buckets && ends[k]! < at) k++;
    return k;
  };
  // Each state speaks one revision over runs of buckets (segments), changing only at its moves: the
  // walk costs states + moves, not states × buckets. Per server, the segments of each revision are
  // merged (a server counts once however many tests and regions speak it), then counted with
  // difference arrays.
  const segmentsOf = new Map<string, { revision: string; lo: number; hi: number }[]>();
  for (const s of rows) {
    const froms = s.froms ?? [];
    const ats = s.ats ?? [];
    const born = firstEndingBy(Number(s.created));
    const segments = segmentsOf.get(s.serverId) ?? [];
    if (segments.length === 0) segmentsOf.set(s.serverId, segments);
    let revision = s.current;
    let hi = buckets - 1;
    for (let next = froms.length - 1; next >= 0 && hi >= born; next--) {
      const k = firstEndingBy(Number(ats[next]));
      if (k <= hi) {
        if (Math.max(k, born) <= hi) segments.push({ revision, lo: Math.max(k, born), hi });
        hi = k - 1;
      }
      revision = froms[next]!;
    }
    if (born <= hi) segments.push({ revision, lo: born, hi });
  }

  const delta = new Map<string, Int32Array>();
  const speakingDelta = new Int32Array(buckets + 1);
  const count = (into: Int32Array, runs: { lo: number; hi: number }[]) => {
    runs.sort((a, b) => a.lo - b.lo);
    let lo = -1;
    let hi = -2;
    for (const r of runs) {
      if (r.lo > hi + 1) {
        if (hi >= lo && lo >= 0) {
          into[lo]!++;
          into[hi + 1]!--;
        }
        lo = r.lo;
        hi = r.hi;
      } else hi = Math.max(hi, r.hi);
    }
    if (hi >= lo && lo >= 0) {
      into[lo]!++;
      into[hi + 1]!--;
    }
  };
  for (const segments of segmentsOf.values()) {
    const byRevision = new Map<string, { lo: number; hi: number }[]>();
    for (const seg of segments) {
      const list = byRevision.get(seg.revision) ?? [];
      if (list.length === 0) byRevision.set(seg.revision, list);
      list.push(seg);
    }
    for (const [revision, list] of byRevision) {
      let d = delta.get(revision);
      if (!d) {
        d = new Int32Array(buckets + 1);
        delta.set(revision, d);
      }
      count(d, list);
    }
    count(speakingDelta, segments.slice());
  }
  const running = (d: Int32Array | undefined) => {
    const out = new Array<number>(buckets).fill(0);
    if (!d) return out;
    let n = 0;
    for (let i = 0; i < buckets; i++) out[i] = n += d[i]!;
    return out;
  };
  const perRevision = REVISION_NAMES.map((r) => [r, running(delta.get(r))] as const);
  const speaking = running(speakingDelta);

  const points = ends.map((end, i) => {
    const counts = Object.fromEntries(perRevision.map(([r, n]) => [r, n[i]!])) as Record<Revision, number>;
    return { at: new Date(end), servers: counts, speaking: speaking[i]! };
  });
  return { bucketMs, points };
}

/** A time range cut into about `buckets` points: the shared ranges of the dashboard and API. */
export const RANGES = {
  '1h': { ms: 3_600_000, buckets: 60 },
  '24h': { ms: 86_400_000, buckets: 96 },
  '7d': { ms: 7 * 86_400_000, buckets: 168 },
  '30d': { ms: 30 * 86_400_000, buckets: 120 },
} as const;

export type RangeName = keyof typeof RANGES;

export function isRangeName(v: unknown): v is RangeName {
  return typeof v === 'string' && Object.hasOwn(RANGES, v);
}

/** The range ending now (rounded up to its bucket, so a refresh within a bucket draws the same points). */
export function rangeWindow(name: RangeName, now = Date.now()): { since: Date; until: Date; buckets: number } {
  const { ms, buckets } = RANGES[name];
  const step = ms / buckets;
  const until = Math.ceil(now / step) * step;
  return { since: new Date(until - ms), until: new Date(until), buckets };
}
