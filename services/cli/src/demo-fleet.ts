// The demo `mcp-fleet up` runs when no fleet file is given: the simulated fleet on loopback, a
// fleet file for it (allowing 127.0.0.0/8), and scripted drift so that within a few minutes
// there are era moves, a downgrade and a failing pin to look at. The drift repeats each cycle.
//
// The script runs on the demo's own clock, which starts when the demo's fleet is first created in
// the database and never restarts with the process: the simulated servers are a world the monitor
// watches, and a real fleet does not go back to where it was when its monitor restarts. So a
// restarted demo resumes the script where the wall clock says it is, and every era move or
// downgrade it records is one the script made (possibly while the monitor was down); the history
// of earlier runs stays true. (A fresh database starts the story from the beginning.)
import { fleetToYaml } from '@mcp-fleet/config';
import type { DriftStep, Revision, Sim } from '@mcp-fleet/fleet-sim';
import { type Db, firstCreatedAt } from '@mcp-fleet/store';

export const DEMO_REGIONS = ['eu-west', 'us-east'];
export const DEMO_CYCLE_MS = 10 * 60_000;
const CYCLES = 12;

/**
 * What each drifter speaks when a cycle starts, and again from 7 minutes. A newest-supported test
 * moves only on an era signal (docs/protocol.md#era-signals), so a move needs a revision to go
 * away: drifter-modern starts legacy-only, its tests settle on 2025-11-25, and losing it makes them
 * look up 2026-07-28.
 */
const START: Record<string, Revision[]> = {
  'drifter-modern': ['2025-11-25'],
  drifter: ['2025-06-18', '2025-11-25'],
  'drifter-pinned': ['2025-03-26', '2025-06-18', '2025-11-25'],
};

/** One cycle (of DEMO_CYCLE_MS): moves at 1, 2 and 3 minutes; everything back at 7 minutes. */
const MOVES: { atMs: number; target: string; revisions: Revision[] }[] = [
  { atMs: 60_000, target: 'drifter-modern', revisions: ['2026-07-28'] },
  { atMs: 120_000, target: 'drifter', revisions: ['2025-06-18'] },
  { atMs: 180_000, target: 'drifter-pinned', revisions: ['2025-06-18', '2025-11-25'] },
  ...Object.entries(START).map(([target, revisions]) => ({ atMs: 420_000, target, revisions })),
];

/** The cycle's moves for a cycle of `cycleMs` (the script scaled: a test plays it faster). */
function movesOf(cycleMs: number) {
  return MOVES.map((m) => ({ ...m, atMs: Math.round((m.atMs * cycleMs) / DEMO_CYCLE_MS) }));
}

/** The demo's script: the starting state at 0 ms (applied before the sim answers), then the cycles. */
export function demoDrift(): DriftStep[] {
  const steps = demoStateAt(0);
  for (let c = 0; c < CYCLES; c += 1)
    for (const m of MOVES)
      steps.push({ afterMs: c * DEMO_CYCLE_MS + m.atMs, target: m.target, revisions: m.revisions });
  return steps;
}

/** What each drifter speaks `elapsedMs` into the demo, as steps at 0 ms (startSim applies them before it answers). */
export function demoStateAt(elapsedMs: number, cycleMs = DEMO_CYCLE_MS): DriftStep[] {
  const phase = Math.max(0, elapsedMs) % cycleMs;
  const state = new Map(Object.entries(START));
  for (const m of movesOf(cycleMs)) if (m.atMs <= phase) state.set(m.target, m.revisions);
  return [...state].map(([target, revisions]) => ({ afterMs: 0, target, revisions }));
}

/** How long after `elapsedMs` the script's next move comes. */
function untilNextMove(elapsedMs: number, cycleMs: number): number {
  const phase = Math.max(0, elapsedMs) % cycleMs;
  const next = movesOf(cycleMs).find((m) => m.atMs > phase);
  return next ? next.atMs - phase : cycleMs - phase + Math.min(...movesOf(cycleMs).map((m) => m.atMs));
}

/** When the demo began in this database: its first server's creation, or null before its first start. */
export function demoEpoch(db: Db): Promise<Date | null> {
  return firstCreatedAt(db, Object.keys(WATCHED));
}

/**
 * Plays the script on `sim` by the demo's clock (`epoch`), from now on and without end: first
 * what the drifters speak now, then each move when its time comes. Returns a stop function.
 */
export function playDemoDrift(sim: Sim, epoch: Date, cycleMs = DEMO_CYCLE_MS): () => void {
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const elapsed = Date.now() - epoch.getTime();
    for (const step of demoStateAt(elapsed, cycleMs))
      if (sim.target(step.target).supports.join() !== step.revisions.join()) sim.drift(step.target, step.revisions);
    timer = setTimeout(tick, untilNextMove(elapsed, cycleMs));
    timer.unref();
  };
  tick();
  return () => clearTimeout(timer);
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

/** Servers that also get a conformance test (one per era and generation), every 5 minutes. */
const CONFORMANCE = ['modern', 'sessions-2025-11-25', 'legacy-sse'];

/** The demo's fleet file, written as an operator would write it. */
export function demoFleetYaml(sim: Sim, intervalSeconds = 15): string {
  return fleetToYaml(
    {
      regions: [...DEMO_REGIONS],
      defaults: { interval: `${intervalSeconds}s`, timeout: `${Math.min(5, intervalSeconds)}s` },
      servers: Object.entries(WATCHED).map(([name, pins]) => ({
        name,
        url: sim.target(name).url,
        tests: [
          { revision: 'newest' },
          ...pins.map((pin) => ({ revision: pin })),
          ...(CONFORMANCE.includes(name)
            ? [{ revision: 'newest', depth: 'conformance' as const, interval: '5m' }]
            : []),
        ],
        ...(name.startsWith('drifter') || name === 'modern' ? { detection: { interval: '2m' } } : {}),
      })),
      // The demo fleet runs on loopback.
      policy: { allow: ['127.0.0.0/8'] },
    },
    { comment: 'the demo fleet' },
  );
}
