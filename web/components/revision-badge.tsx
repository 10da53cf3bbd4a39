import { isPassing } from '@mcp-fleet/probe';
import { eraOf, revisionColor } from '../lib/revisions';

/** A revision as a coloured badge; none (a run that negotiated nothing, a test that never did) is a dash. */
export function RevisionBadge({ revision }: { revision: string | null | undefined }) {
  if (!revision)
    return (
      <span className="muted" title="no revision negotiated">
        —
      </span>
    );
  return (
    <span className="badge rev" style={{ background: revisionColor(revision) }} title={eraOf(revision) ?? undefined}>
      {revision}
    </span>
  );
}

export function OutcomeText({ outcome }: { outcome: string | null | undefined }) {
  if (!outcome) return <span className="muted">—</span>;
  return <span className={isPassing(outcome) ? 'ok' : 'fail'}>{outcome}</span>;
}
