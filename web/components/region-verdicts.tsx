// How the pages word a server's multi-region verdicts (issue 17): region disagreement, uptime and
// reachability with the SLO line, "upgrade available", a test's consensus and an era move's state.
// The rules are the store's (consensus.ts, disagreements.ts, uptime.ts, upgrades.ts, reads.ts);
// this file only words them. Region names and revisions come from agents and servers: cut to a
// bound and rendered by React as text.

import { isRevision } from '@mcp-fleet/probe';
import {
  type Availability,
  disagreementText,
  type EraMoveItem,
  moveStateText,
  moveText,
  type RegionDisagreement,
  type ServerAvailability,
  type TestConsensus,
  type UpgradeAvailable,
  upgradeText,
} from '@mcp-fleet/store';
import { cut } from '../lib/surface';
import { RevisionBadge } from './revision-badge';

/** The longest verdict line a cell shows. */
export const VERDICT_CHARS = 200;

/** Stored text a row shows: wrapped anywhere, so one long word cannot widen a table. */
export const WRAP = { overflowWrap: 'anywhere', maxWidth: '48em' } as const;

/** A known revision as its badge; anything else a move row holds (it is stored text) as cut, wrapped text. */
export function StoredRevision({ revision }: { revision: string }) {
  return isRevision(revision) ? (
    <RevisionBadge revision={revision} />
  ) : (
    <span className="evidence" style={WRAP}>
      {cut(revision, VERDICT_CHARS)}
    </span>
  );
}

/** "98.5%" (one decimal below 100), or a dash without runs. */
export function pct(share: number | null): string {
  if (share === null) return '—';
  const p = share * 100;
  return p >= 100 ? '100%' : `${p >= 99.95 ? '99.9' : p.toFixed(1)}%`;
}

/** "regions disagree: eu-west 2026-07-28, us-east 2025-11-25 for 12 min" */
export function DisagreementMark({ d, now }: { d: RegionDisagreement; now: Date }) {
  const text = disagreementText(d, now);
  return (
    <div className="warn" data-testid="disagreement" title={`since ${d.startedAt.toISOString()}`} style={WRAP}>
      regions disagree: {cut(text, VERDICT_CHARS)}
    </div>
  );
}

/** The SLO line: target and what is left of the error budget (overspent shown as such). */
export function sloText(slo: ServerAvailability['slo']): string {
  const target = `SLO ${slo.target}% uptime over 30 d`;
  if (slo.budgetLeft === null) return `${target}: no runs yet`;
  if (!Number.isFinite(slo.budgetLeft)) return `${target}: error budget overspent`;
  if (slo.budgetLeft < 0) return `${target}: error budget overspent (${Math.round(-slo.budgetLeft * 100)}% over)`;
  return `${target}: ${Math.round(slo.budgetLeft * 100)}% of the error budget left`;
}

export function SloLine({ slo }: { slo: ServerAvailability['slo'] }) {
  const overspent = slo.budgetLeft !== null && slo.budgetLeft < 0;
  const low = slo.budgetLeft !== null && slo.budgetLeft < 0.25;
  return (
    <span className={overspent ? 'fail' : low ? 'warn' : 'ok'} data-testid="slo">
      {sloText(slo)}
    </span>
  );
}

/** "up 99.2% · reachable 97.0%" for one window. */
export function availabilityText(a: Availability): string {
  if (a.buckets === 0) return 'no runs';
  return `up ${pct(a.uptime)} · reachable ${pct(a.reachability)}`;
}

/** The servers table's cell: 24 h, then 30 d with the SLO line. */
export function AvailabilityCell({ availability }: { availability: ServerAvailability | null }) {
  if (!availability) return <span className="muted">—</span>;
  const day = availability.windows['24h'];
  const month = availability.windows['30d'];
  return (
    <div data-testid="availability">
      <div>
        <span className="muted">24 h:</span> {availabilityText(day)}
      </div>
      <div>
        <span className="muted">30 d:</span> {availabilityText(month)}
      </div>
      <div style={{ fontSize: 12 }}>
        <SloLine slo={availability.slo} />
      </div>
    </div>
  );
}

export function UpgradeMark({ upgrade, regionsTotal }: { upgrade: UpgradeAvailable; regionsTotal?: number }) {
  return (
    <div className="warn" data-testid="upgrade" title={`detected ${upgrade.detectedAt.toISOString()}`} style={WRAP}>
      {cut(upgradeText(upgrade, regionsTotal), VERDICT_CHARS)}
    </div>
  );
}

/** "failing in 2 of 3 regions" and whether that meets the quorum. */
export function consensusText(
  c: Pick<TestConsensus, 'regionsFailing' | 'regionsTotal' | 'failing' | 'needed'>,
): string {
  const base = `failing in ${c.regionsFailing} of ${c.regionsTotal} ${c.regionsTotal === 1 ? 'region' : 'regions'}`;
  return c.failing ? `${base} (quorum met)` : `${base} (below the quorum of ${c.needed}: region trouble)`;
}

export function consensusTestName(c: Pick<TestConsensus, 'mode' | 'revision' | 'depth'>): string {
  const name = c.mode === 'pinned' ? `pinned ${c.revision}` : 'newest supported';
  return c.depth === 'handshake' ? name : `${name} (${c.depth})`;
}

export function quorumText(q: TestConsensus['judgement']['quorum'], needed: number): string {
  return typeof q === 'number' ? `${q} ${q === 1 ? 'region' : 'regions'}` : `${q} (${needed} needed)`;
}

/** An era move's state as a badge: pending "seen in 1 of 2 runs", confirmed "by 2 regions" / "in 2 runs", flapping. */
export function MoveStateBadge({ move }: { move: EraMoveItem }) {
  const tone =
    move.state === 'confirmed' ? 'ok' : move.state === 'flapping' ? 'warn' : move.state === 'pending' ? '' : 'muted';
  return (
    <span className={`badge move-state ${tone}`} data-testid="move-state" data-state={move.state}>
      {moveStateText(move)}
    </span>
  );
}

/** "flapping: A→B→A" or "A→B", cut to a bound (the revisions are a server's answers). */
export function moveLabel(move: EraMoveItem): string {
  return cut(moveText(move), VERDICT_CHARS);
}
