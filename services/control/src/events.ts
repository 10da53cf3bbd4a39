// What control tells the operator: one log line per state change someone on call cares about,
// each with a stable `event` field for whoever searches the logs (and a sentence for whoever reads
// them): an era move or downgrade, a pinned test failing or recovering, a server's handshakes
// failing or recovering, a server created, revived (a retired name applied again) or retired. Only changes are told: a test that keeps
// failing says so once, and a restart says nothing new (the state is in the database).
import type { Result } from '@mcp-fleet/bus';
import { type EraMove, revisionInfo } from '@mcp-fleet/probe';

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
  | 'surface_breaking_change';

export interface EventLog {
  info: (fields: { event: OperatorEvent } & Record<string, unknown>, msg: string) => void;
}

/** What the store said a written run changed (ingest's RecordedRun, not a duplicate or stale one). */
export interface RunChange {
  server: string;
  test: { mode: 'newest' | 'pinned'; pinnedRevision: string | null };
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
    const event = eraMove.downgrade ? 'downgrade' : 'era_move';
    log.info(
      { event, ...base, from: eraMove.from, to: eraMove.to, eraChanged: eraMove.eraChanged },
      `${eraMove.downgrade ? 'downgrade' : 'era move'}: ${where} now ${eraMove.to}, was ${eraMove.from}` +
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
