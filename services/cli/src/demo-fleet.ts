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
import { isFaceDriftStep, isSurfaceDriftStep, type ScriptStep, type Sim } from '@mcp-fleet/fleet-sim';
import type { Script } from '@mcp-fleet/probe';
import { type Db, firstCreatedAt } from '@mcp-fleet/store';

export const DEMO_REGIONS = ['eu-west', 'us-east'];
/**
 * Where each demo region's agent probes from, so fleet-sim's geo server tells the regions apart (a
 * rollout behind geo-DNS, on one machine). 127.0.0.2 is loopback on Linux; where it is not
 * configured (macOS by default) the demo runs without them and geo looks the same from both.
 */
export const DEMO_SOURCE_ADDRESSES: Readonly<Record<string, string>> = {
  'eu-west': '127.0.0.1',
  'us-east': '127.0.0.2',
};
export const DEMO_CYCLE_MS = 10 * 60_000;
const CYCLES = 12;

/**
 * What each drifter speaks when a cycle starts, and again from 7 minutes. A newest-supported test
 * moves only on an era signal (docs/protocol.md#era-signals), so a move needs a revision to go
 * away: drifter-modern starts legacy-only, its tests settle on 2025-11-25, and losing it makes them
 * look up 2026-07-28. surface-drifter serves its base surface (stage 0) when a cycle starts.
 */
const START: ScriptStep[] = [
  { afterMs: 0, target: 'drifter-modern', revisions: ['2025-11-25'] },
  { afterMs: 0, target: 'drifter', revisions: ['2025-06-18', '2025-11-25'] },
  { afterMs: 0, target: 'drifter-pinned', revisions: ['2025-03-26', '2025-06-18', '2025-11-25'] },
  { afterMs: 0, target: 'surface-drifter', surface: 0 },
  { afterMs: 0, target: 'geo', face: 'modern' },
  { afterMs: 0, target: 'geo', face: 'modern-only', address: DEMO_SOURCE_ADDRESSES['us-east']! },
];

/**
 * One cycle (of DEMO_CYCLE_MS), times within it: era moves at 1, 2 and 3 minutes, the drifters back
 * at 7; surface-drifter's tools change every 2 minutes, each stage one change its surface tests
 * (every minute) see on its own: an addition at 2, a warning at 4, a breaking change at 6, and back
 * to the base at 8 (a warning and two additions, nothing breaking). geo's us-east side rolls back
 * to 2025-11-25 at 4 (a region disagreement, alerting after its 3 minutes; the downgrade confirmed
 * in two runs) and forward to 2026-07-28 alone at 9, where it started (inside the flap window: one
 * flap, and the regions agree again).
 */
const MOVES: ScriptStep[] = [
  { afterMs: 60_000, target: 'drifter-modern', revisions: ['2026-07-28'] },
  { afterMs: 120_000, target: 'drifter', revisions: ['2025-06-18'] },
  { afterMs: 120_000, target: 'surface-drifter', surface: 1 },
  { afterMs: 180_000, target: 'drifter-pinned', revisions: ['2025-06-18', '2025-11-25'] },
  { afterMs: 240_000, target: 'surface-drifter', surface: 2 },
  { afterMs: 240_000, target: 'geo', face: 'legacy', address: DEMO_SOURCE_ADDRESSES['us-east']! },
  { afterMs: 360_000, target: 'surface-drifter', surface: 3 },
  ...START.filter((step) => !isSurfaceDriftStep(step) && !isFaceDriftStep(step)).map((step) => ({
    ...step,
    afterMs: 420_000,
  })),
  { afterMs: 480_000, target: 'surface-drifter', surface: 0 },
  { afterMs: 540_000, target: 'geo', face: 'modern-only', address: DEMO_SOURCE_ADDRESSES['us-east']! },
];

/** The cycle's moves for a cycle of `cycleMs` (the script scaled: a test plays it faster). */
function movesOf(cycleMs: number): ScriptStep[] {
  return MOVES.map((m) => ({ ...m, afterMs: Math.round((m.afterMs * cycleMs) / DEMO_CYCLE_MS) }));
}

/** The demo's script: the starting state at 0 ms (applied before the sim answers), then the cycles. */
export function demoDrift(): ScriptStep[] {
  const steps = demoStateAt(0);
  for (let c = 0; c < CYCLES; c += 1)
    for (const m of MOVES) steps.push({ ...m, afterMs: c * DEMO_CYCLE_MS + m.afterMs });
  return steps;
}

/**
 * What each scripted target speaks (or serves) `elapsedMs` into the demo, as steps at 0 ms (startSim
 * applies them before it answers). Each target is scripted by one kind of step, revisions, surface
 * or faces (geo: one face per address, and the default).
 */
export function demoStateAt(elapsedMs: number, cycleMs = DEMO_CYCLE_MS): ScriptStep[] {
  const phase = Math.max(0, elapsedMs) % cycleMs;
  const key = (step: ScriptStep) => (isFaceDriftStep(step) ? `${step.target} ${step.address ?? ''}` : step.target);
  const state = new Map(START.map((step) => [key(step), step]));
  for (const m of movesOf(cycleMs)) if (m.afterMs <= phase) state.set(key(m), m);
  return [...state.values()].map((step) => ({ ...step, afterMs: 0 }));
}

/** How long after `elapsedMs` the script's next move comes. */
function untilNextMove(elapsedMs: number, cycleMs: number): number {
  const phase = Math.max(0, elapsedMs) % cycleMs;
  const next = movesOf(cycleMs).find((m) => m.afterMs > phase);
  return next ? next.afterMs - phase : cycleMs - phase + Math.min(...movesOf(cycleMs).map((m) => m.afterMs));
}

/** Whether `sim` already is where `step` puts its target. */
function holds(sim: Sim, step: ScriptStep): boolean {
  const target = sim.target(step.target);
  if (isFaceDriftStep(step)) {
    const faces = target.faces;
    return (step.address === undefined ? faces?.default : faces?.byAddress[step.address]) === step.face;
  }
  return isSurfaceDriftStep(step)
    ? target.surfaceStage === step.surface
    : target.supports.join() === step.revisions.join();
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
    for (const step of demoStateAt(elapsed, cycleMs)) {
      if (holds(sim, step)) continue;
      if (isFaceDriftStep(step)) sim.face(step.target, step.face, step.address);
      else if (isSurfaceDriftStep(step)) sim.driftSurface(step.target, step.surface);
      else sim.drift(step.target, step.revisions);
    }
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
  'surface-drifter': [],
  'dual-era-diff': [],
  // SDK 1.10: 2024-11-05 over the sessions opening (no HTTP+SSE endpoint), newest and pinned both pass.
  'between-generations': ['2024-11-05'],
  // Answers by the caller's address: the regions' agents probe from DEMO_SOURCE_ADDRESSES.
  geo: [],
};

/** Servers that also get a conformance test (one per era and generation), every 5 minutes. */
const CONFORMANCE = ['modern', 'sessions-2025-11-25', 'legacy-sse'];

/**
 * Servers that also get a surface test (what they offer per era, and its changes), and how often:
 * surface-drifter every minute, so each of its 2-minute stages is a snapshot of its own;
 * dual-era-diff, whose eras differ (a tool missing in one, a schema different), every 5 minutes.
 */
const SURFACE: Record<string, string> = { 'surface-drifter': '1m', 'dual-era-diff': '5m' };

/** Scripted checks (every minute): a short conversation replayed, with what its answers must hold. */
const SCRIPTS: Record<string, Script> = {
  // get_weather is read-only at every stage of surface-drifter, so the script runs without allowWrites.
  'surface-drifter': {
    steps: [
      {
        method: 'tools/call',
        params: { name: 'get_weather', arguments: { city: 'Paris' } },
        expect: [{ isError: false }, { path: '$.content[0].text', contains: 'Weather in Paris' }, { latencyMs: 2000 }],
      },
    ],
  },
};

/** The monitor itself, served by control at /mcp: the demo watches it as one more server. */
export const DEMO_MONITOR_NAME = 'mcp-fleet';

export interface DemoMonitor {
  /** Control's /mcp on loopback. */
  url: string;
  /** `Authorization: Bearer <token>` when control's API has tokens (stored sealed, as any server's). */
  headers?: Record<string, string>;
}

/**
 * Where the demo finds the monitor's own MCP endpoint: control's API address on loopback (the
 * demo's policy allows 127.0.0.0/8 only), with a token when control asks for one — a read token
 * where there is one, as the probes only list and open. A string says why it is left out.
 */
export function demoMonitor(
  api: { host: string; port: number },
  tokens: readonly { scope: 'read' | 'admin'; token: string }[],
  canSealCredentials: boolean,
): DemoMonitor | string {
  const { host, port } = api;
  const loopback = /^127\.\d+\.\d+\.\d+$/.test(host)
    ? host
    : ['0.0.0.0', '::', 'localhost'].includes(host)
      ? '127.0.0.1'
      : undefined;
  if (!loopback) return `control's API listens on ${host}, and the demo watches loopback only`;
  const url = `http://${loopback}:${port}/mcp`;
  if (tokens.length === 0) return { url };
  if (!canSealCredentials)
    return "control's API has tokens and no MCP_FLEET_SECRET_KEY is set to store one sealed for the probes";
  const token = (tokens.find((t) => t.scope === 'read') ?? tokens[0]!).token;
  return { url, headers: { Authorization: `Bearer ${token}` } };
}

/** The demo's stdio server: fleet-sim's SDK 2.4 server (both eras), started through its launcher. */
export const DEMO_STDIO_NAME = 'stdio-v2';

/**
 * The demo's fleet file, written as an operator would write it; with `monitor`, the monitor watches
 * itself too; with `stdioLauncher` (the path writeStdioLauncher gave, which the demo's agents
 * allowlist), one stdio server: a process per probe, so it is probed 4× less often than the rest
 * (every minute by default), with time for a process to start under load.
 */
export function demoFleetYaml(sim: Sim, intervalSeconds = 15, monitor?: DemoMonitor, stdioLauncher?: string): string {
  return fleetToYaml(
    {
      regions: [...DEMO_REGIONS],
      defaults: { interval: `${intervalSeconds}s`, timeout: `${Math.min(5, intervalSeconds)}s` },
      servers: [
        ...Object.entries(WATCHED).map(([name, pins]) => ({
          name,
          url: sim.target(name).url,
          tests: [
            { revision: 'newest' },
            ...pins.map((pin) => ({ revision: pin })),
            ...(CONFORMANCE.includes(name)
              ? [{ revision: 'newest', depth: 'conformance' as const, interval: '5m' }]
              : []),
            ...(SURFACE[name] ? [{ revision: 'newest', depth: 'surface' as const, interval: SURFACE[name] }] : []),
            // A script test's keys are its steps and allowWrites, beside revision and depth.
            ...(SCRIPTS[name]
              ? [{ revision: 'newest', depth: 'script' as const, interval: '1m', ...SCRIPTS[name] }]
              : []),
          ],
          ...(name.startsWith('drifter') || name === 'modern' ? { detection: { interval: '2m' } } : {}),
          // Its regions disagree for 5 minutes of each cycle: alert after 3 (the default, 10, never would here).
          ...(name === 'geo' ? { disagreementAfter: '3m' } : {}),
        })),
        // The monitor's own /mcp (both eras): a newest-supported test, and conformance every 5 minutes.
        ...(monitor
          ? [
              {
                name: DEMO_MONITOR_NAME,
                url: monitor.url,
                ...(monitor.headers ? { headers: monitor.headers } : {}),
                tests: [{ revision: 'newest' }, { revision: 'newest', depth: 'conformance' as const, interval: '5m' }],
              },
            ]
          : []),
        ...(stdioLauncher
          ? [
              {
                name: DEMO_STDIO_NAME,
                command: stdioLauncher,
                interval: `${intervalSeconds * 4}s`,
                timeout: `${Math.min(10, intervalSeconds * 4)}s`,
                tests: [{ revision: 'newest' }, { revision: 'newest', depth: 'conformance' as const, interval: '15m' }],
              },
            ]
          : []),
      ],
      // The demo fleet runs on loopback.
      policy: { allow: ['127.0.0.0/8'] },
    },
    { comment: 'the demo fleet' },
  );
}
