// Results ingest: write each run once (idempotent by job id), move the test's current revision,
// record era moves, and ack only after the database commit. Runs are written a batch at a time
// (group-commit.ts: one transaction for many results, as many as arrived while the last batch was
// being written), each with its own answer and its own error. A database that is away makes
// results wait in the bus (nak with backoff); a result the database can never take is rejected.
// Results come off the bus, a trust boundary: one from a region that is not the fleet's, whose job
// id is not the job id of what it claims, or whose test is not its server's (store checks that, and
// that a detection's server exists), is rejected — terminated as poison, counted, never written and
// never retried. A second result of a job (a redelivery, a publish retried, a job run twice: the bus
// does not deduplicate results) writes nothing and is counted `duplicate`.
import { type Bus, type Delivery, nakDelayMs, type Result, type Subscription } from '@mcp-fleet/bus';
import { revisionLabel } from '@mcp-fleet/bus/metrics';
import { isRevision, type Revision } from '@mcp-fleet/probe';
import {
  type ConfirmedMoveChange,
  type EventLog,
  type RunChange,
  tellConfirmedMoves,
  tellConsensus,
  tellDisagreement,
  tellFlap,
  tellRun,
  tellSurfaceChanges,
} from './events';
import { GroupCommit, type Settled } from './group-commit';
import type { ControlMetrics } from './metrics';
import { detectionJobId, handshakeJobId } from './slots';

export type RecordedRun =
  | { duplicate: true }
  | (RunChange & {
      duplicate: false;
      /** From an older slot than the test's last run in the region: kept, but it moved nothing. */
      stale: boolean;
      /** The run made its region state, or changed its revision, failing or failure count (store's). */
      moved?: boolean;
      /** The test's current revision in the region after the run, as the store has it. */
      currentRevision: string | null;
      /** The surface changes the run recorded (store's RecordedSurfaceChange). */
      surfaceChanges?: readonly { severity: string; kind: string; name: string; message: string; era?: string }[];
      /** The moves the run confirmed, in any region (store's ConfirmedMove). */
      confirmedMoves?: readonly ConfirmedMoveChange[];
      /** The run's move undid its region's last one inside the flap window. */
      flap?: { region: string; from: string; to: string; firstAt: Date | string } | null;
      /** The test's region disagreement, when the run opened, kept or ended one. */
      disagreement?: {
        started: boolean;
        ended: boolean;
        revisions: Record<string, string>;
        startedAt: Date | string;
        endedAt: Date | string | null;
      } | null;
      /** The test's consensus across its server's regions, before and after the run. */
      consensus?: { was: boolean; now: boolean; regionsFailing: number; regionsTotal: number; needed: number };
    });

/** One run as ingest hands it to the store. */
export interface RunInput {
  jobId: string;
  testId: string;
  serverId: string;
  region: string;
  agent: string;
  scheduledAt: Date;
  startedAt: Date;
  finishedAt: Date;
  traceId: string | null;
  run: NonNullable<Result['run']>;
  /** A conformance-depth run's checks (filed only for a conformance test: the store judges). */
  conformance: Result['conformance'];
  /** The surfaces a conformance or surface run read (the store verifies and files them). */
  surfaces: Result['surfaces'];
  /** A script run's steps (kept only for a script test). */
  script: Result['script'];
}

/** What ingest needs from the store. */
export interface IngestStore {
  /** Many runs in one transaction, an answer (or an error) for each, in order (store's recordRuns). */
  recordRuns(inputs: RunInput[]): Promise<Settled<RecordedRun>[]>;
  recordDetection(input: {
    jobId: string | null;
    serverId: string;
    region: string | null;
    detection: NonNullable<Result['detection']>;
  }): Promise<{ duplicate: boolean }>;
}

export interface IngestOptions {
  bus: Bus;
  store: IngestStore;
  metrics: ControlMetrics;
  /** Results in flight at once (taken from the bus, not yet acked): what a batch can gather. */
  concurrency?: number;
  /** Most runs in one transaction, and transactions at once (INGEST_DEFAULTS). */
  maxBatch?: number;
  writers?: number;
  /** The fleet's regions now: a result from any other is rejected. */
  regions: () => readonly string[];
  /**
   * Told of every run that moved its test's state (not a stale one), with the test's current
   * revision after it, so the scheduler's view of current revisions follows the store's.
   */
  onRun?: (testId: string, region: string, current: Revision) => void;
  /**
   * Told when a written run changed something control's state gauges show (a state made or moved,
   * a move, a disagreement, a conformance test's checks): they read its server again (fleet-gauges.ts).
   */
  onMoved?: (serverId: string) => void;
  /** Rejections and retries; and one info line per change the operator cares about (events.ts). */
  log: EventLog & { warn: (obj: object, msg: string) => void; error: (obj: object, msg: string) => void };
}

/** Postgres error classes that mean the row itself is wrong (data, integrity): retrying cannot help. */
const PERMANENT_SQLSTATE = /^(22|23)/;

/** The job id the scheduler gives what a result claims to be (undefined: a handshake without a test, rejected below). */
/** How far ahead of control's clock a result's slot may be (another control's clock, an agent's tolerance). */
export const SLOT_CLOCK_SKEW_MS = 60_000;

function ownJobId(r: Result): string | undefined {
  if (r.kind === 'detection') return detectionJobId(r.serverId, r.region, r.slot);
  return r.testId ? handshakeJobId(r.testId, r.region, r.slot) : undefined;
}

/**
 * Measured with `npm run bench:ingest` (README, performance): batches of 64–128 runs, two to four at
 * a time, write several times the runs per second of one transaction per run; a batch of 128 still
 * commits well inside the freshness goal. Four writers: the runs that move something (a fleet's first
 * runs, churn) are written one by one inside a batch, and more transactions spread them over the cores.
 */
export const INGEST_DEFAULTS = { concurrency: 512, maxBatch: 128, writers: 4 } as const;

export function startIngest(opts: IngestOptions): Subscription {
  const runs = new GroupCommit<RunInput, RecordedRun>((inputs) => opts.store.recordRuns(inputs), {
    maxBatch: opts.maxBatch ?? INGEST_DEFAULTS.maxBatch,
    writers: opts.writers ?? INGEST_DEFAULTS.writers,
    onBatch: (size) => opts.metrics.ingestBatch.observe(size),
  });
  return opts.bus.consumeResults((d) => ingestOne(d, opts, runs), {
    concurrency: opts.concurrency ?? INGEST_DEFAULTS.concurrency,
  });
}

async function ingestOne(
  d: Delivery<Result>,
  opts: IngestOptions,
  runs: GroupCommit<RunInput, RecordedRun>,
): Promise<void> {
  const r = d.value;
  const reject = async (reason: string) => {
    opts.metrics.ingest.inc({ kind: r.kind, result: 'rejected' });
    opts.log.error({ jobId: r.jobId, region: r.region, agent: r.agent, reason }, 'result rejected');
    await d.term(reason);
  };
  // The bus validated the message's shape; whether it may be true is for us to judge.
  if (!opts.regions().includes(r.region)) {
    await reject(`region ${r.region} is not one of the fleet's regions`);
    return;
  }
  // The job id is the idempotency key (runs.job_id, detections.job_id are unique): a result under
  // another job's id would take that job's place, and the real result would be dropped as its
  // duplicate. Job ids are predictable, so an agent of one region could otherwise blind another
  // region's run of the same test; the id must be the one its own test (or server), region and slot make.
  const jobId = ownJobId(r);
  if (jobId !== undefined && r.jobId !== jobId) {
    await reject(`job id ${r.jobId} is not its ${r.kind}'s own (${jobId})`);
    return;
  }
  // The slot orders runs (the store keeps the newest scheduledAt): a result claiming a slot that has
  // not begun, or a scheduledAt that is not its slot's, would make every later honest run look stale
  // or take a future job's id before the real run. The scheduler sets scheduledAt = its slot and
  // publishes a slot once it has begun; SLOT_CLOCK_SKEW_MS leaves room for clocks that disagree.
  if (new Date(r.scheduledAt).getTime() !== r.slot) {
    await reject(`scheduledAt ${r.scheduledAt} is not its slot's (${r.slot})`);
    return;
  }
  if (r.slot > Date.now() + SLOT_CLOCK_SKEW_MS) {
    await reject(`slot ${new Date(r.slot).toISOString()} has not begun`);
    return;
  }
  try {
    if (r.kind === 'handshake' && r.run && r.testId) {
      const out = await runs.add({
        jobId: r.jobId,
        testId: r.testId,
        serverId: r.serverId,
        region: r.region,
        agent: r.agent,
        scheduledAt: new Date(r.scheduledAt),
        startedAt: new Date(r.startedAt),
        finishedAt: new Date(r.finishedAt),
        traceId: r.traceId,
        run: r.run,
        conformance: r.conformance ?? null,
        surfaces: r.surfaces ?? [],
        script: r.script ?? null,
      });
      opts.metrics.ingest.inc({ kind: r.kind, result: out.duplicate ? 'duplicate' : 'written' });
      if (!out.duplicate && out.eraMove)
        opts.metrics.moves.inc({ from_version: out.eraMove.from, to_version: out.eraMove.to, region: r.region });
      if (!out.duplicate) {
        for (const c of out.surfaceChanges ?? [])
          opts.metrics.surfaceChanges.inc({ severity: c.severity, kind: c.kind, region: r.region });
        tellSurfaceChanges(opts.log, r.region, out.server, out.surfaceChanges ?? []);
      }
      // Told once, when the database has it: a duplicate wrote nothing and a stale run moved nothing.
      if (!out.duplicate && !out.stale) {
        if (movedGauges(out)) opts.onMoved?.(r.serverId);
        tellRun(opts.log, r.region, out, r.run);
        tellJudgement(opts, out, new Date(r.finishedAt));
      }
      // A late result (an older slot) moved nothing in the store, and must not move the next job's
      // current revision either: that would make a false era move or downgrade in the next run.
      if (!out.duplicate && !out.stale && isRevision(out.currentRevision))
        opts.onRun?.(r.testId, r.region, out.currentRevision);
    } else if (r.kind === 'detection' && r.detection) {
      const out = await opts.store.recordDetection({
        jobId: r.jobId,
        serverId: r.serverId,
        region: r.region,
        detection: r.detection,
      });
      opts.metrics.ingest.inc({ kind: r.kind, result: out.duplicate ? 'duplicate' : 'written' });
    } else {
      await reject('a handshake result without a test id');
      return;
    }
    await d.ack();
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code ?? '';
    if (PERMANENT_SQLSTATE.test(code)) {
      // An unknown test or server, a test of another server, a value the database cannot hold.
      await reject(`database rejected the result (${code}): ${(err as Error).message}`);
      return;
    }
    opts.metrics.ingest.inc({ kind: r.kind, result: 'retried' });
    opts.log.warn(
      { jobId: r.jobId, err: (err as Error).message, redeliveries: d.redeliveries },
      'ingest failed; the result waits in the bus',
    );
    await d.nak(nakDelayMs(d.redeliveries));
  }
}

/** Whether a written run changed what control's state gauges show. */
function movedGauges(out: RecordedRun & { duplicate: false }): boolean {
  return Boolean(
    out.moved ||
      out.eraMove ||
      out.confirmedMoves?.length ||
      out.flap ||
      out.disagreement ||
      out.surfaceChanges?.length ||
      out.test.depth === 'conformance',
  );
}

/**
 * What a run changed across regions (docs/regions.md): confirmed moves and flaps are counted
 * (mcp_era_moves_confirmed_total, mcp_era_flaps_total: what dashboards and alerts use, the raw
 * moves stay in mcp_ingest_era_moves_total) and told; a disagreement opened or ended and the test's
 * consensus turning are told.
 */
function tellJudgement(opts: IngestOptions, out: RecordedRun & { duplicate: false }, at: Date): void {
  const server = out.server;
  for (const m of out.confirmedMoves ?? [])
    opts.metrics.movesConfirmed.inc({
      server,
      from_version: revisionLabel(m.from),
      to_version: revisionLabel(m.to),
      region: m.region,
    });
  if (out.confirmedMoves?.length) tellConfirmedMoves(opts.log, server, out.confirmedMoves);
  if (out.flap) {
    opts.metrics.flaps.inc({ server, region: out.flap.region });
    tellFlap(opts.log, server, out.flap, at);
  }
  if (out.disagreement) tellDisagreement(opts.log, server, out.disagreement, at);
  if (out.consensus) tellConsensus(opts.log, server, out.test, out.consensus);
}
