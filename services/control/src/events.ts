// What control tells the operator: one log line per state change someone on call cares about,
// each with a stable `event` field for whoever searches the logs (and a sentence for whoever reads
// them): an era move or downgrade, a pinned test failing or recovering, a server's handshakes
// failing or recovering, a server created, revived (a retired name applied again) or retired. Only changes are told: a test that keeps
// failing says so once, and a restart says nothing new (the state is in the database).
// Across regions (docs/regions.md): a raw era move is told as it is seen, unconfirmed; a confirmed
// move, a flap, a region disagreement starting or ending, and a test's consensus (a quorum of its
// regions) failing or recovering are told once each. Fields stay bounded: names, regions, revisions, counts.
import type { Result } from '@mcp-fleet/bus';
import { type EraMove, revisionInfo } from '@mcp-fleet/probe';
import { disagreementText, spanText } from '@mcp-fleet/store';

export type OperatorEvent =
  | 'era_move'
  | 'downgrade'
  | 'pin_failing'
  | 'pin_recovered'
  | 'handshake_failing'
  | 'handshake_recovered'
  | 'server_created'
  | 'server_revived'
  | 'server_retired'
  | 'surface_breaking_change'
  | 'era_move_confirmed'
  | 'era_flapping'
  | 'region_disagreement_started'
  | 'region_disagreement_ended'
  | 'test_consensus_failing'
  | 'test_consensus_recovered';

export interface EventLog {
  info: (fields: { event: OperatorEvent } & Record<string, unknown>, msg: string) => void;
}

/** What the store said a written run changed (ingest's RecordedRun, not a duplicate or stale one). */
export interface RunChange {
  server: string;
  test: { mode: 'newest' | 'pinned'; pinnedRevision: string | null; depth?: string };
  eraMove: EraMove | null;
  failing: { was: boolean; now: boolean };
}

/** How much of a run's message (the probe's sentence, bounded and redacted) a line carries. */
const MESSAGE_MAX = 200;

/** The lines one written run deserves: none, or one per change. */
export function tellRun(log: EventLog, region: string, change: RunChange, run: NonNullable<Result['run']>): void {
  const { server, test, eraMove, failing } = change;
  const where = `${server} in ${region}`;
  const base = { server, region };
  if (eraMove) {
    // The raw move, as this region's run saw it: confirmed (era_move_confirmed) or not later.
    const event = eraMove.downgrade ? 'downgrade' : 'era_move';
    log.info(
      { event, ...base, from: eraMove.from, to: eraMove.to, eraChanged: eraMove.eraChanged, confirmed: false },
      `${eraMove.downgrade ? 'downgrade' : 'era move'} (unconfirmed): ${where} now ${eraMove.to}, was ${eraMove.from}` +
        (eraMove.eraChanged ? ` (${revisionInfo(eraMove.from).era} to ${revisionInfo(eraMove.to).era})` : ''),
    );
  }
  if (failing.was === failing.now) return;
  const message = run.message.length > MESSAGE_MAX ? `${run.message.slice(0, MESSAGE_MAX - 1)}…` : run.message;
  if (test.mode === 'pinned') {
    const pin = test.pinnedRevision ?? 'its pin';
    if (failing.now)
      log.info(
        { event: 'pin_failing', ...base, revision: pin, outcome: run.outcome, message },
        run.outcome === 'unsupported_version'
          ? `pin failing: ${where} no longer speaks ${pin}`
          : `pin failing: ${where}, pinned to ${pin}: ${run.outcome}`,
      );
    else log.info({ event: 'pin_recovered', ...base, revision: pin }, `pin recovered: ${where} speaks ${pin} again`);
    return;
  }
  if (failing.now)
    log.info(
      { event: 'handshake_failing', ...base, outcome: run.outcome, message },
      `handshake failing: ${where}: ${run.outcome}`,
    );
  else
    log.info(
      { event: 'handshake_recovered', ...base, revision: run.negotiated },
      `handshake recovered: ${where} speaks ${run.negotiated ?? 'again'}`,
    );
}

const VERB = { server_created: 'created', server_revived: 'revived', server_retired: 'retired' } as const;

/** A server created, revived or retired, by the fleet file (or an apply) or through the API. */
export function tellFleetChange(
  log: EventLog,
  change: { event: keyof typeof VERB; server: string; by: 'fleet' | 'api' },
): void {
  const verb = VERB[change.event];
  log.info(
    { event: change.event, server: change.server, by: change.by },
    `server ${verb}: ${change.server} (${change.by === 'fleet' ? 'fleet file' : 'API'})`,
  );
}

/** The breaking surface changes a run recorded, one line each (warnings and additions are in the history, not the log). */
export function tellSurfaceChanges(
  log: EventLog,
  region: string,
  server: string,
  changes: readonly { severity: string; kind: string; name: string; message: string; era?: string }[],
): void {
  for (const c of changes) {
    if (c.severity !== 'breaking') continue;
    log.info(
      { event: 'surface_breaking_change', server, region, kind: c.kind, name: c.name, era: c.era },
      `${server} in ${region}: ${c.message.slice(0, MESSAGE_MAX)} (breaking)`,
    );
  }
}

/** A move the store confirmed (store's ConfirmedMove). */
export interface ConfirmedMoveChange {
  region: string;
  from: string;
  to: string;
  downgrade: boolean;
  eraChanged: boolean;
  by: 'runs' | 'regions';
  /** Runs of its region (by runs), or regions that moved alike (by regions). */
  seen?: number;
}

/**
 * Confirmed moves, one line per move confirmed in its own region's runs, one line per move a quorum
 * of regions confirmed at once (with its regions): "orders: now 2026-07-28, was 2025-11-25 (confirmed by 2 regions)".
 */
export function tellConfirmedMoves(log: EventLog, server: string, moves: readonly ConfirmedMoveChange[]): void {
  const byRegions = new Map<string, ConfirmedMoveChange[]>();
  for (const m of moves) {
    if (m.by === 'regions') {
      const key = `${m.from}>${m.to}`;
      byRegions.set(key, [...(byRegions.get(key) ?? []), m]);
      continue;
    }
    log.info(
      {
        event: 'era_move_confirmed',
        server,
        region: m.region,
        from: m.from,
        to: m.to,
        downgrade: m.downgrade,
        by: 'runs',
      },
      `${m.downgrade ? 'downgrade' : 'era move'} confirmed: ${server} in ${m.region}: now ${m.to}, was ${m.from} (confirmed in ${m.seen ?? 'enough'} runs)`,
    );
  }
  for (const group of byRegions.values()) {
    const m = group[0]!;
    const regions = group.map((g) => g.region).sort();
    const count = Math.max(m.seen ?? 0, regions.length);
    log.info(
      { event: 'era_move_confirmed', server, regions, from: m.from, to: m.to, downgrade: m.downgrade, by: 'regions' },
      `${m.downgrade ? 'downgrade' : 'era move'} confirmed: ${server}: now ${m.to}, was ${m.from} (confirmed by ${count} regions)`,
    );
  }
}

/** A move undone inside the flap window: one line for the flap (the two raw moves were told as unconfirmed). */
export function tellFlap(
  log: EventLog,
  server: string,
  flap: { region: string; from: string; to: string; firstAt: Date | string },
  at: Date,
): void {
  const within = spanText(at.getTime() - new Date(flap.firstAt).getTime());
  log.info(
    { event: 'era_flapping', server, region: flap.region, from: flap.from, to: flap.to },
    `era flapping: ${server} in ${flap.region} went ${flap.from} → ${flap.to} → ${flap.from} within ${within}`,
  );
}

/** A region disagreement opened or ended by a run (one that only kept it current says nothing). */
export function tellDisagreement(
  log: EventLog,
  server: string,
  d: {
    started: boolean;
    ended: boolean;
    revisions: Record<string, string>;
    startedAt: Date | string;
    endedAt: Date | string | null;
  },
  at: Date,
): void {
  if (!d.started && !d.ended) return;
  const text = disagreementText(
    { revisions: d.revisions, startedAt: new Date(d.startedAt), endedAt: d.endedAt ? new Date(d.endedAt) : null },
    at,
  );
  const regions = Object.keys(d.revisions).length;
  if (d.started)
    log.info({ event: 'region_disagreement_started', server, regions }, `region disagreement: ${server}: ${text}`);
  else
    log.info(
      { event: 'region_disagreement_ended', server, regions },
      `region disagreement ended: ${server}: regions agree again (${text})`,
    );
}

/** A test's consensus (a quorum of its regions) failing or recovering. */
export function tellConsensus(
  log: EventLog,
  server: string,
  test: { mode: 'newest' | 'pinned'; pinnedRevision: string | null; depth?: string },
  c: { was: boolean; now: boolean; regionsFailing: number; regionsTotal: number; needed: number },
): void {
  if (c.was === c.now) return;
  const revision = test.mode === 'newest' ? 'newest' : (test.pinnedRevision ?? 'pinned');
  const name = `${server} ${revision}${test.depth && test.depth !== 'handshake' ? ` (${test.depth})` : ''}`;
  const fields = {
    server,
    revision,
    depth: test.depth ?? 'handshake',
    regionsFailing: c.regionsFailing,
    regionsTotal: c.regionsTotal,
    needed: c.needed,
  };
  if (c.now)
    log.info(
      { event: 'test_consensus_failing', ...fields },
      `test failing: ${name}: ${c.regionsFailing} of ${c.regionsTotal} regions failing (quorum ${c.needed})`,
    );
  else
    log.info(
      { event: 'test_consensus_recovered', ...fields },
      `test recovered: ${name}: ${c.regionsFailing} of ${c.regionsTotal} regions failing`,
    );
}
