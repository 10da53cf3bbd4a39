// The verdicts in the browser: the overview leads with live servers failing / degraded / up / not
// run yet (the API's counts), each card a link to exactly those servers, and the servers table and
// server page show each region's worst state across tests with the test that caused it — a failing
// pin is not hidden by a newer success. A real monitor (Postgres, NATS, control, two agents, SDK
// servers from fleet-sim), the built dashboard as its own process, Debian's Chromium.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestMonitor, type TestMonitor } from '@mcp-fleet/monitor/testing';
import { createServer, type FleetSummary, recordRun, type ServerOverview } from '@mcp-fleet/store';
import { handshakeRun, resultOf, serverWithTests } from '@mcp-fleet/store/testing';
import { waitFor } from '@mcp-fleet/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../tools/browser';
import { type DashboardProcess, startDashboardProcess } from '../tools/next-process';

/** Where the screenshots for the note go (MCP_FLEET_SHOTS_DIR, else none are taken). */
const SHOTS = process.env.MCP_FLEET_SHOTS_DIR;
/** Fleet regions no agent serves: runs recorded there are never overwritten by a real probe. */
const QUIET_REGIONS = ['ap-south', 'sa-east'];
const HEALTHS = ['failing', 'degraded', 'up', 'not_run'] as const;

let m: TestMonitor;
let web: DashboardProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

const servers = async () => (await m.api<{ servers: ServerOverview[] }>('/api/servers')).body.servers;
const byName = async (name: string) => (await servers()).find((s) => s.name === name)!;
const namesIn = (list: ServerOverview[], health: string) =>
  list
    .filter((s) => s.health === health)
    .map((s) => s.name)
    .sort();
const tableNames = (p: Page) => p.locator('[data-testid=servers-table] tbody th a').allTextContents();

beforeAll(async () => {
  m = await startTestMonitor(
    'postgres+nats',
    [
      { name: 'modern' },
      // Newest supported and a pin on 2025-03-26, which the drift below takes away.
      { name: 'drifter-pinned', tests: ['newest', '2025-03-26'] },
      // Refuses connections: unreachable in both regions.
      { name: 'closed' },
    ],
    { interval: '2s', spareRegions: QUIET_REGIONS },
  );
  // Degraded: passes in one region, unreachable in the other (recorded where no agent probes).
  const degraded = await serverWithTests(m.store.db, ['newest'], { name: 'half-down', regions: QUIET_REGIONS });
  const [quietA, quietB] = QUIET_REGIONS as [string, string];
  await recordRun(m.store.db, resultOf(degraded.tests[0]!, quietA, new Date(), handshakeRun()));
  await recordRun(
    m.store.db,
    resultOf(degraded.tests[0]!, quietB, new Date(), handshakeRun({ negotiated: null, outcome: 'unreachable' })),
  );
  // Not run yet: no tests at all.
  await createServer(m.store.db, {
    name: 'no-tests',
    url: 'http://127.0.0.1:9/none',
    regions: QUIET_REGIONS,
    intervalMs: 3_600_000,
    timeoutMs: 1_000,
  });
  web = await startDashboardProcess({ DATABASE_URL: m.databaseUrl!, MCP_FLEET_API_URL: m.control.url });
  browser = await launchBrowser();
  page = await browser.context.newPage();

  await waitFor(
    'modern up, closed failing and the pin passing in both regions',
    async () => {
      const list = await servers();
      const health = Object.fromEntries(list.map((s) => [s.name, s.health]));
      return health.modern === 'up' && health.closed === 'failing' && health['drifter-pinned'] === 'up';
    },
    30_000,
  );
  m.sim.drift('drifter-pinned', ['2025-06-18', '2025-11-25']);
  // The pin fails everywhere while the newest-supported test keeps passing and runs after it: the
  // latest run of each region is a success, which is what the table's "last outcome" used to show.
  // Both tests run every slot in no fixed order, so each region is caught on its own.
  const caught = new Set<string>();
  await waitFor(
    'the pin to fail in both regions, and in each a passing newest-supported run after it',
    async () => {
      const s = await byName('drifter-pinned');
      const pinned = s.tests.find((t) => t.mode === 'pinned');
      const failing = pinned?.states.length === 2 && pinned.states.every((st) => st.failing);
      if (!failing) return false;
      for (const r of s.byRegion) if (r.lastOutcome === 'success') caught.add(r.region);
      return caught.size === 2;
    },
    30_000,
  );
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await m?.close();
});

describe('verdicts on the dashboard', () => {
  it('the overview leads with servers failing, degraded, up and not run yet, as the API counts them', async () => {
    const list = await servers();
    const summary = (await m.api<FleetSummary>('/api/fleet/summary?range=1h')).body;
    expect(summary.health).toEqual({ failing: 2, degraded: 1, up: 1, not_run: 1 });
    for (const h of HEALTHS) expect(namesIn(list, h).length, h).toBe(summary.health[h]);

    await page.goto(`${web.url}/?range=1h`);
    const headline = page.getByRole('region', { name: 'Servers by state' });
    const shown = Object.fromEntries(
      await Promise.all(
        HEALTHS.map(async (h) => [
          h,
          Number(await page.getByTestId(`fig-health-${h}`).locator('.value').textContent()),
        ]),
      ),
    );
    expect(shown).toEqual(summary.health);
    // It comes first: before the other headline figures.
    const first = await page.locator('main section.headline').first().getAttribute('aria-label');
    expect(first).toBe('Servers by state');
    expect(await headline.getByRole('link').allTextContents()).toEqual([
      expect.stringMatching(/^2servers failinga test fails in every region$/),
      expect.stringMatching(/^1server degradedsome tests or regions fail$/),
      expect.stringMatching(/^1server upevery test passes everywhere$/),
      expect.stringMatching(/^1server not run yetno test has run yet$/),
    ]);
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      // The page's top down to the end of the headline figures.
      const bottom = await page.locator('main section.headline').last().boundingBox();
      await page.screenshot({
        path: join(SHOTS, 'overview-headline.png'),
        clip: { x: 0, y: 0, width: 1400, height: Math.ceil((bottom?.y ?? 400) + (bottom?.height ?? 0) + 16) },
      });
    }
  });

  it('each card is a link, opened from the keyboard, to the servers list showing exactly those servers', async () => {
    const list = await servers();
    for (const h of HEALTHS) {
      await page.goto(`${web.url}/?range=1h`);
      // Hydrated (recharts draws only then), so the link's own navigation is what the Enter meets.
      await page.locator('[data-testid=drift-chart] .recharts-area-area').first().waitFor({ state: 'attached' });
      const card = page.getByTestId(`fig-health-${h}`);
      expect(await card.evaluate((el) => el.tagName)).toBe('A');
      await card.focus();
      await page.keyboard.press('Enter');
      // A client-side navigation: the URL changes, then the list renders.
      await expect.poll(() => page.url(), { timeout: 15_000 }).toMatch(new RegExp(`/servers\\?health=${h}$`));
      // The filter form says which state it shows, so the view can be changed from there.
      await expect.poll(() => page.getByLabel('State').inputValue(), { timeout: 15_000 }).toBe(h);
      expect(await tableNames(page), h).toEqual(namesIn(list, h));
    }
    // A health the dashboard does not know filters nothing (the URL is the browser's to write).
    await page.goto(`${web.url}/servers?health=bogus`);
    expect((await tableNames(page)).length).toBe(list.length);
  });

  it('the servers table shows the worst state and the test causing it, not the newest run', async () => {
    await page.goto(`${web.url}/servers`);
    const row = page.locator('[data-testid=servers-table] tbody tr', { hasText: 'drifter-pinned' });
    const state = row.getByTestId('server-state');
    await expect.poll(() => state.textContent()).toContain('failing');
    const text = (await state.textContent()) ?? '';
    expect(text).toContain('eu-west, us-east:');
    expect(text).toContain('unsupported_version · pinned 2025-03-26');
    expect(text).not.toContain('success');
    // The up server says so, the degraded one names its failing region and test.
    expect(
      await page
        .locator('[data-testid=servers-table] tbody tr', { hasText: 'half-down' })
        .getByTestId('server-state')
        .textContent(),
    ).toBe('degradedap-south: successsa-east: unreachable · newest supported');
    if (SHOTS) await page.getByTestId('servers-table').screenshot({ path: join(SHOTS, 'servers-table.png') });
  });

  it("the server page's Now section shows each region's worst state and its test", async () => {
    const s = await byName('drifter-pinned');
    await page.goto(`${web.url}/servers/${s.id}`);
    expect(await page.getByTestId('server-health').textContent()).toContain('failing: a test fails in every region');
    const rows = await page.locator('[data-testid=regions-now] tbody tr').allTextContents();
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r).toContain('unsupported_version');
      expect(r).toContain('Server no longer speaks protocol 2025-03-26');
      expect(r).toContain('pinned 2025-03-26');
    }
    if (SHOTS) await page.locator('section[aria-labelledby=now-h]').screenshot({ path: join(SHOTS, 'server-now.png') });
  });
});
