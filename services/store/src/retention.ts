// Retention: raw runs and detections are kept for a while, silent agents for a week; era moves
// and test states (the history that matters) stay. Every cutoff is on control's side of the clock
// (when a run was written, a detection recorded, a heartbeat heard), never an agent's own times: a
// skewed or hostile agent could otherwise keep its runs forever or have them pruned at once.
// Runs are partitioned by day of their slot (partitions.ts): a day whose whole range lies before the
// cutoff goes at once (drop table, no row-wise delete, no bloat); what is left past the cutoff (the
// boundary day, the default partition) is deleted row-wise by received_at as before. The slot time
// is the scheduler's (control checks it has begun), so a day dropped holds only runs of slots that old.
// A pruned run leaves no dangling reference: era_moves.run_id, test_states.last_run_id and the
// other run references become null (partitions.ts's forgetRuns, what their foreign keys' ON DELETE
// SET NULL did before runs were partitioned), and readers show such a move without a run.
// The hourly rollups (rollups.ts) go with the runs, by their hour.
// Check changes (a conformance check's every flip, which a flapping check makes many of) go with
// their run: their age is their run's, on control's clock. A check's state keeps its `since`.
// Surface changes are history that matters, like era moves: they stay (a row per change, none
// while a surface holds still), and so do the blobs they were diffed from and to (the diff view
// reads them). A blob goes when no head, no kept run and no change refers to it.
// Region disagreements are history that matters like era moves: they stay (a row per disagreement,
// none while regions agree). The uptime rollup (test_slots) is kept TEST_SLOTS_KEPT_MS, the longest
// uptime window and a day, by its bucket: the scheduler's slot, which control checks has begun.
import { and, eq, gt, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db } from './db';
import { dropRunPartitionsBefore, forgetRuns } from './partitions';
import {
  agents,
  checkChanges,
  detections,
  driftPoints,
  runRollupsHourly,
  runs,
  surfaceBlobs,
  surfaceChanges,
  surfaceHeads,
  testSlots,
} from './schema';
import { TEST_SLOTS_KEPT_MS } from './uptime';

/** How long raw runs and detections are kept unless configured otherwise (MCP_FLEET_RUN_RETENTION_DAYS). */
export const DEFAULT_RUN_RETENTION_DAYS = 30;

/**
 * How long an agent that stopped sending heartbeats stays listed. An agent's id is its host name,
 * pid and region, so every restart adds one: a week keeps a gone agent in view long enough to
 * notice and look into (a weekend, a holiday), and keeps restarts from piling up.
 */
export const AGENT_RETENTION_DAYS = 7;

const DAY_MS = 86_400_000;

export interface PruneCutoffs {
  /** Runs control wrote before this go. */
  runsReceivedBefore: Date;
  /** Detections control recorded before this go, except each server's newest. */
  detectionsBefore: Date;
  /** Agents control last heard from before this go. */
  agentsHeardBefore: Date;
  /** Uptime buckets older than this go (none when omitted). */
  testSlotsBefore?: Date;
  batchSize?: number;
}

/** The cutoffs for keeping runs and detections `retentionDays` and agents AGENT_RETENTION_DAYS, from `now`. */
export function retentionCutoffs(retentionDays: number, now = new Date()): PruneCutoffs {
  const runs = new Date(now.getTime() - retentionDays * DAY_MS);
  return {
    runsReceivedBefore: runs,
    detectionsBefore: runs,
    agentsHeardBefore: new Date(now.getTime() - AGENT_RETENTION_DAYS * DAY_MS),
    testSlotsBefore: new Date(now.getTime() - TEST_SLOTS_KEPT_MS),
  };
}

/** Prune runs, detections and agents past their cutoffs; how many of each went. */
export async function pruneHistory(
  db: Db,
  cutoffs: PruneCutoffs,
): Promise<{
  runs: number;
  rollups: number;
  driftPoints: number;
  checkChanges: number;
  surfaceBlobs: number;
  detections: number;
  agents: number;
  testSlots: number;
}> {
  const batchSize = cutoffs.batchSize;
  return {
    runs: await pruneRuns(db, { receivedBefore: cutoffs.runsReceivedBefore, batchSize }),
    rollups: await pruneRollups(db, { before: cutoffs.runsReceivedBefore, batchSize }),
    driftPoints: await pruneDriftPoints(db, { before: cutoffs.runsReceivedBefore }),
    checkChanges: await pruneCheckChanges(db, { batchSize }),
    surfaceBlobs: await pruneSurfaceBlobs(db, { batchSize }),
    detections: await pruneDetections(db, { before: cutoffs.detectionsBefore, batchSize }),
    agents: await pruneAgents(db, { heardBefore: cutoffs.agentsHeardBefore }),
    testSlots: cutoffs.testSlotsBefore ? await pruneTestSlots(db, { before: cutoffs.testSlotsBefore, batchSize }) : 0,
  };
}

/** Batches of `batchSize` (each its own short statement, so ingest never waits long) until none is left. */
async function inBatches(batchSize: number | undefined, deleteBatch: (size: number) => Promise<number>) {
  const size = Math.max(1, Math.floor(batchSize ?? 5000));
  let deleted = 0;
  for (;;) {
    const gone = await deleteBatch(size);
    deleted += gone;
    if (gone < size) return deleted;
  }
}

/**
 * Delete runs control wrote before `receivedBefore`: whole day partitions first, then the rest row
 * by row; era moves and test states pointing at them keep a null run.
 */
export async function pruneRuns(
  db: Db,
  opts: { receivedBefore: Date; batchSize?: number | undefined },
): Promise<number> {
  const dropped = await dropRunPartitionsBefore(db, opts.receivedBefore);
  const deleted = await inBatches(opts.batchSize, (size) =>
    db.transaction(async (tx) => {
      const batch = tx.select({ id: runs.id }).from(runs).where(lt(runs.receivedAt, opts.receivedBefore)).limit(size);
      const gone = await tx.delete(runs).where(inArray(runs.id, batch)).returning({ id: runs.id });
      if (gone.length > 0)
        await forgetRuns(tx, sql`select unnest(${`{${gone.map((g) => g.id).join(',')}}`}::bigint[])`);
      return gone.length;
    }),
  );
  return dropped.runs + deleted;
}

/** Delete hourly rollups of hours before `before`. */
export function pruneRollups(db: Db, opts: { before: Date; batchSize?: number | undefined }): Promise<number> {
  return inBatches(opts.batchSize, async (size) => {
    const gone = await db.execute(sql`
      delete from ${runRollupsHourly} where ctid in (
        select ctid from ${runRollupsHourly} where ${runRollupsHourly.hour} < ${opts.before.toISOString()}::timestamptz
        limit ${size}
      ) returning 1`);
    return (gone as unknown as { rows: unknown[] }).rows.length;
  });
}

/** Delete sealed drift points (drift.ts) from before `before`: no range reaches further back than the runs. */
export async function pruneDriftPoints(db: Db, opts: { before: Date }): Promise<number> {
  const gone = await db.delete(driftPoints).where(lt(driftPoints.at, opts.before)).returning({ at: driftPoints.at });
  return gone.length;
}

/**
 * Delete check changes whose run was pruned (pruneRuns set their run_id null): a change is as old
 * as the run that made it, judged by when control received that run, never by the agent's times.
 */
export function pruneCheckChanges(db: Db, opts: { batchSize?: number | undefined } = {}): Promise<number> {
  return inBatches(opts.batchSize, async (size) => {
    const batch = db.select({ id: checkChanges.id }).from(checkChanges).where(isNull(checkChanges.runId)).limit(size);
    const gone = await db
      .delete(checkChanges)
      .where(inArray(checkChanges.id, batch))
      .returning({ id: checkChanges.id });
    return gone.length;
  });
}

/**
 * Delete surface blobs nothing refers to: no head (what a server offers now), no change (the
 * history's from and to), no kept run (runs.surfaces). The runs' references are read once per
 * batch (runs.surfaces has no index: a prune is rare, a per-blob lookup would scan runs each time).
 * A blob an ingest holds (keepBlob's key-share lock) is not deleted under it: the delete waits,
 * and its foreign key from the head the ingest writes refuses it.
 */
export function pruneSurfaceBlobs(db: Db, opts: { batchSize?: number | undefined } = {}): Promise<number> {
  return inBatches(opts.batchSize, async (size) => {
    const gone = await db.execute(sql`
      with referenced as (
        select distinct e->>'hash' as hash
        from ${runs} r, jsonb_array_elements(case when jsonb_typeof(r.surfaces) = 'array' then r.surfaces else '[]'::jsonb end) e
        where r.surfaces is not null
      ), batch as (
        select b.hash from ${surfaceBlobs} b
        where not exists (select 1 from ${surfaceHeads} h where h.hash = b.hash)
          and not exists (select 1 from ${surfaceChanges} c where c.from_hash = b.hash or c.to_hash = b.hash)
          and not exists (select 1 from referenced x where x.hash = b.hash)
        limit ${size}
      )
      delete from ${surfaceBlobs} where hash in (select hash from batch) returning hash`);
    return (gone as unknown as { rows: unknown[] }).rows.length;
  });
}

/**
 * Delete detections recorded before `before`, but never a server's newest: it is what the server
 * page shows as the server's detection, however old (like a test's state, it is the current answer).
 */
export function pruneDetections(db: Db, opts: { before: Date; batchSize?: number | undefined }): Promise<number> {
  const newer = alias(detections, 'newer');
  return inBatches(opts.batchSize, async (size) => {
    const batch = db
      .select({ id: detections.id })
      .from(detections)
      .where(
        and(
          lt(detections.at, opts.before),
          sql`exists (${db
            .select({ one: sql`1` })
            .from(newer)
            .where(
              and(
                eq(newer.serverId, detections.serverId),
                or(gt(newer.at, detections.at), and(eq(newer.at, detections.at), gt(newer.id, detections.id))),
              ),
            )})`,
        ),
      )
      .limit(size);
    const gone = await db.delete(detections).where(inArray(detections.id, batch)).returning({ id: detections.id });
    return gone.length;
  });
}

/** Delete uptime buckets older than `before` (uptime.ts reads 30 days at most). */
export function pruneTestSlots(db: Db, opts: { before: Date; batchSize?: number | undefined }): Promise<number> {
  return inBatches(opts.batchSize, async (size) => {
    const gone = await db.execute(sql`
      delete from ${testSlots} where ctid in (
        select ctid from ${testSlots} where ${testSlots.bucket} < ${opts.before.toISOString()}::timestamptz limit ${size}
      ) returning 1`);
    return (gone as unknown as { rows: unknown[] }).rows.length;
  });
}

/** Forget agents control has not heard from since `heardBefore` (a run names its agent as text: nothing dangles). */
export async function pruneAgents(db: Db, opts: { heardBefore: Date }): Promise<number> {
  const gone = await db.delete(agents).where(lt(agents.receivedAt, opts.heardBefore)).returning({ id: agents.id });
  return gone.length;
}
