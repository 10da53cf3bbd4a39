// Revision drift over time: how many servers negotiate each revision, bucket by bucket. It is
// rebuilt from the current picture (test_states) and the era-move log, not from raw runs: a
// server speaks what its newest-supported test last negotiated until a move says otherwise, so
// the cost grows with servers and moves, never with runs. A point is the picture now corrected
// for the servers that changed since (picturesAt); the fleet-wide points older than
// DRIFT_SETTLE_MS are kept once computed (drift_points), so a 30 d range walks only the last hours.
import { REVISION_NAMES, type Revision } from '@mcp-fleet/probe';
import { sql } from 'drizzle-orm';
import type { Db } from './db';
import { driftPoints, eraMoves, servers, testStates, tests } from './schema';

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

/** Sealed points sit on this grid (the 24 h range's buckets; 7 d and 30 d buckets are multiples of it). */
const SEAL_GRID_MS = 15 * 60_000;
/**
 * How old a point must be before it is sealed: by then the moves before it are confirmed, superseded
 * or marked flapping (the default flap window is 30 min). A sealed point keeps the picture it had
 * when sealed: a server retired or a move re-judged later is not redrawn there.
 */
export const DRIFT_SETTLE_MS = 6 * 3_600_000;

/** The picture at one instant: distinct servers per revision, and speaking any. */
interface Picture {
  servers: Record<string, number>;
  speaking: number;
}

export async function revisionDrift(db: Db, q: DriftQuery & { now?: Date | undefined }): Promise<Drift> {
  const buckets = Math.max(1, Math.min(MAX_BUCKETS, Math.floor(q.buckets)));
  const bucketMs = Math.max(1, (q.until.getTime() - q.since.getTime()) / buckets);
  const ends = Array.from({ length: buckets }, (_, i) => q.since.getTime() + (i + 1) * bucketMs);
  const view = q.view ?? 'confirmed';
  const now = (q.now ?? new Date()).getTime();
  const pictures = new Map<number, Picture>();

  // The fleet-wide points old enough to be settled come from drift_points, sealed by the first read
  // that needed them; a region's drift is not sealed (its key would be anyone's query string).
  const sealable =
    !q.region && ends.every((e) => e % SEAL_GRID_MS === 0) ? ends.filter((e) => e <= now - DRIFT_SETTLE_MS) : [];
  if (sealable.length > 0) {
    const { rows } = (await db.execute(sql`
      select floor(extract(epoch from ${driftPoints.at}) * 1000)::float8 as at, ${driftPoints.servers} as servers,
        ${driftPoints.speaking} as speaking
      from ${driftPoints}
      where ${driftPoints.view} = ${view}
        and ${driftPoints.at} = any(${`{${sealable.map((e) => new Date(e).toISOString()).join(',')}}`}::timestamptz[])`)) as unknown as {
      rows: { at: number; servers: Record<string, number>; speaking: number }[];
    };
    for (const r of rows) pictures.set(Number(r.at), { servers: r.servers, speaking: Number(r.speaking) });
    const missing = sealable.filter((e) => !pictures.has(e));
    if (missing.length > 0) {
      const fresh = await picturesAt(db, missing, { view });
      await db
        .insert(driftPoints)
        .values(missing.map((e) => ({ view, at: new Date(e), ...fresh.get(e)! })))
        .onConflictDoNothing();
      for (const [e, p] of fresh) pictures.set(e, p);
    }
  }
  const rest = ends.filter((e) => !pictures.has(e));
  if (rest.length > 0) for (const [e, p] of await picturesAt(db, rest, { view, region: q.region })) pictures.set(e, p);

  const points = ends.map((end) => {
    const p = pictures.get(end)!;
    const counts = Object.fromEntries(REVISION_NAMES.map((r) => [r, p.servers[r] ?? 0])) as Record<Revision, number>;
    return { at: new Date(end), servers: counts, speaking: p.speaking };
  });
  return { bucketMs, points };
}

/**
 * The picture at each of `ends` (ascending), exactly: the picture now, corrected for the servers
 * that changed since the first end (a move after it, or a test created after it). Only those are
 * walked back move by move, so a short window costs a count of the fleet plus its recent movers,
 * not every state.
 */
async function picturesAt(
  db: Db,
  ends: readonly number[],
  q: { view: 'confirmed' | 'raw'; region?: string | undefined },
): Promise<Map<number, Picture>> {
  const first = new Date(ends[0]!).toISOString();
  const regionOfState = q.region ? sql`and ts.region = ${q.region}` : sql``;
  const live = sql`t.mode = 'newest' and t.retired_at is null and s.retired_at is null and ts.current_revision is not null`;
  // The picture now: distinct servers per revision, and speaking any (grouping sets, one pass).
  const nowRows = (await db.execute(sql`
    select ts.current_revision as revision, grouping(ts.current_revision) as "any",
      count(distinct t.server_id)::int as servers
    from ${testStates} ts
    join ${tests} t on t.id = ts.test_id
    join ${servers} s on s.id = t.server_id
    where ${live} ${regionOfState}
    group by grouping sets ((ts.current_revision), ())`)) as unknown as {
    rows: { revision: string | null; any: number; servers: number }[];
  };
  // The servers that changed after the first end, with each of their states and its moves since
  // then (oldest first, as arrays), by server, so the walk below sees a server's states together.
  // Times as whole epoch ms, as a Date holds them.
  const { rows } = (await db.execute(sql`
    with moves as (
      select test_id, region,
        array_agg(from_revision order by at, id) as froms,
        array_agg(floor(extract(epoch from at) * 1000)::float8 order by at, id) as ats
      from ${eraMoves}
      where at > ${first}::timestamptz
        ${q.region ? sql`and region = ${q.region}` : sql``}
        ${
          // Both halves of a flap are consecutive moves of one test and region: leaving both out keeps the walk's chain.
          q.view === 'confirmed' ? sql`and state <> 'flapping'` : sql``
        }
      group by 1, 2
    ),
    changed as (
      select t.server_id from moves m join ${tests} t on t.id = m.test_id
      union
      select server_id from ${tests} where created_at > ${first}::timestamptz
    )
    select t.server_id as "serverId", ts.current_revision as current,
      floor(extract(epoch from t.created_at) * 1000)::float8 as created, m.froms, m.ats
    from ${testStates} ts
    join ${tests} t on t.id = ts.test_id
    join ${servers} s on s.id = t.server_id
    left join moves m on m.test_id = ts.test_id and m.region = ts.region
    where ${live} ${regionOfState} and t.server_id in (select server_id from changed)
    order by t.server_id`)) as unknown as {
    rows: { serverId: string; current: string; created: number; froms: string[] | null; ats: number[] | null }[];
  };

  const n = ends.length;
  /** The first end at or after `at` (`n` when none): a move at `at` is undone before it. */
  const firstEndingBy = (at: number) => {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid]! < at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  // Each changed state speaks one revision over runs of ends (segments), changing only at its
  // moves: the walk costs states + moves, not states × ends. Per server, the segments of each
  // revision are merged (a server counts once however many tests and regions speak it), then
  // counted with difference arrays; what the same servers count now is taken off the picture now.
  const segmentsOf = new Map<string, { revision: string; lo: number; hi: number }[]>();
  const speaksNow = new Map<string, Set<string>>();
  for (const s of rows) {
    const froms = s.froms ?? [];
    const ats = s.ats ?? [];
    const born = firstEndingBy(Number(s.created));
    let segments = segmentsOf.get(s.serverId);
    let current = speaksNow.get(s.serverId);
    if (!segments || !current) {
      segments = [];
      current = new Set();
      segmentsOf.set(s.serverId, segments);
      speaksNow.set(s.serverId, current);
    }
    current.add(s.current);
    let revision = s.current;
    let hi = n - 1;
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
  const speakingDelta = new Int32Array(n + 1);
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
  // The picture now, less what the changed servers count in it (they are counted end by end below).
  const base: Record<string, number> = {};
  let baseSpeaking = 0;
  for (const r of nowRows.rows) {
    if (Number(r.any) === 1) baseSpeaking = Number(r.servers);
    else if (r.revision !== null) base[r.revision] = Number(r.servers);
  }
  for (const revisions of speaksNow.values()) {
    for (const r of revisions) base[r] = (base[r] ?? 0) - 1;
    baseSpeaking--;
  }
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
        d = new Int32Array(n + 1);
        delta.set(revision, d);
      }
      count(d, list);
    }
    count(speakingDelta, segments.slice());
  }

  const out = new Map<number, Picture>();
  const running = new Map<string, number>();
  let speaking = 0;
  // Every revision counted now or by a changed server: the same for each end.
  const revisions = new Set([...Object.keys(base), ...delta.keys()]);
  for (let i = 0; i < n; i++) {
    const servers: Record<string, number> = {};
    for (const r of revisions) {
      const v = (running.get(r) ?? 0) + (delta.get(r)?.[i] ?? 0);
      running.set(r, v);
      const total = (base[r] ?? 0) + v;
      if (total !== 0) servers[r] = total;
    }
    speaking += speakingDelta[i]!;
    out.set(ends[i]!, { servers, speaking: baseSpeaking + speaking });
  }
  return out;
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
