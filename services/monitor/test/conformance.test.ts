// Conformance-depth tests end to end on real parts (Postgres + NATS JetStream, fleet-sim's SDK
// servers): the scheduler sends the depth, the agent runs the era's checks after the handshake,
// ingest files each check's state per region, and the API and both /metrics say who passes.
import { runs } from '@mcp-fleet/store';
import { parseMetrics, seriesValue, waitFor } from '@mcp-fleet/testkit';
import { and, eq, isNotNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGIONS, startTestMonitor, type TestMonitor } from './support';

interface ConformanceBody {
  tests: {
    regions: {
      region: string;
      checks: { checkId: string; level: string; status: string; since: string; era: string }[];
    }[];
  }[];
}

describe('conformance-depth tests on Postgres + NATS', () => {
  let m: TestMonitor;
  const SERVERS = [
    { name: 'catalogue', conformance: '3s' },
    // A 2026-07-28 server that answers a missing resource with -32002 (a MUST, and a retired code).
    { name: 'defect-resource_not_found_error', conformance: '3s' },
    // A legacy (SDK 1.32) server whose initialize has no serverInfo.
    { name: 'defect-server_info_present', conformance: '3s' },
  ];
  const idOf = async (name: string) =>
    (await m.api<{ servers: { id: string; name: string }[] }>('/api/servers')).body.servers.find(
      (s) => s.name === name,
    )!.id;
  const conformanceOf = async (name: string) =>
    (await m.api<ConformanceBody>(`/api/servers/${await idOf(name)}/conformance`)).body.tests.flatMap((t) => t.regions);

  beforeAll(async () => {
    m = await startTestMonitor('postgres+nats', SERVERS);
    await waitFor(
      'every conformance test judged in both regions',
      async () => {
        for (const s of SERVERS) {
          const regions = await conformanceOf(s.name);
          if (!REGIONS.every((r) => regions.some((x) => x.region === r && x.checks.length > 0))) return false;
        }
        return true;
      },
      60_000,
    );
  }, 90_000);
  afterAll(async () => {
    await m?.close();
  });

  it('a clean SDK 2.4 server fails no MUST check in either region', async () => {
    for (const region of await conformanceOf('catalogue')) {
      expect(region.checks.every((c) => c.era === 'modern')).toBe(true);
      expect(region.checks.filter((c) => c.level === 'MUST' && c.status === 'fail')).toEqual([]);
      expect(region.checks.find((c) => c.checkId === 'resource_not_found_error')?.status).toBe('pass');
    }
  });

  it('a defect is a failing check in every region, with the time it began', async () => {
    for (const region of await conformanceOf('defect-resource_not_found_error')) {
      const check = region.checks.find((c) => c.checkId === 'resource_not_found_error')!;
      expect(check).toMatchObject({ level: 'MUST', status: 'fail', era: 'modern' });
      expect(Date.parse(check.since)).not.toBeNaN();
      expect(region.checks.find((c) => c.checkId === 'reserved_error_codes')?.status).toBe('fail');
    }
    for (const region of await conformanceOf('defect-server_info_present')) {
      const check = region.checks.find((c) => c.checkId === 'server_info_present')!;
      expect(check).toMatchObject({ level: 'MUST', status: 'fail', era: 'legacy' });
    }
  });

  it('runs keep their check list; handshake-depth runs carry none', async () => {
    const id = await idOf('catalogue');
    const judged = await m.store.db
      .select({ checks: runs.checks })
      .from(runs)
      .where(and(eq(runs.serverId, id), isNotNull(runs.checks)))
      .limit(1);
    expect(judged).toHaveLength(1);
    expect((judged[0]!.checks as { id: string }[]).length).toBeGreaterThan(10);
    const bare = await m.store.db.select({ n: runs.id }).from(runs).where(eq(runs.serverId, id));
    expect(bare.length).toBeGreaterThan(judged.length);
  });

  it("control's gauges say who passes; the agents count each check's outcome", async () => {
    // The gauges read a server again after a run moved one of its checks (fleet-gauges.ts): wait for
    // both regions' failing MUST to reach it on a loaded machine.
    const control = await waitFor('the conformance gauges to show both regions', async () => {
      const s = parseMetrics(await (await fetch(`${m.control.url}/metrics`)).text());
      const must = seriesValue(s, 'mcp_conformance_must_failing', { server: 'defect-resource_not_found_error' });
      return must >= 2 && s;
    });
    expect(seriesValue(control, 'mcp_conformance_passing', { server: 'catalogue' })).toBe(1);
    expect(seriesValue(control, 'mcp_conformance_passing', { server: 'defect-resource_not_found_error' })).toBe(0);
    expect(
      seriesValue(control, 'mcp_conformance_must_failing', { server: 'defect-resource_not_found_error' }),
    ).toBeGreaterThanOrEqual(2);
    const agent = parseMetrics(await m.agents[0]!.registry.metrics());
    expect(
      seriesValue(agent, 'mcp_conformance_checks_total', {
        check: 'resource_not_found_error',
        level: 'must',
        status: 'fail',
        era: 'modern',
        region: m.agents[0]!.region,
      }),
    ).toBeGreaterThan(0);
  });
});
