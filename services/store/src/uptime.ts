// Uptime and reachability as Grafana Synthetic Monitoring defines them, per test and per server,
// over 24 h, 7 d and 30 d, read from test_slots (one row per test and interval bucket, filed by
// ingest): uptime is the share of buckets in which any region's run passed; reachability the share
// of runs (executions) that passed. A server's uptime counts every bucket of every test it has
// (each test's bucket is up when any region passed it); its SLO line is its judgement's `slo`.
import { storedJudgement } from '@mcp-fleet/config';
import { and, eq, gte, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import type { Db } from './db';
import { servers, testSlots } from './schema';

export const UPTIME_WINDOWS = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
export type UptimeWindow = keyof typeof UPTIME_WINDOWS;
/** How long test_slots rows are kept: the longest window and a day (retention). */
export const TEST_SLOTS_KEPT_MS = UPTIME_WINDOWS['30d'] + 86_400_000;

export interface Availability {
  window: UptimeWindow;
  /** Buckets with at least one run. */
  buckets: number;
  /** Buckets in which some region's run passed. */
  upBuckets: number;
  executions: number;
  successes: number;
  /** upBuckets / buckets (0..1); null without a run in the window. */
  uptime: number | null;
  /** successes / executions (0..1); null without a run in the window. */
  reachability: number | null;
}

export interface ServerAvailability {
  serverId: string;
  windows: Record<UptimeWindow, Availability>;
  /** The SLO over 30 d: target in percent, and the error budget left (1: untouched, 0: spent, below 0: overspent; null: no run). */
  slo: { target: number; budgetLeft: number | null };
}

/** What is left of an error budget: 1 − (1 − uptime) / (1 − target). */
export function budgetLeft(uptime: number | null, targetPercent: number): number | null {
  if (uptime === null) return null;
  const allowed = 1 - targetPercent / 100;
  if (allowed <= 0) return uptime >= 1 ? 1 : Number.NEGATIVE_INFINITY;
  return 1 - (1 - uptime) / allowed;
}

const WINDOW_NAMES = Object.keys(UPTIME_WINDOWS) as UptimeWindow[];

/** One window's counts as SQL aggregates over test_slots rows since `now − window`. */
function windowColumns(now: Date) {
  const cols: Record<string, SQL<number>> = {};
  for (const w of WINDOW_NAMES) {
    const since = new Date(now.getTime() - UPTIME_WINDOWS[w]);
    const inWindow = sql`${testSlots.bucket} >= ${since}`;
    cols[`${w}_buckets`] = sql<number>`count(*) filter (where ${inWindow})::int`;
    cols[`${w}_up`] = sql<number>`count(*) filter (where ${inWindow} and ${testSlots.successes} > 0)::int`;
    cols[`${w}_executions`] = sql<number>`coalesce(sum(${testSlots.executions}) filter (where ${inWindow}), 0)::int`;
    cols[`${w}_successes`] = sql<number>`coalesce(sum(${testSlots.successes}) filter (where ${inWindow}), 0)::int`;
  }
  return cols;
}

function windowsOf(row: Record<string, unknown>): Record<UptimeWindow, Availability> {
  const out = {} as Record<UptimeWindow, Availability>;
  for (const w of WINDOW_NAMES) {
    const buckets = Number(row[`${w}_buckets`] ?? 0);
    const upBuckets = Number(row[`${w}_up`] ?? 0);
    const executions = Number(row[`${w}_executions`] ?? 0);
    const successes = Number(row[`${w}_successes`] ?? 0);
    out[w] = {
      window: w,
      buckets,
      upBuckets,
      executions,
      successes,
      uptime: buckets ? upBuckets / buckets : null,
      reachability: executions ? successes / executions : null,
    };
  }
  return out;
}

function empty(): Record<UptimeWindow, Availability> {
  return windowsOf({});
}

/** Each live server's availability (or the ones named), with its SLO line. */
export async function serverAvailability(
  db: Db,
  q: { serverIds?: readonly string[] | undefined; now?: Date | undefined } = {},
): Promise<Map<string, ServerAvailability>> {
  const now = q.now ?? new Date();
  const list = await db
    .select({ id: servers.id, judgement: servers.judgement })
    .from(servers)
    .where(q.serverIds ? inArray(servers.id, [...q.serverIds]) : isNull(servers.retiredAt));
  const out = new Map<string, ServerAvailability>();
  if (list.length === 0) return out;
  const rows = await db
    .select({ serverId: testSlots.serverId, ...windowColumns(now) })
    .from(testSlots)
    .where(
      and(
        inArray(
          testSlots.serverId,
          list.map((s) => s.id),
        ),
        gte(testSlots.bucket, new Date(now.getTime() - UPTIME_WINDOWS['30d'])),
      ),
    )
    .groupBy(testSlots.serverId);
  const counted = new Map(rows.map((r) => [r.serverId, windowsOf(r)]));
  for (const s of list) {
    const windows = counted.get(s.id) ?? empty();
    const target = storedJudgement(s.judgement).slo;
    out.set(s.id, { serverId: s.id, windows, slo: { target, budgetLeft: budgetLeft(windows['30d'].uptime, target) } });
  }
  return out;
}

/** Each test of a server: its availability per window (tests without a run in 30 d are absent). */
export async function testAvailability(
  db: Db,
  serverId: string,
  now: Date = new Date(),
): Promise<Map<string, Record<UptimeWindow, Availability>>> {
  const rows = await db
    .select({ testId: testSlots.testId, ...windowColumns(now) })
    .from(testSlots)
    .where(
      and(eq(testSlots.serverId, serverId), gte(testSlots.bucket, new Date(now.getTime() - UPTIME_WINDOWS['30d']))),
    )
    .groupBy(testSlots.testId);
  return new Map(rows.map((r) => [r.testId, windowsOf(r)]));
}
