// The demo's scripted drift does what the README promises of `mcp-fleet up`: within a cycle an era
// move each way, a downgrade and a failing pin. One cycle is walked step by step against the real
// drifters (no clock): apply the steps of a minute, then run every test the demo keeps on them once,
// with the probe's own handshake and the revision the test spoke last, as the agents do.

import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { handshake, type Revision } from '@mcp-fleet/probe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CYCLE_MS, demoDrift, demoStateAt } from '../src/demo-fleet';

const DRIFTERS = ['drifter-modern', 'drifter', 'drifter-pinned'];
/** The pins demoFleetYaml keeps on the drifters (every watched server also has a newest test). */
const PINS: [string, Revision][] = [
  ['drifter-pinned', '2025-03-26'],
  ['drifter-pinned', '2025-11-25'],
];

let sim: Sim;
beforeAll(async () => {
  // Only the starting state, which startSim applies before it returns; the walk applies the rest.
  sim = await startSim({ only: DRIFTERS, script: demoDrift().filter((s) => s.afterMs === 0) });
});
afterAll(() => sim?.close());

describe("the demo's drift", () => {
  it('starts each drifter where the script says, before any request', () => {
    for (const step of demoDrift().filter((s) => s.afterMs === 0)) {
      expect(sim.target(step.target).supports).toEqual(step.revisions);
    }
  });

  it('gives an era move each way, a downgrade and a failing pin in one cycle, then repeats', async () => {
    const cycle = demoDrift().filter((s) => s.afterMs > 0 && s.afterMs < DEMO_CYCLE_MS);
    const minutes = [0, ...new Set(cycle.map((s) => s.afterMs / 60_000))];
    const current = new Map<string, Revision>();
    const pinState = new Map<string, string>();
    const pinSpoke = new Set<string>();
    const events: string[] = [];

    for (const minute of minutes) {
      for (const step of cycle.filter((s) => s.afterMs === minute * 60_000)) sim.drift(step.target, step.revisions);
      for (const name of DRIFTERS) {
        const was = current.get(name);
        const run = await handshake(sim.target(name).url, { revision: 'newest', ...(was ? { current: was } : {}) });
        expect(run.outcome, `${minute} min ${name}: ${run.message}`).toMatch(/^(success|downgrade)$/);
        const now = run.negotiated as Revision;
        if (was === undefined) events.push(`${minute} min ${name}: speaks ${now}`);
        else if (now !== was)
          events.push(`${minute} min ${name}: now ${now}, was ${run.previousRevision} (${run.outcome})`);
        current.set(name, now);
      }
      for (const [name, revision] of PINS) {
        const key = `${name} ${revision}`;
        // A pin carries the revision it spoke last too (its pin, once it passed): a loss is "no longer".
        const spoke = pinSpoke.has(key) ? { current: revision } : {};
        const run = await handshake(sim.target(name).url, { revision, ...spoke });
        const state = run.outcome === 'success' ? 'passes' : run.message;
        if (run.outcome === 'success') pinSpoke.add(key);
        if (pinState.get(key) !== state) events.push(`${minute} min ${key}: ${state}`);
        pinState.set(key, state);
      }
    }

    expect(events).toEqual([
      '0 min drifter-modern: speaks 2025-11-25',
      '0 min drifter: speaks 2025-11-25',
      '0 min drifter-pinned: speaks 2025-11-25',
      '0 min drifter-pinned 2025-03-26: passes',
      '0 min drifter-pinned 2025-11-25: passes',
      '1 min drifter-modern: now 2026-07-28, was 2025-11-25 (success)',
      '2 min drifter: now 2025-06-18, was 2025-11-25 (downgrade)',
      '3 min drifter-pinned 2025-03-26: Server no longer speaks protocol 2025-03-26',
      '7 min drifter-modern: now 2025-11-25, was 2026-07-28 (downgrade)',
      '7 min drifter-pinned 2025-03-26: passes',
    ]);

    // At 7 minutes every drifter is back where the cycle started, so the next cycle repeats it.
    const start = demoDrift().filter((s) => s.afterMs === 0);
    for (const step of start) expect(sim.target(step.target).supports).toEqual(step.revisions);
    const next = demoDrift().filter((s) => s.afterMs >= DEMO_CYCLE_MS && s.afterMs < 2 * DEMO_CYCLE_MS);
    expect(next.map((s) => ({ ...s, afterMs: s.afterMs - DEMO_CYCLE_MS }))).toEqual(cycle);
  });

  it('knows where the script is at any time of the demo, so a restarted demo resumes it', () => {
    const speaks = (elapsedMs: number, cycleMs?: number) =>
      Object.fromEntries(demoStateAt(elapsedMs, cycleMs).map((s) => [s.target, s.revisions.join(' ')]));
    const start = speaks(0);
    expect(start).toEqual(
      Object.fromEntries(
        demoDrift()
          .filter((s) => s.afterMs === 0)
          .map((s) => [s.target, s.revisions.join(' ')]),
      ),
    );
    // Four minutes in: the three moves made; eight minutes in: back to the start; and cycle after cycle.
    const moved = { 'drifter-modern': '2026-07-28', drifter: '2025-06-18', 'drifter-pinned': '2025-06-18 2025-11-25' };
    expect(speaks(4 * 60_000)).toEqual(moved);
    expect(speaks(8 * 60_000)).toEqual(start);
    expect(speaks(5 * DEMO_CYCLE_MS + 4 * 60_000)).toEqual(moved);
    // A faster cycle scales the script: 150 s long, the moves are at 15, 30 and 45 s.
    expect(speaks(14_000, 150_000)['drifter-modern']).toBe('2025-11-25');
    expect(speaks(15_000, 150_000)['drifter-modern']).toBe('2026-07-28');
  });
});
