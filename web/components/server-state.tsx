// A server's verdict as the pages show it: its health (failing, degraded, up, not run yet) and, per
// region, the worst state across its tests with the test that caused it. The rule itself is the
// store's (server-health.ts); this file only words it.
import type { ServerHealth, ServerRegionState, TestRef } from '@mcp-fleet/store';
import { OutcomeText } from './revision-badge';

export const HEALTH_LABELS: Record<ServerHealth, string> = {
  failing: 'failing',
  degraded: 'degraded',
  up: 'up',
  not_run: 'not run yet',
};

/** What each health means, in the words of the store's rule. */
export const HEALTH_HINTS: Record<ServerHealth, string> = {
  failing: 'a test fails in every region',
  degraded: 'some tests or regions fail',
  up: 'every test passes everywhere',
  not_run: 'no test has run yet',
};

export const HEALTH_CLASS: Record<ServerHealth, string> = {
  failing: 'fail',
  degraded: 'warn',
  up: 'ok',
  not_run: 'muted',
};

export function HealthText({ health }: { health: ServerHealth }) {
  return <span className={`health ${HEALTH_CLASS[health]}`}>{HEALTH_LABELS[health]}</span>;
}

export function testName(test: TestRef): string {
  return test.mode === 'pinned' ? `pinned ${test.pinnedRevision}` : 'newest supported';
}

/**
 * Each region's worst state and the test behind it; regions that share both are one line
 * ("eu-west, us-east: unsupported_version · pinned 2025-03-26"). A success names no test.
 */
export function RegionStates({ byRegion }: { byRegion: ServerRegionState[] }) {
  const lines = new Map<string, { regions: string[]; outcome: string; test: string | null }>();
  for (const { region, state } of byRegion) {
    if (!state) continue;
    const test = state.outcome === 'success' ? null : testName(state.test);
    const key = `${state.outcome}\u0000${test}`;
    const line = lines.get(key) ?? { regions: [], outcome: state.outcome, test };
    line.regions.push(region);
    lines.set(key, line);
  }
  if (lines.size === 0) return null;
  return (
    <ul className="plain" data-testid="region-states">
      {[...lines.values()].map((l) => (
        <li key={`${l.outcome}-${l.test}`}>
          <span className="muted">{l.regions.join(', ')}:</span> <OutcomeText outcome={l.outcome} />
          {l.test ? <span> · {l.test}</span> : null}
        </li>
      ))}
    </ul>
  );
}
