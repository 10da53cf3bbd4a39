// Results ingest: a run (or detection) is written once per job, however often it is delivered,
// and the test's state in that region moves in the same transaction, era move included. A result
// comes off the bus, a trust boundary: its test must be its server's (a detection's server must
// exist), or nothing is written.
// Runs of one test take turns: the transaction first locks the test row (FOR NO KEY UPDATE), so
// runs from different regions ingest one after the other (a disagreement and a quorum of regions
// read the other regions' rows), and only then the region's state row. Always test row, then state
// row: no two ingests wait on each other in opposite orders. The lock does not block what only
// references the test (a state's or check's foreign key takes KEY SHARE).
import { effectiveIntervalMs, storedJudgement } from '@mcp-fleet/config';
import {
  type Assertion,
  type EraMove,
  eraMove,
  type HandshakeRun,
  isPassing,
  isRevision,
  type Revision,
} from '@mcp-fleet/probe';
import { and, eq, isNull, ne } from 'drizzle-orm';
import { type ConformanceReport, fileChecks } from './check-states';
import { consensusOf } from './consensus';
import type { Db } from './db';
import { type DisagreementChange, updateDisagreement } from './disagreement-ingest';
import { type ConfirmedMove, type Flap, type MoveContext, recordMove, seeRun } from './era-confirmation';
import { pgCode, UnknownRecordError, withoutParams } from './errors';
import { rollUpRuns } from './rollups';
import { detections, runs, servers, testStates, tests } from './schema';
import { countSlot } from './slot-ingest';
import {
  fileSurfaces,
  type RecordedSurfaceChange,
  type SurfaceReport,
  surfaceRefs,
  verifySurfaces,
} from './surface-ingest';

/** Run fields a validated bus result carries as plain strings (probe's HandshakeRun narrows them to its tables). */
type ReportedAsText = 'requested' | 'negotiated' | 'previousRevision' | 'generation' | 'era';

/**
 * What a handshake run reports, derived from probe's `HandshakeRun` so the shape is written once:
 * a probe's run fits, and so does the run of a validated bus result (its strings widened here).
 */
export type RunReport = Pick<HandshakeRun, 'mode' | 'message' | 'requests' | 'millis'> & {
  [K in ReportedAsText]: string | null;
} & {
  outcome: string;
  assertion: (Omit<Assertion, 'name'> & { name: string }) | null;
  evidence: unknown;
};

export interface RunResult {
  jobId: string;
  testId: string;
  serverId: string;
  region: string;
  agent: string;
  scheduledAt: Date | string;
  startedAt: Date | string;
  finishedAt: Date | string;
  traceId: string | null;
  run: RunReport;
  /** A conformance-depth run's checks (null or omitted: a handshake-depth run, or one that did not connect). */
  conformance?: ConformanceReport | null;
  /** The surfaces a conformance- or surface-depth run read (filed only for such a test). */
  surfaces?: readonly SurfaceReport[];
  /** A script-depth run's steps (kept only for a script test). */
  script?: { steps: readonly unknown[] } | null;
}

export type { ConfirmedMove, DisagreementChange, Flap };

/** The test's consensus state (consensus.ts) under its server's judgement, before and after a run. */
export interface ConsensusChange {
  was: boolean;
  now: boolean;
  /** After the run: regions failing (failAfter runs in a row), regions with a state, failing regions it takes. */
  regionsFailing: number;
  regionsTotal: number;
  needed: number;
}

export type RecordRunAnswer =
  | { duplicate: true }
  | {
      duplicate: false;
      runId: number;
      eraMove: EraMove | null;
      /**
       * The run made its region state or changed its revision, failing or failure count: what reads
       * the states (control's gauges) must read again. A run that only touched the last-run fields,
       * or a stale one, did not.
       */
      moved: boolean;
      /** The run's slot is older than the state's last run (a late redelivery): kept, but it moved nothing. */
      stale: boolean;
      /** The test's current revision in the region after this run (unchanged by a stale run or a failed pin). */
      currentRevision: Revision | null;
      /** The server's name and the test's kind, for whoever tells the operator what changed. */
      server: string;
      test: { mode: 'newest' | 'pinned'; pinnedRevision: string | null; depth: string };
      /** Whether the test was failing in the region before this run, and is after it (a stale run moves neither). */
      failing: { was: boolean; now: boolean };
      /** The surface changes this run recorded (none for a first sight, an unchanged surface or a stale run). */
      surfaceChanges: RecordedSurfaceChange[];
      /** The test's consensus across the server's regions before and after this run (a stale run moves neither). */
      consensus: ConsensusChange;
      /** Every move this run confirmed, in its region or (a quorum of regions) in others. */
      confirmedMoves: ConfirmedMove[];
      /** This run's move undid its region's last one inside the flap window: one flap. */
      flap: Flap | null;
      /** The test's region disagreement, when this run opened, kept or ended one (newest-supported tests only). */
      disagreement: DisagreementChange | null;
    };

export function recordRun(db: Db, result: RunResult): Promise<RecordRunAnswer> {
  // Refused before the transaction: a forged or malformed snapshot writes nothing, not even the run.
  let verified: VerifiedSurfaces;
  try {
    verified = verifySurfaces(result.surfaces ?? []);
  } catch (err) {
    return Promise.reject(err);
  }
  return db
    .transaction((tx) => recordRunIn(tx, result, verified))
    .catch((err: unknown) => {
      throw ingestError(err, result);
    });
}

export type VerifiedSurfaces = ReturnType<typeof verifySurfaces>;

/** The runs row a result makes (its checks, surfaces and steps are the test's business: added by the caller). */
export function runRow(result: RunResult) {
  const { run } = result;
  return {
    jobId: result.jobId,
    testId: result.testId,
    serverId: result.serverId,
    region: result.region,
    agent: result.agent,
    mode: run.mode,
    requested: run.requested,
    negotiated: run.negotiated,
    previousRevision: run.previousRevision,
    generation: run.generation,
    era: run.era,
    outcome: run.outcome,
    message: run.message,
    assertion: run.assertion,
    evidence: run.evidence ?? null,
    requests: Math.round(run.requests),
    millis: Math.round(run.millis),
    traceId: result.traceId,
    scheduledAt: toDate(result.scheduledAt, 'scheduledAt'),
    startedAt: toDate(result.startedAt, 'startedAt'),
    finishedAt: toDate(result.finishedAt, 'finishedAt'),
  };
}

/** What judging a run needs of its test and server (recordRun's and a batch's one read of them). */
export const TEST_FOR_INGEST = {
  id: tests.id,
  serverId: tests.serverId,
  mode: tests.mode,
  pinnedRevision: tests.pinnedRevision,
  depth: tests.depth,
  intervalMs: tests.intervalMs,
  server: servers.name,
  serverRegions: servers.regions,
  serverIntervalMs: servers.intervalMs,
  judgement: servers.judgement,
};

/** recordRun's work inside a transaction it does not own (recordRun's or a batch's). */
export async function recordRunIn(tx: Db, result: RunResult, verified: VerifiedSurfaces): Promise<RecordRunAnswer> {
  const { run } = result;
  const values = runRow(result);
  const { finishedAt, scheduledAt } = values;
  const key = and(eq(testStates.testId, result.testId), eq(testStates.region, result.region));
  // The result names both; a test of another server would file its run, state and era moves
  // under the wrong server. Rejected before anything is written. The test row is locked first
  // (see the top): runs of this test, whatever their region, take turns from here on.
  const [test] = await tx
    .select(TEST_FOR_INGEST)
    .from(tests)
    .innerJoin(servers, eq(servers.id, tests.serverId))
    .where(eq(tests.id, result.testId))
    .for('no key update', { of: tests });
  if (!test) throw new UnknownRecordError(`no test ${result.testId}`, '23503');
  const told = {
    server: test.server,
    test: { mode: test.mode, pinnedRevision: test.pinnedRevision, depth: test.depth },
  };
  if (test.serverId !== result.serverId)
    throw new UnknownRecordError(`test ${result.testId} is not a test of server ${result.serverId}`, '23503');
  const judgement = storedJudgement(test.judgement);
  // A result names its region, and control checks it against the fleet's regions only: a region
  // the server is not probed from is kept (its run and state) but judges nothing here — no
  // consensus, no confirmation, no flap, no disagreement, no uptime.
  const ownRegion = (region: string) => !test.serverRegions || test.serverRegions.includes(region);
  const judged = ownRegion(result.region);

  // A second delivery of the same job waits here for the first to commit, then inserts nothing.
  // Checks are filed only for a conformance test: a handshake test's run carrying some (an agent
  // that is wrong or hostile) does not grow check states no one asked for.
  const conformance = test.depth === 'conformance' ? (result.conformance ?? null) : null;
  // Likewise surfaces for a conformance or surface test, steps for a script test.
  const surfaces = test.depth === 'conformance' || test.depth === 'surface' ? verified : [];
  const script = test.depth === 'script' ? (result.script?.steps ?? null) : null;
  const [inserted] = await tx
    .insert(runs)
    .values({ ...values, checks: conformance?.checks ?? null, surfaces: surfaceRefs(surfaces), script })
    // A job's result carries its slot time (the partition key): (job id, slot) is one run.
    .onConflictDoNothing({ target: [runs.jobId, runs.scheduledAt] })
    .returning({ id: runs.id });
  if (!inserted) return { duplicate: true };
  const runId = inserted.id;
  const passing = isPassing(run.outcome);
  // Its hour's rollup, only for a run newly written: a redelivery returned above.
  await rollUpRuns(tx, [values]);

  // Uptime counts every execution once (a duplicate returned above), a late one too: it ran.
  if (judged)
    await countSlot(tx, {
      testId: result.testId,
      serverId: result.serverId,
      scheduledAt,
      intervalMs: effectiveIntervalMs(test, test.serverIntervalMs),
      passing,
    });

  // The state row orders runs of one test in one region (after the test row: see the top).
  let [state] = await tx.select().from(testStates).where(key).for('update');
  const firstInRegion = !state;
  if (!state) {
    await tx.insert(testStates).values({ testId: result.testId, region: result.region }).onConflictDoNothing();
    [state] = await tx.select().from(testStates).where(key).for('update');
  }
  if (!state) throw new Error(`test state of ${result.testId} in ${result.region} vanished`);

  // The other regions' states, as they stand (the test row's lock keeps them still): the consensus
  // before this run, and a quorum's total.
  const others = (
    await tx
      .select({ region: testStates.region, consecutiveFailures: testStates.consecutiveFailures })
      .from(testStates)
      .where(and(eq(testStates.testId, result.testId), ne(testStates.region, result.region)))
  ).filter((s) => ownRegion(s.region));
  const here = (consecutiveFailures: number) =>
    judged ? [...others, { region: result.region, consecutiveFailures }] : others;
  const before = consensusOf(firstInRegion ? others : here(state.consecutiveFailures), judgement);
  const consensusAfter = (consecutiveFailures: number): ConsensusChange => {
    const after = consensusOf(here(consecutiveFailures), judgement);
    return {
      was: before.failing,
      now: after.failing,
      regionsFailing: after.regionsFailing,
      regionsTotal: after.regionsTotal,
      needed: after.needed,
    };
  };
  const unmoved = { confirmedMoves: [], flap: null, disagreement: null };

  // Ordered by the scheduler's clock, not the agents': a redelivered older slot moves nothing.
  const stateRevision = isRevision(state.currentRevision) ? state.currentRevision : null;
  const surfaceInput = {
    serverId: result.serverId,
    testId: result.testId,
    region: result.region,
    runId,
    at: finishedAt,
    surfaces,
  };
  if (state.lastScheduledAt && scheduledAt < state.lastScheduledAt) {
    const failing = { was: state.failing, now: state.failing };
    // Its blobs are stored (its run refers to them); the heads stay where newer runs put them.
    await fileSurfaces(tx, { ...surfaceInput, stale: true });
    // Nor does it count towards a consecutive failure, a confirmation or a disagreement.
    return {
      duplicate: false,
      runId,
      eraMove: null,
      stale: true,
      moved: false,
      currentRevision: stateRevision,
      ...told,
      failing,
      surfaceChanges: [],
      consensus: consensusAfter(state.consecutiveFailures),
      ...unmoved,
    };
  }

  // What the test speaks now. A pinned test speaks its pin or fails: a failed pin's negotiated
  // revision is the server's counter-offer (its assertion's actual), not a move — as on the
  // agent, whose mcp_era_moves_total counts only newest-supported runs.
  const failedPin = run.mode === 'pinned' && !passing;
  const negotiated = isRevision(run.negotiated) && !failedPin ? run.negotiated : null;
  const current = stateRevision;
  const seen = eraMove(current, negotiated);
  // Moves are one test's: a conformance, surface or script test beside a live handshake test of
  // the same revision choice sees the same moves, and the handshake test records them, confirms
  // them and compares regions, so on-call reads each move (and each disagreement) once.
  const twin =
    test.depth !== 'handshake'
      ? await tx
          .select({ id: tests.id })
          .from(tests)
          .where(
            and(
              eq(tests.serverId, test.serverId),
              eq(tests.depth, 'handshake'),
              eq(tests.mode, test.mode),
              test.pinnedRevision === null
                ? isNull(tests.pinnedRevision)
                : eq(tests.pinnedRevision, test.pinnedRevision),
              isNull(tests.retiredAt),
            ),
          )
          .limit(1)
      : [];
  const recordsMoves = twin.length === 0;
  const move = recordsMoves ? seen : null;
  const moveContext: MoveContext = {
    serverId: result.serverId,
    testId: result.testId,
    region: result.region,
    runId,
    at: finishedAt,
    judgement,
    regions: [...others.map((s) => s.region), ...(judged ? [result.region] : [])],
    judged,
  };
  let confirmedMoves: ConfirmedMove[] = [];
  let flap: Flap | null = null;
  if (move) ({ confirmedMoves, flap } = await recordMove(tx, moveContext, move));
  // A run that stayed where its region's pending move went counts towards confirming it (a
  // passing run only: `negotiated` is null for a failed pin, and an outage counts nothing).
  else if (recordsMoves && passing && negotiated) confirmedMoves = await seeRun(tx, moveContext, negotiated);

  if (conformance)
    await fileChecks(tx, {
      testId: result.testId,
      serverId: result.serverId,
      region: result.region,
      runId,
      at: finishedAt,
      era: conformance.protocol.era,
      checks: conformance.checks,
    });

  const surfaceChanges = await fileSurfaces(tx, { ...surfaceInput, stale: false });

  const nowFailing = !passing;
  // Failed runs in a row (Checkly's N in a row): a pass starts over.
  const consecutiveFailures = passing ? 0 : state.consecutiveFailures + 1;
  await tx
    .update(testStates)
    .set({
      currentRevision: negotiated ?? state.currentRevision,
      lastOutcome: run.outcome,
      lastMessage: run.message,
      lastAssertion: run.assertion,
      failing: nowFailing,
      consecutiveFailures,
      lastRunId: runId,
      lastRunAt: finishedAt,
      lastScheduledAt: scheduledAt,
    })
    .where(key);

  // Regions negotiating different revisions: only a newest-supported test can (a pin speaks its pin).
  const disagreement =
    test.mode === 'newest' && recordsMoves && judged
      ? await updateDisagreement(tx, {
          serverId: result.serverId,
          testId: result.testId,
          at: finishedAt,
          regions: test.serverRegions,
        })
      : null;
  return {
    duplicate: false,
    runId,
    eraMove: move,
    stale: false,
    moved:
      firstInRegion ||
      (negotiated ?? state.currentRevision) !== state.currentRevision ||
      nowFailing !== state.failing ||
      consecutiveFailures !== state.consecutiveFailures,
    currentRevision: negotiated ?? current,
    ...told,
    failing: { was: state.failing, now: nowFailing },
    surfaceChanges,
    consensus: consensusAfter(consecutiveFailures),
    confirmedMoves,
    flap,
    disagreement,
  };
}

export interface DetectionResult {
  /** null for detections asked for through the API (no job, nothing to dedupe). */
  jobId: string | null;
  serverId: string;
  region: string | null;
  /** `Detection` from @mcp-fleet/probe (or a bus result's); stored whole. */
  detection: { outcome: string; newestSupported: string | null };
  at?: Date | string | undefined;
}

export async function recordDetection(
  db: Db,
  input: DetectionResult,
): Promise<{ duplicate: true } | { duplicate: false; detectionId: number }> {
  try {
    // From the bus (a trust boundary) or the API: a detection of a server the database does not know is refused.
    const [server] = await db.select({ id: servers.id }).from(servers).where(eq(servers.id, input.serverId));
    if (!server) throw new UnknownRecordError(`no server ${input.serverId}`, '23503');
    const [row] = await db
      .insert(detections)
      .values({
        jobId: input.jobId,
        serverId: input.serverId,
        region: input.region,
        outcome: input.detection.outcome,
        newestSupported: input.detection.newestSupported,
        result: input.detection,
        at: input.at === undefined ? new Date() : toDate(input.at, 'at'),
      })
      .onConflictDoNothing({ target: detections.jobId })
      .returning({ id: detections.id });
    return row ? { duplicate: false, detectionId: row.id } : { duplicate: true };
  } catch (err) {
    if (err instanceof UnknownRecordError) throw err;
    const code = pgCode(err);
    if (code === '22P02') throw new UnknownRecordError(`not a server id: ${input.serverId}`, code);
    throw withoutParams(err);
  }
}

export function toDate(value: Date | string, field: string): Date {
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) throw new Error(`${field} is not a time: ${JSON.stringify(value)}`);
  return d;
}

export function ingestError(err: unknown, result: RunResult): Error {
  if (err instanceof UnknownRecordError) return err;
  const code = pgCode(err);
  // The state's foreign key found no test.
  if (code === '23503') return new UnknownRecordError(`no test ${result.testId}`, code);
  if (code === '22P02')
    return new UnknownRecordError(`not a test/server id: ${result.testId}, ${result.serverId}`, code);
  return withoutParams(err);
}
