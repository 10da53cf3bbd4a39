import { eraOf, revisionColor } from '../lib/revisions';

export function RevisionBadge({ revision }: { revision: string | null | undefined }) {
  if (!revision) return <span className="muted">not run yet</span>;
  return (
    <span className="badge rev" style={{ background: revisionColor(revision) }} title={eraOf(revision) ?? undefined}>
      {revision}
    </span>
  );
}

export function OutcomeText({ outcome }: { outcome: string | null | undefined }) {
  if (!outcome) return <span className="muted">—</span>;
  const passing = outcome === 'success' || outcome === 'downgrade';
  return <span className={passing ? 'ok' : 'fail'}>{outcome}</span>;
}
