// Era-move confirmation and flapping (docs/regions.md), in the run's own transaction, under the
// test row's lock (ingest.ts): a raw move A→B is recorded `pending`, and becomes `confirmed` once
// its region has seen B in confirmAfter passing runs (by 'runs') or once a quorum of the test's
// regions moved A→B inside the flap window (by 'regions'). A→B→A inside the flap window is one
// flap: both moves are marked `flapping`, the second names the first (flap_of). A new move
// supersedes an older pending one of its region. Judged with the server's judgement.
import { confirmingRegions, type Judgement } from '@mcp-fleet/config';
import type { EraMove, Revision } from '@mcp-fleet/probe';
import { and, desc, eq, gte, inArray } from 'drizzle-orm';
import type { Db } from './db';
import { eraMoves } from './schema';

export interface ConfirmedMove {
  id: number;
  region: string;
  from: string;
  to: string;
  downgrade: boolean;
  eraChanged: boolean;
  by: 'runs' | 'regions';
  /** Runs of its region that saw it (by 'runs'), or regions that moved alike (by 'regions'). */
  seen: number;
}

/** A move undone inside the flap window: it went `from` → `to` at firstAt, and back to `from` now. */
export interface Flap {
  region: string;
  from: string;
  to: string;
  firstAt: Date;
}

export interface MoveContext {
  serverId: string;
  testId: string;
  region: string;
  runId: number;
  /** The run's finishedAt: when a move happened, was confirmed, or flapped. */
  at: Date;
  judgement: Pick<Judgement, 'quorum' | 'confirmAfter' | 'flapWindowMs'>;
  /** The server's regions that have a state for this test (this one included): a quorum's total. */
  regions: readonly string[];
  /**
   * Whether the run's region is one the server is probed from. A result naming another region (a
   * forged or misrouted bus message: control checks only the fleet's regions) is kept as history, a
   * raw pending move, but confirms, flaps and counts towards a quorum nothing.
   */
  judged: boolean;
}

export interface MoveOutcome {
  id: number;
  confirmedMoves: ConfirmedMove[];
  flap: Flap | null;
}

const LIVE = ['pending', 'confirmed'] as const;

/** Record a raw move A→B of this run: a flap, a pending move (maybe confirmed by a quorum of regions), or confirmed at once. */
export async function recordMove(tx: Db, ctx: MoveContext, move: EraMove): Promise<MoveOutcome> {
  const { testId, region, at, judgement } = ctx;
  const since = new Date(at.getTime() - judgement.flapWindowMs);
  const [latest] = ctx.judged
    ? await tx
        .select()
        .from(eraMoves)
        .where(and(eq(eraMoves.testId, testId), eq(eraMoves.region, region)))
        .orderBy(desc(eraMoves.at), desc(eraMoves.id))
        .limit(1)
    : [];
  // Back to where it was, inside the window, from a move that still counted: one flap, not two moves.
  const flapOf =
    latest &&
    latest.at >= since &&
    latest.fromRevision === move.to &&
    latest.toRevision === move.from &&
    (LIVE as readonly string[]).includes(latest.state)
      ? latest
      : null;
  if (flapOf) await tx.update(eraMoves).set({ state: 'flapping' }).where(eq(eraMoves.id, flapOf.id));
  // Whatever was still waiting in this region is overtaken by the new move.
  await tx
    .update(eraMoves)
    .set({ state: 'superseded' })
    .where(and(eq(eraMoves.testId, testId), eq(eraMoves.region, region), eq(eraMoves.state, 'pending')));

  const atOnce = !flapOf && ctx.judged && judgement.confirmAfter <= 1;
  const [row] = await tx
    .insert(eraMoves)
    .values({
      serverId: ctx.serverId,
      testId,
      region,
      runId: ctx.runId,
      fromRevision: move.from,
      toRevision: move.to,
      downgrade: move.downgrade,
      eraChanged: move.eraChanged,
      at,
      state: flapOf ? 'flapping' : atOnce ? 'confirmed' : 'pending',
      seenRuns: 1,
      confirmedAt: atOnce ? at : null,
      confirmedBy: atOnce ? 'runs' : null,
      flapOf: flapOf?.id ?? null,
    })
    .returning({ id: eraMoves.id });
  const id = row!.id;
  if (flapOf)
    return {
      id,
      confirmedMoves: [],
      flap: { region, from: flapOf.fromRevision, to: flapOf.toRevision, firstAt: flapOf.at },
    };
  if (atOnce) return { id, confirmedMoves: [{ id, region, ...move, by: 'runs', seen: 1 }], flap: null };
  if (!ctx.judged) return { id, confirmedMoves: [], flap: null };
  return { id, confirmedMoves: await confirmByRegions(tx, ctx, move, since), flap: null };
}

/**
 * A quorum of regions: the test's regions whose latest move inside the window is this same A→B and
 * still counts (pending or confirmed, this one included). Enough of them confirm every pending one.
 */
async function confirmByRegions(tx: Db, ctx: MoveContext, move: EraMove, since: Date): Promise<ConfirmedMove[]> {
  const needed = confirmingRegions(ctx.judgement.quorum, ctx.regions.length);
  if (ctx.regions.length < needed) return [];
  const latest = await tx
    .selectDistinctOn([eraMoves.region])
    .from(eraMoves)
    .where(and(eq(eraMoves.testId, ctx.testId), inArray(eraMoves.region, [...ctx.regions]), gte(eraMoves.at, since)))
    .orderBy(eraMoves.region, desc(eraMoves.at), desc(eraMoves.id));
  const alike = latest.filter(
    (m) => m.fromRevision === move.from && m.toRevision === move.to && (LIVE as readonly string[]).includes(m.state),
  );
  if (alike.length < needed) return [];
  const pending = alike.filter((m) => m.state === 'pending').map((m) => m.id);
  if (pending.length === 0) return [];
  const done = await tx
    .update(eraMoves)
    .set({ state: 'confirmed', confirmedAt: ctx.at, confirmedBy: 'regions' })
    .where(and(inArray(eraMoves.id, pending), eq(eraMoves.state, 'pending')))
    .returning();
  return done
    .map((m) => ({
      id: m.id,
      region: m.region,
      from: m.fromRevision,
      to: m.toRevision,
      downgrade: m.downgrade,
      eraChanged: m.eraChanged,
      by: 'regions' as const,
      seen: alike.length,
    }))
    .sort((a, b) => a.region.localeCompare(b.region));
}

/**
 * A passing run that made no move and negotiated the revision its region's pending move went to
 * counts one more run for it; confirmAfter runs confirm it. A failed run (a timeout, a failed pin)
 * is not called here: it neither counts towards the move nor resets the count — an outage says
 * nothing about which revision the server speaks.
 */
export async function seeRun(tx: Db, ctx: MoveContext, negotiated: Revision): Promise<ConfirmedMove[]> {
  if (!ctx.judged) return [];
  const [pending] = await tx
    .select()
    .from(eraMoves)
    .where(and(eq(eraMoves.testId, ctx.testId), eq(eraMoves.region, ctx.region), eq(eraMoves.state, 'pending')))
    .orderBy(desc(eraMoves.at), desc(eraMoves.id))
    .limit(1);
  if (!pending || pending.toRevision !== negotiated) return [];
  const seen = pending.seenRuns + 1;
  const confirmed = seen >= ctx.judgement.confirmAfter;
  await tx
    .update(eraMoves)
    .set(
      confirmed ? { seenRuns: seen, state: 'confirmed', confirmedAt: ctx.at, confirmedBy: 'runs' } : { seenRuns: seen },
    )
    .where(eq(eraMoves.id, pending.id));
  if (!confirmed) return [];
  return [
    {
      id: pending.id,
      region: pending.region,
      from: pending.fromRevision,
      to: pending.toRevision,
      downgrade: pending.downgrade,
      eraChanged: pending.eraChanged,
      by: 'runs',
      seen,
    },
  ];
}
