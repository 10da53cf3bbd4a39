// Group commit: many runs in one transaction, each with exactly recordRun's effect (ingest.ts).
// One commit and one WAL flush per batch instead of per run; and most runs of a steady fleet change
// nothing but their test's last-run fields (passing, the same revision, nothing pending or open),
// so those are written with a handful of set-wide statements for the whole batch, and only the
// runs that move something take recordRun's own path, one after the other, in the same transaction.
//
// Locks: every test of the batch is locked first, in test id order (one statement), then its region
// states; two batches (two control replicas, two flushes) take test rows in the same order and
// cannot wait on each other in a circle. Rows shared between tests (a surface blob two servers
// serve) can still deadlock: Postgres aborts one, and that batch is recorded run by run, below.
//
// Failure: a run whose test is unknown or not its server's is answered with recordRun's error and
// writes nothing. If anything else in the transaction fails (a value the database cannot hold, a
// deadlock), it is rolled back whole and every run is recorded again on its own transaction, so a
// bad run costs the batch its group commit and nothing else: the others are written, the bad one
// gets its own error. Results come off the bus (a trust boundary): nothing here trusts their ids.
import { effectiveIntervalMs, storedJudgement } from '@mcp-fleet/config';
import { isPassing, isRevision } from '@mcp-fleet/probe';
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import { consensusOf } from './consensus';
import type { Db } from './db';
import { UnknownRecordError } from './errors';
import {
  type RecordRunAnswer,
  type RunResult,
  recordRun,
  recordRunIn,
  runRow,
  TEST_FOR_INGEST,
  type VerifiedSurfaces,
} from './ingest';
import { rollUpRuns } from './rollups';
import { eraMoves, regionDisagreements, servers, testStates, tests } from './schema';
import { slotBucket } from './slot-ingest';
import { verifySurfaces } from './surface-ingest';

/** One run's answer in a batch: what recordRun would have said, or why it refused. */
export type RecordRunsAnswer = { ok: true; answer: RecordRunAnswer } | { ok: false; error: Error };

type Item = { i: number; result: RunResult; verified: VerifiedSurfaces };

/** How a batch went (for metrics, benchmarks and tests): runs written the quiet way, recordRun's way, or all run by run. */
export interface BatchStats {
  quiet: number;
  slow: number;
  /** The batch's transaction failed and every run was recorded on its own. */
  fallback: boolean;
}

export async function recordRuns(
  db: Db,
  results: readonly RunResult[],
  stats: BatchStats = { quiet: 0, slow: 0, fallback: false },
): Promise<RecordRunsAnswer[]> {
  const answers: RecordRunsAnswer[] = new Array(results.length);
  const items: Item[] = [];
  results.forEach((result, i) => {
    // Refused before the transaction, as recordRun does: a forged snapshot writes nothing.
    try {
      items.push({ i, result, verified: verifySurfaces(result.surfaces ?? []) });
    } catch (err) {
      answers[i] = { ok: false, error: err as Error };
    }
  });
  if (items.length === 0) return answers;
  try {
    const inBatch = await db.transaction((tx) => recordBatch(tx, items, stats));
    for (const [i, answer] of inBatch) answers[i] = answer;
  } catch {
    stats.fallback = true;
    // Run by run: the transaction's failure is some run's (or a deadlock's); each now finds its own.
    for (const { i, result } of items) {
      try {
        answers[i] = { ok: true, answer: await recordRun(db, result) };
      } catch (err) {
        answers[i] = { ok: false, error: err as Error };
      }
    }
  }
  return answers;
}

type TestRow = {
  id: string;
  serverId: string;
  mode: 'newest' | 'pinned';
  pinnedRevision: string | null;
  depth: string;
  intervalMs: number | null;
  server: string;
  serverRegions: string[] | null;
  serverIntervalMs: number;
  judgement: unknown;
};

async function recordBatch(tx: Db, items: Item[], stats: BatchStats): Promise<Map<number, RecordRunsAnswer>> {
  const out = new Map<number, RecordRunsAnswer>();
  const testIds = [...new Set(items.map((x) => x.result.testId))].sort();
  // Every test of the batch, locked in id order (see the top), with what judging its runs needs.
  const testRows = (await tx
    .select(TEST_FOR_INGEST)
    .from(tests)
    .innerJoin(servers, eq(servers.id, tests.serverId))
    .where(inArray(tests.id, testIds))
    .orderBy(asc(tests.id))
    .for('no key update', { of: tests })) as TestRow[];
  const testById = new Map(testRows.map((t) => [t.id, t]));
  const states = await tx
    .select()
    .from(testStates)
    .where(inArray(testStates.testId, testIds))
    .orderBy(asc(testStates.testId), asc(testStates.region))
    .for('update');
  const statesByTest = new Map<string, (typeof states)[number][]>();
  for (const s of states) statesByTest.set(s.testId, [...(statesByTest.get(s.testId) ?? []), s]);
  const pending = new Set(
    (
      await tx
        .select({ testId: eraMoves.testId, region: eraMoves.region })
        .from(eraMoves)
        .where(and(inArray(eraMoves.testId, testIds), eq(eraMoves.state, 'pending')))
    ).map((m) => `${m.testId}\u0000${m.region}`),
  );
  const openDisagreement = new Set(
    (
      await tx
        .select({ testId: regionDisagreements.testId })
        .from(regionDisagreements)
        .where(and(inArray(regionDisagreements.testId, testIds), isNull(regionDisagreements.endedAt)))
    ).map((d) => d.testId),
  );

  // A test and region that comes twice in the batch (two slots, a redelivery) takes the slow path
  // both times: its runs must see each other.
  const seen = new Map<string, number>();
  const runsOfTest = new Map<string, number>();
  for (const { result } of items) {
    const k = `${result.testId}\u0000${result.region}`;
    seen.set(k, (seen.get(k) ?? 0) + 1);
    runsOfTest.set(result.testId, (runsOfTest.get(result.testId) ?? 0) + 1);
  }
  const quiet: {
    item: Item;
    test: TestRow;
    /** The region's state; undefined for a first run there (quiet when it is its test's only run in the batch). */
    state: (typeof states)[number] | undefined;
    answer: RecordRunAnswer;
  }[] = [];
  const slow: Item[] = [];
  for (const item of items) {
    const { result } = item;
    const test = testById.get(result.testId);
    // recordRun's own refusals, before anything is written.
    if (!test) {
      out.set(item.i, { ok: false, error: new UnknownRecordError(`no test ${result.testId}`, '23503') });
      continue;
    }
    if (test.serverId !== result.serverId) {
      out.set(item.i, {
        ok: false,
        error: new UnknownRecordError(`test ${result.testId} is not a test of server ${result.serverId}`, '23503'),
      });
      continue;
    }
    const answer = quietAnswer(item, test, statesByTest.get(test.id) ?? [], {
      twice: (seen.get(`${result.testId}\u0000${result.region}`) ?? 0) > 1,
      alone: runsOfTest.get(result.testId) === 1,
      pending: pending.has(`${result.testId}\u0000${result.region}`),
      disagreementOpen: openDisagreement.has(test.id),
    });
    if (answer) quiet.push({ item, test, ...answer });
    else slow.push(item);
  }
  // A test with a run that moves something has all its batch's runs taken in order, recordRun's way:
  // the quiet ones are written first, so they must not belong to a test whose runs read each other.
  // Then the batch does what recording its runs one by one in arrival order would (tests are
  // independent of each other), and each run's answer is the one recordRun would give.
  const slowTests = new Set(slow.map((x) => x.result.testId));
  if (slowTests.size) {
    const stay = quiet.filter((q) => !slowTests.has(q.test.id));
    if (stay.length !== quiet.length) {
      slow.splice(0, slow.length, ...items.filter((x) => slowTests.has(x.result.testId) && !out.has(x.i)));
      quiet.splice(0, quiet.length, ...stay);
    }
  }

  if (quiet.length) {
    const idByJob = await insertRuns(
      tx,
      quiet.map(({ item }) => runRow(item.result)),
    );
    const written: typeof quiet = [];
    for (const q of quiet) {
      const runId = idByJob.get(q.item.result.jobId);
      if (runId === undefined) out.set(q.item.i, { ok: true, answer: { duplicate: true } });
      else {
        written.push(q);
        out.set(q.item.i, { ok: true, answer: { ...q.answer, runId } as RecordRunAnswer });
      }
    }
    // The quiet runs' hours, in one statement (the others roll theirs up on recordRun's way).
    await rollUpRuns(
      tx,
      written.map(({ item }) => runRow(item.result)),
    );
    await countSlots(tx, written);
    const stateRow = ({ item }: (typeof written)[number]) => ({
      ...runRow(item.result),
      runId: idByJob.get(item.result.jobId)!,
    });
    await touchStates(tx, written.filter((q) => q.state).map(stateRow));
    await makeStates(tx, written.filter((q) => !q.state).map(stateRow));
  }
  stats.quiet = quiet.length;
  stats.slow = slow.length;
  // The runs that move something, recordRun's way (their tests already locked above).
  for (const item of slow) out.set(item.i, { ok: true, answer: await recordRunIn(tx, item.result, item.verified) });
  return out;
}

/**
 * The answer of a run that changes nothing but its region state's last-run fields, or null when it
 * may change more: a handshake test (no checks, surfaces or twin), judged in its region, a state
 * that is passing with no failure counted, a passing run at the state's own revision, not older
 * than the state's last slot, no move pending in its region, and (a newest-supported test) regions
 * that agree with no disagreement open. Such a run moves no revision, no consensus, no move and no
 * disagreement: recordRun would write the run, count its slot and touch the state, and say so.
 */
function quietAnswer(
  item: Item,
  test: TestRow,
  states: readonly (typeof testStates.$inferSelect)[],
  flags: { twice: boolean; alone: boolean; pending: boolean; disagreementOpen: boolean },
): { state: typeof testStates.$inferSelect | undefined; answer: RecordRunAnswer } | null {
  const { result } = item;
  if (flags.twice || flags.pending || flags.disagreementOpen || test.depth !== 'handshake') return null;
  const ownRegion = (region: string) => !test.serverRegions || test.serverRegions.includes(region);
  if (!ownRegion(result.region)) return null;
  const state = states.find((s) => s.region === result.region);
  if (!state)
    return flags.alone
      ? firstAnswer(
          result,
          test,
          states.filter((s) => ownRegion(s.region)),
        )
      : null;
  if (state.failing || state.consecutiveFailures !== 0) return null;
  if (!isPassing(result.run.outcome) || !isRevision(state.currentRevision)) return null;
  if (result.run.negotiated !== state.currentRevision) return null;
  const scheduledAt = new Date(result.scheduledAt);
  if (state.lastScheduledAt && scheduledAt < state.lastScheduledAt) return null;
  const judged = states.filter((s) => ownRegion(s.region));
  if (test.mode === 'newest') {
    const revisions = new Set(judged.map((s) => s.currentRevision).filter(isRevision));
    if (revisions.size >= 2) return null;
  }
  const consensus = consensusOf(judged, storedJudgement(test.judgement));
  return {
    state,
    answer: {
      duplicate: false,
      runId: 0,
      eraMove: null,
      stale: false,
      moved: false,
      currentRevision: state.currentRevision,
      server: test.server,
      test: { mode: test.mode, pinnedRevision: test.pinnedRevision, depth: test.depth },
      failing: { was: false, now: false },
      surfaceChanges: [],
      consensus: {
        was: consensus.failing,
        now: consensus.failing,
        regionsFailing: consensus.regionsFailing,
        regionsTotal: consensus.regionsTotal,
        needed: consensus.needed,
      },
      confirmedMoves: [],
      flap: null,
      disagreement: null,
    },
  };
}

/**
 * A test's first run in a region, when it is the test's only run in the batch: passing with a
 * revision, and (a newest-supported test) the regions that have one agree with it. recordRun would
 * make the state at that revision, see no move (a first sight is none), no pending move to confirm
 * and no disagreement to open; the consensus gains a region that is not failing.
 */
function firstAnswer(
  result: RunResult,
  test: TestRow,
  others: readonly (typeof testStates.$inferSelect)[],
): { state: undefined; answer: RecordRunAnswer } | null {
  const negotiated = result.run.negotiated;
  if (!isPassing(result.run.outcome) || !isRevision(negotiated)) return null;
  if (result.run.mode === 'pinned' && negotiated !== test.pinnedRevision) return null;
  if (test.mode === 'newest') {
    const revisions = new Set([...others.map((s) => s.currentRevision).filter(isRevision), negotiated]);
    if (revisions.size >= 2) return null;
  }
  const judgement = storedJudgement(test.judgement);
  const before = consensusOf(others, judgement);
  const after = consensusOf([...others, { region: result.region, consecutiveFailures: 0 }], judgement);
  return {
    state: undefined,
    answer: {
      duplicate: false,
      runId: 0,
      eraMove: null,
      stale: false,
      moved: true,
      currentRevision: negotiated,
      server: test.server,
      test: { mode: test.mode, pinnedRevision: test.pinnedRevision, depth: test.depth },
      failing: { was: false, now: false },
      surfaceChanges: [],
      consensus: {
        was: before.failing,
        now: after.failing,
        regionsFailing: after.regionsFailing,
        regionsTotal: after.regionsTotal,
        needed: after.needed,
      },
      confirmedMoves: [],
      flap: null,
      disagreement: null,
    },
  };
}

/**
 * The first runs' states, at their revision. The batch read every state of its tests under their
 * locks: a state that appeared since is a bug or another writer, and the batch is written run by run.
 */
async function makeStates(tx: Db, rows: readonly (ReturnType<typeof runRow> & { runId: number })[]): Promise<void> {
  if (rows.length === 0) return;
  const made = await tx
    .insert(testStates)
    .values(
      rows.map((r) => ({
        testId: r.testId,
        region: r.region,
        currentRevision: r.negotiated,
        lastOutcome: r.outcome,
        lastMessage: r.message,
        lastAssertion: r.assertion,
        failing: false,
        consecutiveFailures: 0,
        lastRunId: r.runId,
        lastRunAt: r.finishedAt,
        lastScheduledAt: r.scheduledAt,
      })),
    )
    .onConflictDoNothing()
    .returning({ testId: testStates.testId });
  if (made.length !== rows.length) throw new Error('a test state appeared during the batch');
}

/** Uptime's slot counts (slot-ingest.ts) for the batch's quiet runs, one row per test and bucket. */
async function countSlots(tx: Db, written: readonly { item: Item; test: TestRow }[]): Promise<void> {
  const byBucket = new Map<string, { testId: string; serverId: string; bucket: Date; executions: number }>();
  for (const { item, test } of written) {
    const bucket = slotBucket(
      new Date(item.result.scheduledAt),
      effectiveIntervalMs({ depth: test.depth as 'handshake', intervalMs: test.intervalMs }, test.serverIntervalMs),
    );
    const k = `${test.id}\u0000${bucket.getTime()}`;
    const row = byBucket.get(k) ?? { testId: test.id, serverId: test.serverId, bucket, executions: 0 };
    row.executions++;
    byBucket.set(k, row);
  }
  if (byBucket.size === 0) return;
  // Quiet runs all passed: successes grow with executions.
  const json = JSON.stringify(
    [...byBucket.values()].map((r) => ({
      test_id: r.testId,
      server_id: r.serverId,
      bucket: r.bucket.toISOString(),
      executions: r.executions,
    })),
  );
  await tx.execute(sql`
    insert into test_slots (test_id, server_id, bucket, executions, successes)
    select v.test_id, v.server_id, v.bucket, v.executions, v.executions
    from jsonb_to_recordset(${json}::jsonb) as v(test_id uuid, server_id uuid, bucket timestamptz, executions integer)
    on conflict (test_id, bucket) do update set
      executions = test_slots.executions + excluded.executions,
      successes = test_slots.successes + excluded.successes`);
}

/**
 * The quiet runs, in one statement; a run whose job is already written is left alone (a
 * redelivery). Answers each new run's id by its job id. The rows travel as one JSON parameter, as in
 * touchStates: a multi-row insert built by drizzle cost control more CPU than Postgres spends on it
 * (bench:pipeline's profile: a fifth of control's time at 1,000 runs/s). Checks, surfaces and steps
 * stay null: a quiet run is a handshake test's.
 */
async function insertRuns(tx: Db, rows: readonly ReturnType<typeof runRow>[]): Promise<Map<string, number>> {
  const json = JSON.stringify(
    rows.map((r) => ({
      job_id: r.jobId,
      test_id: r.testId,
      server_id: r.serverId,
      region: r.region,
      agent: r.agent,
      mode: r.mode,
      requested: r.requested,
      negotiated: r.negotiated,
      previous_revision: r.previousRevision,
      generation: r.generation,
      era: r.era,
      outcome: r.outcome,
      message: r.message,
      assertion: r.assertion,
      evidence: r.evidence,
      requests: r.requests,
      millis: r.millis,
      trace_id: r.traceId,
      scheduled_at: r.scheduledAt.toISOString(),
      started_at: r.startedAt.toISOString(),
      finished_at: r.finishedAt.toISOString(),
    })),
  );
  const inserted = (await tx.execute(sql`
    insert into runs (job_id, test_id, server_id, region, agent, mode, requested, negotiated, previous_revision,
      generation, era, outcome, message, assertion, evidence, requests, millis, trace_id, scheduled_at, started_at,
      finished_at)
    select v.job_id, v.test_id, v.server_id, v.region, v.agent, v.mode, v.requested, v.negotiated, v.previous_revision,
      v.generation, v.era, v.outcome, v.message, v.assertion, v.evidence, v.requests, v.millis, v.trace_id,
      v.scheduled_at, v.started_at, v.finished_at
    from jsonb_to_recordset(${json}::jsonb) as v(job_id text, test_id uuid, server_id uuid, region text, agent text,
      mode text, requested text, negotiated text, previous_revision text, generation text, era text, outcome text,
      message text, assertion jsonb, evidence jsonb, requests integer, millis integer, trace_id text,
      scheduled_at timestamptz, started_at timestamptz, finished_at timestamptz)
    on conflict (job_id, scheduled_at) do nothing
    returning id, job_id`)) as unknown as { rows: { id: string | number; job_id: string }[] };
  // bigserial: pg answers it as a string.
  return new Map(inserted.rows.map((r) => [r.job_id, Number(r.id)]));
}

/**
 * The quiet runs' states: last outcome, message, assertion, run and times; revision, failing and
 * the failure count stay as they were (the run changed none of them). One statement for the batch:
 * the rows travel as one JSON parameter, which pg and PGlite pass alike.
 */
async function touchStates(tx: Db, rows: readonly (ReturnType<typeof runRow> & { runId: number })[]): Promise<void> {
  if (rows.length === 0) return;
  const json = JSON.stringify(
    rows.map((r) => ({
      test_id: r.testId,
      region: r.region,
      outcome: r.outcome,
      message: r.message,
      assertion: r.assertion,
      run_id: r.runId,
      run_at: r.finishedAt.toISOString(),
      scheduled_at: r.scheduledAt.toISOString(),
    })),
  );
  await tx.execute(sql`
    update test_states s set
      last_outcome = v.outcome, last_message = v.message, last_assertion = v.assertion,
      last_run_id = v.run_id, last_run_at = v.run_at, last_scheduled_at = v.scheduled_at
    from jsonb_to_recordset(${json}::jsonb) as v(
      test_id uuid, region text, outcome text, message text, assertion jsonb,
      run_id bigint, run_at timestamptz, scheduled_at timestamptz)
    where s.test_id = v.test_id and s.region = v.region`);
}
