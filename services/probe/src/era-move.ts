// When a test has moved: it spoke one revision before and speaks another now. The first revision a
// test speaks is where it starts, not a move. The probe's run (previousRevision), store's ingest
// (the era_moves row) and the agent's mcp_era_moves_total all decide it here, so they agree.
import { compareRevisions, isRevision, type Revision, revisionInfo } from './revisions';

export interface EraMove {
  from: Revision;
  to: Revision;
  /** The test now speaks an older revision than before. */
  downgrade: boolean;
  /** The move crossed eras (legacy ↔ modern). */
  eraChanged: boolean;
}

/**
 * The move from what a test spoke to what it speaks now, or null when it did not move. Only known
 * revisions move: a string a server answered that is not in the table is no revision to move to.
 */
export function eraMove(from: string | null | undefined, to: string | null | undefined): EraMove | null {
  if (!isRevision(from) || !isRevision(to) || from === to) return null;
  return {
    from,
    to,
    downgrade: compareRevisions(to, from) < 0,
    eraChanged: revisionInfo(to).era !== revisionInfo(from).era,
  };
}
