// Control's own probes (a pinned test's first run, /api/detect) obey the target policy after DNS,
// as agents do: a host name that resolves to a denied address is refused, and never dialled. And
// they obey control's own probe floor (default: public addresses only) narrowed by the fleet's
// policy, so a fleet that allows loopback does not open control's own network to them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryBus } from '@mcp-fleet/bus';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { openStore, type Store } from '@mcp-fleet/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Control, parseFleet, startControl } from '../src';

let dir: string;
let store: Store;
let bus: ReturnType<typeof createMemoryBus>;
let control: Control;
let sim: Sim;
const log = createLogger('test', 'silent');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-api-policy-'));
  store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  bus = createMemoryBus({ log });
  // Loopback is allowed, but 127.0.0.1 itself (and so `localhost`) is denied.
  const fleet = parseFleet(
    'regions: [eu-west]\nservers: []\npolicy: { allow: ["127.0.0.0/8"], deny: ["127.0.0.1/32"] }\n',
    'policy test',
  );
  control = await startControl({ store, bus, log, fleet, port: 0, probeFloor: { allow: ['127.0.0.0/8'], deny: [] } });
  sim = await startSim({ only: ['modern'] });
});

afterAll(async () => {
  await control?.stop();
  await bus?.close();
  await store?.close();
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = async (path: string, json: unknown, to = control) => {
  const res = await fetch(`${to.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(json),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe("control's own probes and the target policy", () => {
  it('refuses an address literal the policy denies before probing', async () => {
    const res = await post('/api/detect', { url: sim.target('modern').url });
    expect(res.status).toBe(400);
    expect(String(res.body.error)).toContain('127.0.0.1');
    expect(sim.requests('modern')).toHaveLength(0);
  });

  it('refuses, after DNS, a host name that resolves to a denied address: no request reaches it', async () => {
    const url = sim.target('modern').url.replace('127.0.0.1', 'localhost');
    const detection = await post('/api/detect', { url });
    // Refused up front (the name is known to be loopback) or by the guarded dispatcher after DNS.
    if (detection.status === 200) {
      expect(detection.body.outcome).toBe('NONE');
      const revisions = detection.body.revisions as { evidence?: { message?: string } }[];
      for (const r of revisions) expect(r.evidence?.message ?? '').toMatch(/polic/i);
    } else {
      expect(detection.status).toBe(400);
      expect(String(detection.body.error)).toMatch(/polic/i);
    }

    const pinned = await post('/api/servers', { name: 'sneaky', url, tests: [{ revision: '2026-07-28' }] });
    expect([400, 422]).toContain(pinned.status);
    expect(sim.requests('modern')).toHaveLength(0);
  });
});

describe("control's own probe floor", () => {
  // The fleet allows loopback, as the demo's does; only the floor differs between the two controls.
  const loopbackFleet = () =>
    parseFleet('regions: [eu-west]\nservers: []\npolicy: { allow: ["127.0.0.0/8"] }\n', 'floor test');
  let withDefaultFloor: Control;
  let withLoopbackFloor: Control;
  beforeAll(async () => {
    withDefaultFloor = await startControl({ store, bus, log, fleet: loopbackFleet(), port: 0 });
    withLoopbackFloor = await startControl({
      store,
      bus,
      log,
      fleet: loopbackFleet(),
      port: 0,
      probeFloor: { allow: ['127.0.0.0/8'], deny: [] },
    });
  });
  afterAll(async () => {
    await withDefaultFloor?.stop();
    await withLoopbackFloor?.stop();
  });

  it('refuses /api/detect of a loopback target with the default floor, even though the fleet allows 127.0.0.0/8', async () => {
    const before = sim.requests('modern').length;
    for (const url of [sim.target('modern').url, sim.target('modern').url.replace('127.0.0.1', 'localhost')]) {
      const res = await post('/api/detect', { url }, withDefaultFloor);
      expect(res.status, url).toBe(400);
      expect(String(res.body.error), url).toBe(
        'url: 127.0.0.1 is loopback, private or link-local and the probe floor (MCP_FLEET_PROBE_ALLOW) does not cover it',
      );
    }
    // A pinned test's first run is control's own probe too: refused, naming the floor, and not saved.
    const pinned = await post(
      '/api/servers',
      { name: 'floor-pin', url: sim.target('modern').url, tests: [{ revision: '2026-07-28' }] },
      withDefaultFloor,
    );
    expect(pinned.status).toBe(422);
    expect(String(pinned.body.error)).toMatch(/the probe floor \(MCP_FLEET_PROBE_ALLOW\) does not cover it/);
    const listed = (await (await fetch(`${withDefaultFloor.url}/api/servers`)).json()) as {
      servers: { name: string }[];
    };
    expect(listed.servers.map((s) => s.name)).not.toContain('floor-pin');
    expect(sim.requests('modern').length).toBe(before);
  });

  it('detects the same target when the floor allows loopback', async () => {
    const res = await post('/api/detect', { url: sim.target('modern').url }, withLoopbackFloor);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'DETECTED', newestSupported: '2026-07-28' });
  });
});
