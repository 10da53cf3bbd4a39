// Multi-region truth end to end (issue 17, item 7), on real parts only: Postgres, NATS JetStream,
// control, two agents (eu-west probing from 127.0.0.1, us-east from 127.0.0.2), fleet-sim's geo
// server answering each by its address, Prometheus-format /metrics, the API, and the dashboard in
// Chromium. One story, in order: a one-region change (region disagreement, on the servers table)
// confirmed in runs; undone inside the window (one flap, the disagreement ended); an all-region move
// confirmed by the regions; a region down (consensus by quorum: `half` fails, `all` holds).
// Two fleet servers watch the one geo target, with quorum `half` (the default) and `all`.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestMonitor, type TestMonitor } from '@mcp-fleet/monitor/testing';
import { parseMetrics, seriesValue, waitFor } from '@mcp-fleet/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../tools/browser';
import { type DashboardProcess, startDashboardProcess } from '../tools/next-process';

interface Move {
  serverName: string;
  region: string;
  fromRevision: string;
  toRevision: string;
  state: string;
  confirmedBy: string | null;
  seenRuns: number;
  flapOf: number | null;
}
interface Regions {
  consensus: {
    test: string;
    regionsTotal: number;
    regionsFailing: number;
    failing: boolean;
    failingRegions: string[];
  }[];
  disagreements: { open: { text: string; revisions: Record<string, string> }[]; history: { endedAt: string | null }[] };
}

let m: TestMonitor;
let web: DashboardProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
const ids: Record<string, string> = {};
const shots = join(tmpdir(), 'mcp-fleet-screenshots');

beforeAll(async () => {
  m = await startTestMonitor(
    'postgres+nats',
    [{ name: 'geo' }, { name: 'geo-all', target: 'geo', judgement: { quorum: 'all' } }],
    {
      // Three runs confirm a move in one region; a move back within a minute is a flap; regions
      // that disagree for 2 s alert. The geo target shows both regions `modern` to begin with.
      judgement: { confirmAfter: 3, flapWindow: '1m', disagreementAfter: '2s' },
      sourceAddresses: { 'eu-west': '127.0.0.1', 'us-east': '127.0.0.2' },
    },
  );
  m.sim.face('geo', 'modern');
  const { servers } = (await m.api<{ servers: { id: string; name: string }[] }>('/api/servers')).body;
  for (const s of servers) ids[s.name] = s.id;
  web = await startDashboardProcess({ DATABASE_URL: m.databaseUrl!, MCP_FLEET_API_URL: m.control.url });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  mkdirSync(shots, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await m?.close();
});

const current = async (name: string): Promise<Record<string, string | null>> => {
  const { servers } = (
    await m.api<{ servers: { name: string; byRegion: { region: string; currentRevision: string | null }[] }[] }>(
      '/api/servers',
    )
  ).body;
  const s = servers.find((x) => x.name === name);
  return Object.fromEntries((s?.byRegion ?? []).map((r) => [r.region, r.currentRevision]));
};
const both = (name: string, revision: string) =>
  waitFor(
    `${name} on ${revision} in both regions`,
    async () => {
      const c = await current(name);
      return c['eu-west'] === revision && c['us-east'] === revision;
    },
    30_000,
  );
const moves = async (view: 'raw' | 'confirmed', name = 'geo'): Promise<Move[]> =>
  (await m.api<{ moves: Move[] }>(`/api/era-moves?server=${ids[name]}&view=${view}&limit=100`)).body.moves;
const regions = async (name: string) => (await m.api<Regions>(`/api/servers/${ids[name]}/regions`)).body;
const metric = async (name: string, labels: Record<string, string>) => {
  const res = await fetch(`${m.control.url}/metrics`);
  return seriesValue(parseMetrics(await res.text()), name, labels);
};

describe('multi-region truth through the real pipeline', () => {
  it('each region speaks from its own address: both start on 2026-07-28, and agree', async () => {
    await both('geo', '2026-07-28');
    const from = new Set(m.sim.requests('geo').map((r) => r.remoteAddress));
    expect(from).toEqual(new Set(['127.0.0.1', '127.0.0.2']));
    expect((await regions('geo')).disagreements.open).toEqual([]);
  });

  it('a one-region change (us-east rolled back to legacy): region disagreement (API, gauge, servers table), the move confirmed in three runs', async () => {
    m.sim.face('geo', 'legacy', '127.0.0.2');
    const open = await waitFor(
      'the disagreement opened',
      async () => (await regions('geo')).disagreements.open[0],
      30_000,
    );
    expect(open.revisions).toEqual({ 'eu-west': '2026-07-28', 'us-east': '2025-11-25' });
    expect(open.text).toMatch(/^eu-west 2026-07-28, us-east 2025-11-25 for \d+ s$/);
    // Past disagreementAfter (2 s), the alerting gauge says so.
    await waitFor(
      'the disagreement gauge at 1',
      async () => (await metric('mcp_server_region_disagreement', { server: 'geo' })) === 1,
      30_000,
    );

    // One region saw the move: it waits for three runs there (a quorum takes two regions).
    const move = await waitFor(
      'us-east’s move confirmed',
      async () => {
        const x = (await moves('raw')).find((y) => y.region === 'us-east' && y.toRevision === '2025-11-25');
        return x?.state === 'confirmed' && x;
      },
      30_000,
    );
    expect(move).toMatchObject({ fromRevision: '2026-07-28', confirmedBy: 'runs', seenRuns: 3 });

    await page.goto(`${web.url}/servers`);
    const row = page.locator('[data-testid=servers-table] tbody tr', { hasText: 'geo-all' });
    expect(await row.getByTestId('disagreement').textContent()).toMatch(
      /^regions disagree: eu-west 2026-07-28, us-east 2025-11-25 for \d+ (s|min)$/,
    );
    await page.getByTestId('servers-table').screenshot({ path: join(shots, 'regions-pipeline-disagreement.png') });
  });

  it('undone inside the window, it is one flap, not two moves and a downgrade; the regions agree again', async () => {
    m.sim.face('geo', 'modern-only', '127.0.0.2');
    const flap = await waitFor(
      'the flap',
      async () => {
        const list = (await moves('confirmed')).filter((x) => x.region === 'us-east' && x.state === 'flapping');
        return list.length === 1 && list[0];
      },
      30_000,
    );
    expect(flap).toMatchObject({ fromRevision: '2025-11-25', toRevision: '2026-07-28' });
    expect(flap.flapOf).not.toBeNull();
    // The raw history keeps both halves.
    const raw = (await moves('raw')).filter((x) => x.region === 'us-east' && x.state === 'flapping');
    expect(raw).toHaveLength(2);
    expect(await metric('mcp_era_flaps_total', { server: 'geo', region: 'us-east' })).toBe(1);
    await waitFor('the disagreement ended', async () => (await regions('geo')).disagreements.open.length === 0, 30_000);
    expect((await regions('geo')).disagreements.history[0]?.endedAt).not.toBeNull();
    expect(await metric('mcp_server_region_disagreement', { server: 'geo' })).toBe(0);

    await page.goto(`${web.url}/era-moves?range=24h`);
    const flapRow = page.locator('[data-testid=era-moves] tbody tr', { hasText: 'flapping:' }).first();
    expect(await flapRow.getByTestId('move').textContent()).toContain('flapping: 2026-07-28→2025-11-25→2026-07-28');
  });

  it('then an all-region move (both sides legacy) is confirmed by the two regions, before three runs', async () => {
    m.sim.face('geo', 'legacy');
    m.sim.face('geo', 'legacy', '127.0.0.2');
    const confirmed = await waitFor(
      'the move confirmed in both regions',
      async () => {
        const list = (await moves('confirmed')).filter(
          (x) => x.toRevision === '2025-11-25' && x.state === 'confirmed' && x.confirmedBy === 'regions',
        );
        return list.length === 2 && list;
      },
      30_000,
    );
    for (const x of confirmed) {
      expect(x).toMatchObject({ fromRevision: '2026-07-28', confirmedBy: 'regions' });
      expect(x.seenRuns).toBeLessThan(3);
    }
    expect(
      await metric('mcp_era_moves_confirmed_total', {
        server: 'geo',
        from_version: '2026-07-28',
        to_version: '2025-11-25',
        region: 'eu-west',
      }),
    ).toBe(1);
  });

  it('one region down: quorum `half` of two regions fails the test, quorum `all` holds until both are down', async () => {
    m.sim.face('geo', 'down', '127.0.0.2');
    const labels = (server: string) => ({ server, test: 'newest/handshake', revision: 'newest' });
    // geo and geo-all are probed at their own moments, and the gauges read a server again
    // after a run moved something of it (fleet-gauges.ts): wait until one scrape shows both failing in us-east.
    await waitFor(
      'us-east failing for geo and geo-all',
      async () =>
        (await metric('mcp_test_failing', labels('geo'))) === 1 &&
        (await metric('mcp_test_regions_failing', labels('geo-all'))) === 1,
      30_000,
    );
    expect(await metric('mcp_test_regions_failing', labels('geo'))).toBe(1);
    expect(await metric('mcp_test_failing', labels('geo-all'))).toBe(0);
    const consensus = (await regions('geo-all')).consensus[0]!;
    expect(consensus).toMatchObject({
      regionsTotal: 2,
      regionsFailing: 1,
      failing: false,
      failingRegions: ['us-east'],
    });

    await page.goto(`${web.url}/servers/${ids['geo-all']}`);
    const rows = await page.getByTestId('regions').locator('[data-testid=consensus-table] tbody tr').allTextContents();
    expect(rows[0]).toContain('1 / 2');
    expect(rows[0]).toContain('us-east');

    m.sim.face('geo', 'down');
    await waitFor(
      'geo-all failing in both regions',
      async () => (await metric('mcp_test_failing', labels('geo-all'))) === 1,
      30_000,
    );
    expect((await regions('geo-all')).consensus[0]).toMatchObject({ regionsFailing: 2, failing: true });
  });
});
