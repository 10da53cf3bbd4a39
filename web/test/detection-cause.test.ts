// The detection table leads with the cause (issue 13 point 4), in real Chromium against a real
// monitor (Postgres, NATS, control, two agents, fleet-sim servers): a server answering 503 to
// everything, detected on schedule through the bus, shows "server error: HTTP 503 …" first and
// its revisions "unknown" on its page; the add-server form typed a URL that wants a token says
// "auth required: HTTP 401 …" the same way. A plain website (no single cause) still reads "did
// not identify itself" with "Not supported" cells.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { startTestMonitor, type TestMonitor } from '@mcp-fleet/monitor/testing';
import { latestDetection } from '@mcp-fleet/store';
import { waitFor } from '@mcp-fleet/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../tools/browser';
import { type DashboardProcess, startDashboardProcess } from '../tools/next-process';

/** Where screenshots of the tables go when asked for (MCP_FLEET_SHOTS_DIR=<dir>), for the note. */
const SHOTS = process.env.MCP_FLEET_SHOTS_DIR;

let m: TestMonitor;
let extra: Sim;
let web: DashboardProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

beforeAll(async () => {
  m = await startTestMonitor('postgres+nats', [{ name: 'unavailable', detection: '1s' }], { interval: '5s' });
  extra = await startSim({ only: ['bearer', 'website'] });
  web = await startDashboardProcess({ DATABASE_URL: m.databaseUrl!, MCP_FLEET_API_URL: m.control.url });
  browser = await launchBrowser();
  page = await browser.context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await extra?.close();
  await m?.close();
});

const rows = (scope: string) => page.locator(`${scope} [data-testid=detection-table] tbody tr`).allTextContents();

describe('the detection table', () => {
  it("a server's page: the cause sentence first, every revision unknown", async () => {
    const res = await m.api<{ servers: { id: string; name: string }[] }>('/api/servers');
    const id = res.body.servers.find((s) => s.name === 'unavailable')!.id;
    // A detection that came through the bus from an agent, with its cause.
    await waitFor(
      'a scheduled detection of the 503 server',
      async () => (await latestDetection(m.store.db, id)) !== null,
      30_000,
    );
    expect((await latestDetection(m.store.db, id))!.result).toMatchObject({ outcome: 'NONE', cause: 'server_error' });

    await page.goto(`${web.url}/servers/${id}`);
    const panel = page.locator('section[aria-labelledby=detection-h]');
    const cause = panel.getByTestId('detection-cause');
    expect(await cause.textContent()).toMatch(
      /^server error: HTTP 503 \(the server failed; it may be down or overloaded\) on every revision, so nothing was learnt about which it speaks\. The server is failing/,
    );
    expect(await panel.textContent()).not.toContain('did not identify itself');
    const cells = await rows('section[aria-labelledby=detection-h]');
    expect(cells).toHaveLength(5);
    for (const row of cells) {
      expect(row).toContain('unknown');
      expect(row).not.toContain('Not supported');
      // The evidence stays under each revision.
      expect(row).toContain('HTTP 503');
    }
    // The cause is above the table.
    const [causeBox, tableBox] = await Promise.all([
      cause.boundingBox(),
      panel.getByTestId('detection-table').boundingBox(),
    ]);
    expect(causeBox!.y).toBeLessThan(tableBox!.y);
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      await panel.screenshot({ path: join(SHOTS, 'causes-server-page-detection.png') });
    }
  });

  it('the add-server form: a URL that wants a token says so, and how', async () => {
    await page.goto(`${web.url}/servers/new`);
    await page.getByLabel('Name').fill('needs-a-token');
    await page.getByLabel('URL').fill(extra.target('bearer').url);
    await page.getByLabel('URL').blur();
    const cause = page.locator('[data-testid=detection] [data-testid=detection-cause]');
    await cause.waitFor({ timeout: 30_000 });
    expect(await cause.textContent()).toMatch(
      /^auth required: HTTP 401 \(the server asked for credentials\) on every revision, .* a header such as Authorization/,
    );
    expect(await page.getByTestId('detection').textContent()).not.toContain('did not identify itself');
    const cells = await rows('[data-testid=detection]');
    expect(cells).toHaveLength(5);
    for (const row of cells) {
      expect(row).toContain('unknown');
      expect(row).toContain('HTTP 401');
    }
    if (SHOTS) await page.getByTestId('detection').screenshot({ path: join(SHOTS, 'causes-add-server-detection.png') });
  });

  it('no single cause: "did not identify itself", and what it answered is "Not supported"', async () => {
    await page.goto(`${web.url}/servers/new`);
    await page.getByLabel('Name').fill('a-website');
    await page.getByLabel('URL').fill(extra.target('website').url);
    await page.getByLabel('URL').blur();
    const table = page.locator('[data-testid=detection] [data-testid=detection-table]');
    await table.waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('detection').textContent()).toContain(
      'This URL did not identify itself as an MCP server on any revision.',
    );
    expect(await page.locator('[data-testid=detection] [data-testid=detection-cause]').count()).toBe(0);
    for (const row of await rows('[data-testid=detection]')) expect(row).toContain('Not supported');
  });
});
