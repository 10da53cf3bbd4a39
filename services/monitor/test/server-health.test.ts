// A server is judged by the worst state across its tests, in the API and in mcp_server_up alike:
// a pin that fails is not hidden by a newer success of the newest-supported test, and a server
// with only pinned tests has an mcp_server_up series. Real parts: Postgres, NATS, agents, SDK servers.
import type { ServerOverview } from '@mcp-fleet/store';
import { parseMetrics, type Sample, waitFor } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGIONS, startTestMonitor, type TestMonitor } from './support';

let m: TestMonitor;
const servers = async () => (await m.api<{ servers: ServerOverview[] }>('/api/servers')).body.servers;
const named = async (name: string) => (await servers()).find((s) => s.name === name)!;
const metrics = async () => parseMetrics(await (await fetch(`${m.control.url}/metrics`)).text());
/** Every mcp_server_up sample of a server, by region (absent regions are absent: not 0). */
const upOf = (samples: Sample[], server: string) =>
  Object.fromEntries(
    samples
      .filter((s) => s.name === 'mcp_server_up' && s.labels.server === server)
      .map((s) => [s.labels.region, s.value]),
  );

beforeAll(async () => {
  m = await startTestMonitor('postgres+nats', [
    // Newest supported and a pin on 2025-06-18, which the drift below takes away.
    { name: 'drifter', tests: ['newest', '2025-06-18'] },
    // Only a pinned test.
    { name: 'drifter-pinned', tests: ['2025-03-26'] },
  ]);
  await waitFor(
    'both servers to have passed in both regions',
    async () =>
      (await servers()).every((s) => s.health === 'up' && s.tests.every((t) => t.states.length === REGIONS.length)),
    30_000,
  );
}, 60_000);

afterAll(async () => {
  await m?.close();
});

describe('the worst state across tests', () => {
  it('mcp_server_up has a series for a server with only pinned tests: 1 while its pin passes', async () => {
    // The gauges read a server again after a run moved something of it (fleet-gauges.ts): on a
    // loaded machine that read trails the API by up to ten times a read's duration.
    await waitFor(
      'mcp_server_up for drifter-pinned in both regions',
      async () => Object.keys(upOf(await metrics(), 'drifter-pinned')).length === 2,
      15_000,
    );
    expect(upOf(await metrics(), 'drifter-pinned')).toEqual({ 'eu-west': 1, 'us-east': 1 });
  });

  it('the API gives each region the failing pin and the server fails, though its newest test ran last and passed', async () => {
    m.sim.drift('drifter', ['2025-11-25']);
    m.sim.drift('drifter-pinned', ['2025-06-18', '2025-11-25']);
    // The pin fails in both regions, and the latest run of each region is the newest-supported
    // test's success: what the old "last outcome" showed. Both tests run every slot in no fixed
    // order, so each region is caught on its own, at a moment its latest run is that success.
    type Region = ServerOverview['byRegion'][number];
    const caught = new Map<string, Region>();
    const drifter = await waitFor(
      'the pin to fail in both regions, and in each a passing newest-supported run after it',
      async () => {
        const s = await named('drifter');
        const pinned = s.tests.find((t) => t.mode === 'pinned');
        const failing = pinned?.states.length === 2 && pinned.states.every((st) => st.failing);
        if (!failing) return false;
        for (const r of s.byRegion) if (r.lastOutcome === 'success' && !caught.has(r.region)) caught.set(r.region, r);
        return caught.size === REGIONS.length && s;
      },
      30_000,
    );
    const pinned = drifter.tests.find((t) => t.mode === 'pinned')!;
    expect(drifter.health).toBe('failing');
    for (const region of caught.values()) {
      expect(region.state).toMatchObject({
        outcome: 'unsupported_version',
        failing: true,
        test: { id: pinned.id, mode: 'pinned', pinnedRevision: '2025-06-18' },
        message: 'Server no longer speaks protocol 2025-06-18',
        assertion: { name: 'mcp.protocol.revision', expected: '2025-06-18', actual: '2025-11-25' },
      });
      // The fields that were there stay, as they were.
      expect(region.lastOutcome).toBe('success');
      expect(region).toHaveProperty('failing', true);
      expect(region.currentRevision).toBe('2025-11-25');
    }

    // The server's own answer says the same.
    const one = await m.api<{ server: ServerOverview }>(`/api/servers/${drifter.id}`);
    expect(one.body.server.health).toBe('failing');
    expect(one.body.server.byRegion.map((r) => [r.region, r.state?.outcome, r.state?.test.id])).toEqual(
      REGIONS.map((region) => [region, 'unsupported_version', pinned.id]),
    );

    // And the fleet summary counts it among the failing servers.
    const summary = await waitFor('drifter-pinned to fail too', async () => {
      const { body } = await m.api<{ health: Record<string, number> }>('/api/fleet/summary?range=1h');
      return body.health.failing === 2 && body;
    });
    expect(summary.health).toEqual({ failing: 2, degraded: 0, up: 0, not_run: 0 });
  });

  it('mcp_server_up is 0 where a pinned-only server fails its pin', async () => {
    const samples = await waitFor('mcp_server_up to follow the failing pins', async () => {
      const s = await metrics();
      const pinnedOnly = upOf(s, 'drifter-pinned');
      return pinnedOnly['eu-west'] === 0 && pinnedOnly['us-east'] === 0 && s;
    });
    expect(upOf(samples, 'drifter-pinned')).toEqual({ 'eu-west': 0, 'us-east': 0 });
    // The server whose newest-supported test passes is down too: its pin fails.
    expect(upOf(samples, 'drifter')).toEqual({ 'eu-west': 0, 'us-east': 0 });
  });
});
