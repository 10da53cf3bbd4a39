// The demo's scripted drift does what the README promises of `mcp-fleet up`: within a cycle an era
// move each way, a downgrade and a failing pin, and surface-drifter's tools changing once of each
// severity (an addition, a warning, a breaking change) and back. One cycle is walked step by step
// against the real servers (no clock): apply the steps of a minute, then run every test the demo
// keeps on the drifters once, with the probe's own handshake and the revision the test spoke last,
// as the agents do, and read surface-drifter's surface in each era and diff it against the last read
// of the same era, as a surface test and ingest do.

import { parseFleet } from '@mcp-fleet/config';
import { isFaceDriftStep, isSurfaceDriftStep, type ScriptStep, type Sim, startSim } from '@mcp-fleet/fleet-sim';
import {
  diffSurfaces,
  guardedDispatcher,
  handshake,
  type Revision,
  readSurfaces,
  type Surface,
  surfaceFromBody,
  TargetPolicy,
} from '@mcp-fleet/probe';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_CYCLE_MS,
  DEMO_SOURCE_ADDRESSES,
  DEMO_STDIO_NAME,
  demoDrift,
  demoFleetYaml,
  demoMonitor,
  demoStateAt,
} from '../src/demo-fleet';

const DRIFTERS = ['drifter-modern', 'drifter', 'drifter-pinned'];
const SURFACE_DRIFTER = 'surface-drifter';
/** geo answers by the caller's address: each demo region's agent probes from its own. */
const GEO = 'geo';
const fromRegion = Object.fromEntries(
  Object.entries(DEMO_SOURCE_ADDRESSES).map(([region, localAddress]) => [
    region,
    guardedDispatcher(new TargetPolicy({ allow: ['127.0.0.0/8'], deny: [] }), undefined, { localAddress }),
  ]),
);
/** The pins demoFleetYaml keeps on the drifters (every watched server also has a newest test). */
const PINS: [string, Revision][] = [
  ['drifter-pinned', '2025-03-26'],
  ['drifter-pinned', '2025-11-25'],
];

/** A step's place in the script: its target, and for a face the address it is shown to. */
const keyOf = (step: ScriptStep) => (isFaceDriftStep(step) ? `${step.target} ${step.address ?? '*'}` : step.target);
/** Where a step puts its target, as one string: the revisions it speaks, its surface stage, or a face. */
const stateOf = (step: ScriptStep) =>
  isFaceDriftStep(step)
    ? `face ${step.face}`
    : isSurfaceDriftStep(step)
      ? `surface ${step.surface}`
      : step.revisions.join(' ');
const stateIn = (sim: Sim, like: ScriptStep) => {
  const t = sim.target(like.target);
  if (isFaceDriftStep(like))
    return `face ${like.address === undefined ? t.faces?.default : t.faces?.byAddress[like.address]}`;
  return isSurfaceDriftStep(like) ? `surface ${t.surfaceStage}` : t.supports.join(' ');
};

/** What surface-drifter offers in each era now, read as a surface test reads it. */
async function surfacesOf(url: string): Promise<Map<string, Surface>> {
  const reads = await readSurfaces(url);
  const out = new Map<string, Surface>();
  for (const read of reads) {
    expect(read.snapshot, `${read.era}: ${read.message}`).not.toBeNull();
    out.set(read.era, surfaceFromBody(read.snapshot!.body));
  }
  return out;
}

let sim: Sim;
beforeAll(async () => {
  // Only the starting state, which startSim applies before it returns; the walk applies the rest.
  sim = await startSim({
    only: [...DRIFTERS, SURFACE_DRIFTER, GEO],
    script: demoDrift().filter((s) => s.afterMs === 0),
  });
});
afterAll(async () => {
  await sim?.close();
  await Promise.all(Object.values(fromRegion).map((d) => d.destroy()));
});

describe("the demo's drift", () => {
  it('starts each scripted target where the script says, before any request', () => {
    const start = demoDrift().filter((s) => s.afterMs === 0);
    expect(start.map(keyOf).sort()).toEqual(
      [...DRIFTERS, SURFACE_DRIFTER, `${GEO} *`, `${GEO} ${DEMO_SOURCE_ADDRESSES['us-east']}`].sort(),
    );
    for (const step of start) expect(stateIn(sim, step)).toBe(stateOf(step));
  });

  it('gives an era move each way, a downgrade, a failing pin and a surface change of each severity in one cycle, then repeats', async () => {
    const cycle = demoDrift().filter((s) => s.afterMs > 0 && s.afterMs < DEMO_CYCLE_MS);
    const minutes = [0, ...new Set(cycle.map((s) => s.afterMs / 60_000))];
    const current = new Map<string, Revision>();
    const pinState = new Map<string, string>();
    const pinSpoke = new Set<string>();
    let surfaces: Map<string, Surface> | undefined;
    const events: string[] = [];

    for (const minute of minutes) {
      for (const step of cycle.filter((s) => s.afterMs === minute * 60_000)) {
        if (isFaceDriftStep(step)) sim.face(step.target, step.face, step.address);
        else if (isSurfaceDriftStep(step)) sim.driftSurface(step.target, step.surface);
        else sim.drift(step.target, step.revisions);
      }
      // geo from each region, as its agent (from its source address) runs the newest test.
      for (const [region, dispatcher] of Object.entries(fromRegion)) {
        const key = `${GEO} ${region}`;
        const was = current.get(key);
        const run = await handshake(sim.target(GEO).url, {
          revision: 'newest',
          dispatcher,
          ...(was ? { current: was } : {}),
        });
        expect(run.outcome, `${minute} min ${key}: ${run.message}`).toMatch(/^(success|downgrade)$/);
        const now = run.negotiated as Revision;
        if (was === undefined) events.push(`${minute} min ${key}: speaks ${now}`);
        else if (now !== was)
          events.push(`${minute} min ${key}: now ${now}, was ${run.previousRevision} (${run.outcome})`);
        current.set(key, now);
      }
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
      // The surface test reads every era; ingest diffs each against the last read of its era.
      const now = await surfacesOf(sim.target(SURFACE_DRIFTER).url);
      expect([...now.keys()].sort(), `${minute} min`).toEqual(['legacy', 'modern']);
      expect(now.get('legacy')!.tools, `${minute} min: both eras offer the same`).toEqual(now.get('modern')!.tools);
      if (surfaces === undefined)
        events.push(
          `${minute} min ${SURFACE_DRIFTER}: ${now
            .get('modern')!
            .tools.map((t) => t.name)
            .join(', ')}`,
        );
      else {
        const [legacy, modern] = (['legacy', 'modern'] as const).map((era) =>
          diffSurfaces(surfaces!.get(era)!, now.get(era)!).map((c) => `${c.severity}: ${c.message}`),
        );
        expect(legacy, `${minute} min: the same changes in both eras`).toEqual(modern);
        for (const change of modern!) events.push(`${minute} min ${SURFACE_DRIFTER}: ${change}`);
      }
      surfaces = now;
    }

    expect(events).toEqual([
      '0 min geo eu-west: speaks 2026-07-28',
      '0 min geo us-east: speaks 2026-07-28',
      '0 min drifter-modern: speaks 2025-11-25',
      '0 min drifter: speaks 2025-11-25',
      '0 min drifter-pinned: speaks 2025-11-25',
      '0 min drifter-pinned 2025-03-26: passes',
      '0 min drifter-pinned 2025-11-25: passes',
      '0 min surface-drifter: create_order, get_weather',
      '1 min drifter-modern: now 2026-07-28, was 2025-11-25 (success)',
      '2 min drifter: now 2025-06-18, was 2025-11-25 (downgrade)',
      '2 min surface-drifter: info: tool `create_order`: optional parameter `note` added',
      '3 min drifter-pinned 2025-03-26: Server no longer speaks protocol 2025-03-26',
      // A rollout behind geo-DNS undone in one region: the regions disagree for five minutes.
      '4 min geo us-east: now 2025-11-25, was 2026-07-28 (downgrade)',
      '4 min surface-drifter: warning: tool `get_weather`: optional parameter `units` removed',
      '6 min surface-drifter: breaking: tool `create_order`: parameter `currency` now required',
      '7 min drifter-modern: now 2025-11-25, was 2026-07-28 (downgrade)',
      '7 min drifter-pinned 2025-03-26: passes',
      // Back to the base: nothing breaks on the way back.
      '8 min surface-drifter: info: tool `create_order`: parameter `currency` now optional',
      '8 min surface-drifter: warning: tool `create_order`: optional parameter `note` removed',
      '8 min surface-drifter: info: tool `get_weather`: optional parameter `units` added',
      // Forward again inside the flap window: one flap, and the regions agree.
      '9 min geo us-east: now 2026-07-28, was 2025-11-25 (success)',
    ]);

    // From 9 minutes everything is back where the cycle started, so the next cycle repeats it.
    const start = demoDrift().filter((s) => s.afterMs === 0);
    for (const step of start) expect(stateIn(sim, step)).toBe(stateOf(step));
    const next = demoDrift().filter((s) => s.afterMs >= DEMO_CYCLE_MS && s.afterMs < 2 * DEMO_CYCLE_MS);
    expect(next.map((s) => ({ ...s, afterMs: s.afterMs - DEMO_CYCLE_MS }))).toEqual(cycle);
  });

  it('knows where the script is at any time of the demo, so a restarted demo resumes it', () => {
    const speaks = (elapsedMs: number, cycleMs?: number) =>
      Object.fromEntries(demoStateAt(elapsedMs, cycleMs).map((s) => [keyOf(s), stateOf(s)]));
    const start = speaks(0);
    expect(start).toEqual(
      Object.fromEntries(
        demoDrift()
          .filter((s) => s.afterMs === 0)
          .map((s) => [keyOf(s), stateOf(s)]),
      ),
    );
    // Four minutes in: the three moves made, the surface at its warning, geo's us-east side rolled
    // back; six and a half: at its breaking change; from nine minutes in: back to the start; and
    // cycle after cycle.
    const usEast = `${GEO} ${DEMO_SOURCE_ADDRESSES['us-east']}`;
    const moved = {
      ...start,
      'drifter-modern': '2026-07-28',
      drifter: '2025-06-18',
      'drifter-pinned': '2025-06-18 2025-11-25',
      'surface-drifter': 'surface 2',
      [usEast]: 'face legacy',
    };
    expect(speaks(4 * 60_000)).toEqual(moved);
    expect(speaks(6.5 * 60_000)).toEqual({ ...moved, 'surface-drifter': 'surface 3' });
    expect(speaks(7.5 * 60_000)).toEqual({ ...start, 'surface-drifter': 'surface 3', [usEast]: 'face legacy' });
    expect(speaks(8 * 60_000)).toEqual({ ...start, [usEast]: 'face legacy' });
    expect(speaks(9 * 60_000)).toEqual(start);
    expect(speaks(5 * DEMO_CYCLE_MS + 4 * 60_000)).toEqual(moved);
    // A faster cycle scales the script: 150 s long, the moves are at 15, 30 and 45 s.
    expect(speaks(14_000, 150_000)['drifter-modern']).toBe('2025-11-25');
    expect(speaks(15_000, 150_000)['drifter-modern']).toBe('2026-07-28');
  });
});

describe("the demo's fleet file", () => {
  // Needs the fleet file's script keys (steps, allowWrites), which config gains on issue16-pipeline.
  it('watches surface-drifter with a surface test every minute and a read-only script', async () => {
    // The whole fleet, as `mcp-fleet up` starts it.
    const whole = await startSim();
    let fleet: ReturnType<typeof parseFleet>;
    try {
      fleet = parseFleet(demoFleetYaml(whole), 'the demo fleet');
    } finally {
      await whole.close();
    }
    const server = fleet.servers.find((s) => s.name === SURFACE_DRIFTER);
    expect(server?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(server?.tests).toMatchObject([
      { mode: 'newest', depth: 'handshake' },
      { mode: 'newest', depth: 'surface', intervalMs: 60_000 },
      {
        mode: 'newest',
        depth: 'script',
        intervalMs: 60_000,
        script: {
          steps: [
            {
              method: 'tools/call',
              params: { name: 'get_weather', arguments: { city: 'Paris' } },
              expect: [
                { isError: false },
                { path: '$.content[0].text', contains: 'Weather in Paris' },
                { latencyMs: 2000 },
              ],
            },
          ],
        },
      },
    ]);
    // And dual-era-diff, whose eras differ, with a surface test every 5 minutes.
    expect(fleet.servers.find((s) => s.name === 'dual-era-diff')?.tests).toMatchObject([
      { mode: 'newest', depth: 'handshake' },
      { mode: 'newest', depth: 'surface', intervalMs: 300_000 },
    ]);
  });

  it("watches the monitor's own /mcp too, with a newest-supported and a conformance test", async () => {
    const monitor = demoMonitor({ host: '127.0.0.1', port: 7070 }, [], false);
    expect(monitor).toEqual({ url: 'http://127.0.0.1:7070/mcp' });
    const whole = await startSim();
    let fleet: ReturnType<typeof parseFleet>;
    let without: ReturnType<typeof parseFleet>;
    try {
      fleet = parseFleet(demoFleetYaml(whole, 15, monitor as { url: string }), 'the demo fleet');
      // Without it (a fleet file, or an API the demo cannot reach on loopback), only the simulated servers.
      without = parseFleet(demoFleetYaml(whole), 'the demo fleet');
    } finally {
      await whole.close();
    }
    const self = fleet.servers.find((s) => s.name === 'mcp-fleet');
    expect(self?.url).toBe('http://127.0.0.1:7070/mcp');
    expect(self?.tests).toMatchObject([
      { mode: 'newest', depth: 'handshake' },
      { mode: 'newest', depth: 'conformance', intervalMs: 300_000 },
    ]);
    expect(without.servers.map((s) => s.name)).not.toContain('mcp-fleet');
    expect(fleet.servers).toHaveLength(without.servers.length + 1);
  });

  it('runs one stdio server through the launcher its agents allowlist, 4× less often than the rest', async () => {
    const whole = await startSim();
    let fleet: ReturnType<typeof parseFleet>;
    try {
      fleet = parseFleet(
        demoFleetYaml(whole, 15, undefined, '/data/demo-stdio/mcp-fleet-sim-stdio-v2'),
        'the demo fleet',
      );
    } finally {
      await whole.close();
    }
    const stdio = fleet.servers.find((s) => s.name === DEMO_STDIO_NAME);
    expect(stdio?.command).toEqual({ command: '/data/demo-stdio/mcp-fleet-sim-stdio-v2', args: [], env: {} });
    expect(stdio?.url).toBe('stdio: /data/demo-stdio/mcp-fleet-sim-stdio-v2');
    expect(stdio?.intervalMs).toBe(60_000);
    expect(stdio?.tests).toMatchObject([
      { mode: 'newest', depth: 'handshake' },
      { mode: 'newest', depth: 'conformance', intervalMs: 900_000 },
    ]);
  });

  it('finds the monitor on loopback, with a read token where control has tokens and can seal one', () => {
    const api = { host: '0.0.0.0', port: 7070 };
    expect(demoMonitor(api, [], false)).toEqual({ url: 'http://127.0.0.1:7070/mcp' });
    expect(demoMonitor({ host: '127.0.0.5', port: 9 }, [], false)).toEqual({ url: 'http://127.0.0.5:9/mcp' });
    // The demo's policy is loopback only: an API on another address is not watched, and the reason says so.
    expect(demoMonitor({ host: '192.0.2.10', port: 7070 }, [], false)).toMatch(/listens on 192\.0\.2\.10/);
    const tokens = [
      { scope: 'admin' as const, token: 'a'.repeat(40) },
      { scope: 'read' as const, token: 'r'.repeat(40) },
    ];
    expect(demoMonitor(api, tokens, true)).toEqual({
      url: 'http://127.0.0.1:7070/mcp',
      headers: { Authorization: `Bearer ${'r'.repeat(40)}` },
    });
    expect(demoMonitor(api, tokens.slice(0, 1), true)).toMatchObject({
      headers: { Authorization: `Bearer ${'a'.repeat(40)}` },
    });
    // A token is never stored in plaintext: with no key to seal it, the monitor is left out.
    expect(demoMonitor(api, tokens, false)).toMatch(/MCP_FLEET_SECRET_KEY/);
  });

  it('gets from surface-drifter what its script expects, at every stage of the cycle', async () => {
    const client = new Client(
      { name: 'demo-test', version: '0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(sim.target(SURFACE_DRIFTER).url)));
    try {
      for (const stage of [0, 1, 2, 3] as const) {
        sim.driftSurface(SURFACE_DRIFTER, stage);
        const { tools } = await client.listTools();
        // The script runs without allowWrites: get_weather stays read-only.
        expect(tools.find((t) => t.name === 'get_weather')?.annotations?.readOnlyHint, `stage ${stage}`).toBe(true);
        const answer = await client.callTool({ name: 'get_weather', arguments: { city: 'Paris' } });
        expect(answer.isError ?? false).toBe(false);
        expect(answer.content).toMatchObject([{ type: 'text', text: expect.stringContaining('Weather in Paris') }]);
      }
    } finally {
      sim.driftSurface(SURFACE_DRIFTER, 0);
      await client.close();
    }
  });
});
