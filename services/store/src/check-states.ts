// A conformance run's checks, filed per check: each (test, region, check) keeps its latest status
// and `since` — when it entered that status ("failing since …"), kept while the status holds — and
// every change of status is a check_changes row (from null on a check's first run). Written in the
// run's own transaction, after its state row is locked, so a redelivered job (its run already
// there) writes nothing again and runs of one test in one region file their checks in order.
import { checkById } from '@mcp-fleet/probe';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from './db';
import { checkChanges, checkStates } from './schema';

/** One check of a conformance run as a validated bus result carries it (probe's CheckResult, widened). */
export interface CheckReport {
  id: string;
  level: string;
  status: 'pass' | 'fail' | 'skip';
  message: string;
  evidence?: unknown;
  millis: number;
  requests: number;
}

/** What a conformance-depth run reports beside its handshake (probe's ConformanceRun, the fields filed). */
export interface ConformanceReport {
  protocol: { negotiated: string | null; era: string | null };
  pass: boolean;
  checks: CheckReport[];
}

export interface FiledChecks {
  testId: string;
  serverId: string;
  region: string;
  runId: number;
  at: Date;
  era: string | null;
  checks: readonly CheckReport[];
}

/** A check's level as probe's table has it: an agent's word is not taken for what a check weighs. */
export function levelOf(check: CheckReport): 'MUST' | 'SHOULD' {
  return checkById(check.id)?.level ?? (check.level === 'MUST' ? 'MUST' : 'SHOULD');
}

/** The checks a run reports once each (a repeated id is a hostile or broken agent's: the first stands). */
function distinct(checks: readonly CheckReport[]): CheckReport[] {
  const first = new Map<string, CheckReport>();
  for (const c of checks) if (!first.has(c.id)) first.set(c.id, c);
  return [...first.values()];
}

/** Move the run's checks' states and record their changes; how many changed status. */
export async function fileChecks(tx: Db, f: FiledChecks): Promise<number> {
  const checks = distinct(f.checks);
  if (checks.length === 0) return 0;
  const before = new Map(
    (
      await tx
        .select({ checkId: checkStates.checkId, status: checkStates.status })
        .from(checkStates)
        .where(and(eq(checkStates.testId, f.testId), eq(checkStates.region, f.region)))
    ).map((r) => [r.checkId, r.status]),
  );
  const era = f.era ?? 'unknown';
  await tx
    .insert(checkStates)
    .values(
      checks.map((c) => ({
        testId: f.testId,
        serverId: f.serverId,
        region: f.region,
        checkId: c.id,
        level: levelOf(c),
        era,
        status: c.status,
        message: c.message,
        evidence: c.evidence ?? null,
        since: f.at,
        lastRunId: f.runId,
        lastRunAt: f.at,
      })),
    )
    .onConflictDoUpdate({
      target: [checkStates.testId, checkStates.region, checkStates.checkId],
      set: {
        level: sql`excluded.level`,
        era: sql`excluded.era`,
        // An unchanged status keeps when it began.
        since: sql`case when ${checkStates.status} = excluded.status then ${checkStates.since} else excluded.since end`,
        status: sql`excluded.status`,
        message: sql`excluded.message`,
        evidence: sql`excluded.evidence`,
        lastRunId: sql`excluded.last_run_id`,
        lastRunAt: sql`excluded.last_run_at`,
      },
    });
  const changed = checks.filter((c) => before.get(c.id) !== c.status);
  if (changed.length)
    await tx.insert(checkChanges).values(
      changed.map((c) => ({
        serverId: f.serverId,
        testId: f.testId,
        region: f.region,
        checkId: c.id,
        level: levelOf(c),
        fromStatus: before.get(c.id) ?? null,
        toStatus: c.status,
        runId: f.runId,
        at: f.at,
      })),
    );
  return changed.length;
}
