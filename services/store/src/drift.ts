// Revision drift over time: how many servers negotiate each revision, bucket by bucket. It is
// rebuilt from the current picture (test_states) and the era-move log, not from raw runs: a
// server speaks what its newest-supported test last negotiated until a move says otherwise, so
// the cost grows with servers and moves, never with runs.
import { REVISION_NAMES, type Revision } from '@mcp-fleet/probe';
import { and, asc, eq, gte, isNotNull, isNull, ne } from 'drizzle-orm';
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
  const newestActive = and(eq(tests.mode, 'newest'), isNull(tests.retiredAt), isNull(servers.retiredAt));
  const inRegion = q.region ? eq(testStates.region, q.region) : undefined;

  const [states, moves] = await db.transaction(
    (tx) =>
      Promise.all([
        tx
          .select({
            testId: testStates.testId,
            region: testStates.region,
            serverId: tests.serverId,
            current: testStates.currentRevision,
            createdAt: tests.createdAt,
          })
          .from(testStates)
          .innerJoin(tests, eq(tests.id, testStates.testId))
          .innerJoin(servers, eq(servers.id, tests.serverId))
          .where(and(newestActive, inRegion, isNotNull(testStates.currentRevision))),
        // Oldest first (era_moves_at index); the walk below takes them from the newest back.
        tx
          .select({
            testId: eraMoves.testId,
            region: eraMoves.region,
            from: eraMoves.fromRevision,
            at: eraMoves.at,
          })
          .from(eraMoves)
          .where(
            and(
              gte(eraMoves.at, q.since),
              q.region ? eq(eraMoves.region, q.region) : undefined,
              // Both halves of a flap are consecutive moves of one test and region: leaving both out keeps the walk's chain.
              (q.view ?? 'confirmed') === 'confirmed' ? ne(eraMoves.state, 'flapping') : undefined,
            ),
          )
          .orderBy(asc(eraMoves.at), asc(eraMoves.id)),
      ]),
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );

  const movesOf = new Map<string, { from: string; at: number }[]>();
  for (const m of moves) {
    const key = `${m.testId}\u0000${m.region}`;
    const list = movesOf.get(key) ?? [];
    if (list.length === 0) movesOf.set(key, list);
    list.push({ from: m.from, at: m.at.getTime() });
  }

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
  for (const s of states) {
    const list = movesOf.get(`${s.testId}\u0000${s.region}`) ?? [];
    const born = firstEndingBy(s.createdAt.getTime());
    const segments = segmentsOf.get(s.serverId) ?? [];
    if (segments.length === 0) segmentsOf.set(s.serverId, segments);
    let revision = s.current as string;
    let hi = buckets - 1;
    for (let next = list.length - 1; next >= 0 && hi >= born; next--) {
      const k = firstEndingBy(list[next]!.at);
      if (k <= hi) {
        if (Math.max(k, born) <= hi) segments.push({ revision, lo: Math.max(k, born), hi });
        hi = k - 1;
      }
      revision = list[next]!.from;
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
