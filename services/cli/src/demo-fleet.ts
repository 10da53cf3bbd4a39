// The demo `mcp-fleet up` runs when no fleet file is given: the simulated fleet on loopback, a
// fleet file for it (allowing 127.0.0.0/8), and scripted drift so that within a few minutes
// there are era moves, a downgrade and a failing pin to look at. The drift repeats each cycle.
import type { DriftStep, Revision, Sim } from '@mcp-fleet/fleet-sim';

export const DEMO_REGIONS = ['eu-west', 'us-east'];
export const DEMO_CYCLE_MS = 10 * 60_000;
const CYCLES = 12;

/**
 * What each drifter speaks when a cycle starts, and again from 7 minutes. A newest-supported test
 * moves only on an era signal (seed 001), so a move needs a revision to go away: drifter-modern
 * starts legacy-only, its tests settle on 2025-11-25, and losing it makes them look up 2026-07-28.
 */
const START: Record<string, Revision[]> = {
  'drifter-modern': ['2025-11-25'],
  drifter: ['2025-06-18', '2025-11-25'],
  'drifter-pinned': ['2025-03-26', '2025-06-18', '2025-11-25'],
};

/** One cycle: moves at 1, 2 and 3 minutes; everything back at 7 minutes. */
const MOVES: { atMs: number; target: string; revisions: Revision[] }[] = [
  { atMs: 60_000, target: 'drifter-modern', revisions: ['2026-07-28'] },
  { atMs: 120_000, target: 'drifter', revisions: ['2025-06-18'] },
  { atMs: 180_000, target: 'drifter-pinned', revisions: ['2025-06-18', '2025-11-25'] },
  ...Object.entries(START).map(([target, revisions]) => ({ atMs: 420_000, target, revisions })),
];

/** The demo's script: the starting state at 0 ms (applied before the sim answers), then the cycles. */
export function demoDrift(): DriftStep[] {
  const steps: DriftStep[] = Object.entries(START).map(([target, revisions]) => ({ afterMs: 0, target, revisions }));
  for (let c = 0; c < CYCLES; c += 1)
    for (const m of MOVES)
      steps.push({ afterMs: c * DEMO_CYCLE_MS + m.atMs, target: m.target, revisions: m.revisions });
  return steps;
}

/** Which targets the demo watches, and the pinned revisions it keeps on them. */
const WATCHED: Record<string, string[]> = {
  'legacy-sse': [],
  'sessions-2025-03-26': [],
  'sessions-2025-06-18': ['2025-06-18'],
  'sessions-2025-11-25': [],
  modern: ['2026-07-28'],
  'modern-only': [],
  drifter: [],
  'drifter-modern': [],
  'drifter-pinned': ['2025-03-26', '2025-11-25'],
  'rate-limited': [],
  unavailable: [],
};

/** The demo's fleet file, written as an operator would write it. */
export function demoFleetYaml(sim: Sim, intervalSeconds = 15): string {
  const lines = [
    `regions: [${DEMO_REGIONS.join(', ')}]`,
    `defaults: { interval: ${intervalSeconds}s, timeout: ${Math.min(5, intervalSeconds)}s }`,
    'servers:',
  ];
  for (const [name, pins] of Object.entries(WATCHED)) {
    const target = sim.target(name);
    lines.push(`  - name: ${name}`, `    url: ${target.url}`, '    tests:', '      - revision: newest');
    for (const pin of pins) lines.push(`      - revision: "${pin}"`);
    if (name.startsWith('drifter') || name === 'modern') lines.push('    detection: { interval: 2m }');
  }
  lines.push('policy:', '  allow: ["127.0.0.0/8"]   # the demo fleet runs on loopback');
  return `${lines.join('\n')}\n`;
}
