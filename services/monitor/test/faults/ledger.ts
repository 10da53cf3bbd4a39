// Bookkeeping for the fault tests: which jobs the bus accepted, which runs the database holds,
// which slots the scheduling policy says must (or must not) have run, and the one-line figures.
import type { Job, NatsBus } from '@mcp-fleet/bus';
import { freshnessMs, offsetFor } from '@mcp-fleet/control';
import { type Db, listActiveTests, runs } from '@mcp-fleet/store';
import { sql } from 'drizzle-orm';

/** A bus that remembers every job id the broker accepted (acked publish), and when. */
export interface RecordingBus extends NatsBus {
  readonly accepted: Map<string, { at: number; job: Job }>;
  publishErrors(): number;
}

export function recordingBus(bus: NatsBus): RecordingBus {
  const accepted = new Map<string, { at: number; job: Job }>();
  let errors = 0;
  return {
    ...bus,
    accepted,
    publishErrors: () => errors,
    async publishJob(job) {
      try {
        const answer = await bus.publishJob(job);
        if (!accepted.has(job.jobId)) accepted.set(job.jobId, { at: Date.now(), job });
        return answer;
      } catch (err) {
        errors += 1;
        throw err;
      }
    },
  };
}

export interface RunRow {
  jobId: string;
  testId: string;
  region: string;
  agent: string;
  scheduledAt: number;
}

export async function readRuns(db: Db): Promise<RunRow[]> {
  const rows = await db
    .select({
      jobId: runs.jobId,
      testId: runs.testId,
      region: runs.region,
      agent: runs.agent,
      scheduledAt: runs.scheduledAt,
    })
    .from(runs);
  return rows.map((r) => ({ ...r, scheduledAt: r.scheduledAt.getTime() }));
}

/** Runs of slots scheduled at or after `since` (ms). */
export async function countRunsSince(db: Db, since: number): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(runs)
    .where(sql`${runs.scheduledAt} >= ${new Date(since).toISOString()}`);
  return row?.n ?? 0;
}

/** How many of these job ids have a run. */
export async function countRunsOf(db: Db, jobIds: readonly string[]): Promise<number> {
  if (jobIds.length === 0) return 0;
  const [row] = await db
    .select({ n: sql<number>`count(distinct ${runs.jobId})::int` })
    .from(runs)
    .where(sql`${runs.jobId} = any(${sql.param([...jobIds])}::text[])`);
  return row?.n ?? 0;
}

/** (test, region) pairs whose slots scheduled at or after `since` have a run. */
export async function entriesRunSince(db: Db, since: number): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(distinct (${runs.testId}, ${runs.region}))::int` })
    .from(runs)
    .where(sql`${runs.scheduledAt} >= ${new Date(since).toISOString()}`);
  return row?.n ?? 0;
}

/** Extra rows beyond one per job id, and beyond one per (test, region, slot). */
export function duplicates(rows: readonly RunRow[]): { byJob: number; bySlot: number; maxPerJob: number } {
  const perJob = new Map<string, number>();
  const perSlot = new Map<string, number>();
  for (const r of rows) {
    perJob.set(r.jobId, (perJob.get(r.jobId) ?? 0) + 1);
    const slot = `${r.testId}|${r.region}|${r.scheduledAt}`;
    perSlot.set(slot, (perSlot.get(slot) ?? 0) + 1);
  }
  const extra = (m: Map<string, number>) => [...m.values()].reduce((sum, n) => sum + n - 1, 0);
  return { byJob: extra(perJob), bySlot: extra(perSlot), maxPerJob: Math.max(0, ...perJob.values()) };
}

export interface Entry {
  testId: string;
  region: string;
  intervalMs: number;
  offsetMs: number;
  freshMs: number;
}

/** The scheduler's handshake entries, with the offsets it derives (see slots.ts). */
export async function scheduleEntries(db: Db, regions: readonly string[]): Promise<Entry[]> {
  const tests = await listActiveTests(db);
  return tests.flatMap((t) =>
    (t.regions ?? regions)
      .filter((r) => regions.includes(r))
      .map((region) => ({
        testId: t.testId,
        region,
        intervalMs: t.intervalMs,
        offsetMs: offsetFor(`handshake.${t.testId}.${region}`, t.intervalMs),
        freshMs: freshnessMs(t.intervalMs),
      })),
  );
}

/**
 * What a slot must do under the scheduling policy, given when things were away:
 * `must` run exactly once, `skip` must not run (stale by the time control was back), `either`
 * (on an edge, within the tolerance of a scheduler tick).
 */
export type Verdict = 'must' | 'skip' | 'either';

export interface SlotAccount {
  /** Slots in the window, over all entries. */
  expected: number;
  /** Slots with a run. */
  ran: number;
  /** Slots and runs by what the policy said of them. */
  by: Record<Verdict, { slots: number; ran: number }>;
  /** Slots the policy required that have no run: losses. */
  missing: { testId: string; region: string; slot: number }[];
  /** Slots without a run that the policy allowed to go (`skip` or `either`). */
  skipped: number;
  /** Slots the policy said to skip that ran anyway (a burst to catch up). */
  ranWhenStale: number;
  /** Runs whose slot is not on its entry's grid. */
  offGrid: number;
}

export function accountSlots(
  entries: readonly Entry[],
  rows: readonly RunRow[],
  window: { from: number; to: number },
  verdict: (slot: number, entry: Entry) => Verdict,
): SlotAccount {
  const ranSlots = new Map<string, Set<number>>();
  for (const r of rows) {
    const key = `${r.testId}|${r.region}`;
    const set = ranSlots.get(key) ?? new Set<number>();
    ranSlots.set(key, set);
    set.add(r.scheduledAt);
  }
  const account: SlotAccount = {
    expected: 0,
    ran: 0,
    by: { must: { slots: 0, ran: 0 }, skip: { slots: 0, ran: 0 }, either: { slots: 0, ran: 0 } },
    missing: [],
    skipped: 0,
    ranWhenStale: 0,
    offGrid: 0,
  };
  for (const e of entries) {
    const ran = ranSlots.get(`${e.testId}|${e.region}`) ?? new Set<number>();
    for (const s of ran) if ((((s - e.offsetMs) % e.intervalMs) + e.intervalMs) % e.intervalMs !== 0) account.offGrid++;
    const first = Math.ceil((window.from - e.offsetMs) / e.intervalMs) * e.intervalMs + e.offsetMs;
    // Only slots whose whole fresh window lies inside the observed window.
    for (let s = first; s + e.freshMs <= window.to; s += e.intervalMs) {
      const v = verdict(s, e);
      const didRun = ran.has(s);
      account.expected++;
      account.by[v].slots++;
      if (didRun) {
        account.ran++;
        account.by[v].ran++;
      } else if (v === 'must') account.missing.push({ testId: e.testId, region: e.region, slot: s });
      else account.skipped++;
    }
  }
  account.ranWhenStale = account.by.skip.ran;
  return account;
}

/** One line per scenario, easy to quote: `[faults] <scenario> | key=value · key=value`. */
export function report(scenario: string, figures: Record<string, string | number | boolean>): string {
  const line = `[faults] ${scenario} | ${Object.entries(figures)
    .map(([k, v]) => `${k}=${v}`)
    .join(' · ')}`;
  console.log(line);
  return line;
}
