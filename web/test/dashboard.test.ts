// The dashboard end to end: a real monitor (Postgres, NATS, control, two regional agents, SDK
// servers from fleet-sim), the built Next app as its own process, and Debian's Chromium.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIM_BEARER_TOKEN, type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { startTestMonitor, type TestMonitor } from '@mcp-fleet/monitor/testing';
import {
  createServer,
  createTest,
  type FleetSummary,
  getServer,
  openStore,
  pruneHistory,
  recordRun,
  retentionCutoffs,
  runs,
  type ServerOverview,
} from '@mcp-fleet/store';
import { handshakeRun, resultOf, serverWithTests } from '@mcp-fleet/store/testing';
import { createTestDatabase, testKeyring, waitFor } from '@mcp-fleet/testkit';
import { eq, sql } from 'drizzle-orm';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../tools/browser';
import { type DashboardProcess, startDashboardProcess } from '../tools/next-process';

/** Screenshots for the note (point 5 and 6). */
const SHOTS = process.env.MCP_FLEET_SHOTS ?? join(tmpdir(), 'mcpfleet-shots');
mkdirSync(SHOTS, { recursive: true });
const shot = (name: string) => join(SHOTS, name);

const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'];

let m: TestMonitor;
let extra: Sim;
let web: DashboardProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let context: BrowserContext;
let page: Page;

const servers = async () => (await m.api<{ servers: ServerOverview[] }>('/api/servers')).body.servers;
const byName = async (name: string) => (await servers()).find((s) => s.name === name)!;
/** Servers per revision as the API reports them: newest-supported tests, any region. */
const perRevision = (list: ServerOverview[]) =>
  Object.fromEntries(
    REVISIONS.map((r) => [
      r,
      list.filter((s) => s.tests.some((t) => t.mode === 'newest' && t.states.some((st) => st.currentRevision === r)))
        .length,
    ]),
  );

/** A server whose newest-supported test moved from 2025-06-18 to 2025-11-25 in eu-west seconds ago (and stayed); the moving run's id. */
async function serverThatMoved(name: string) {
  // Port 9 on loopback: should the scheduler get to its hourly slot, the probe is refused there.
  const server = await createServer(m.store.db, {
    name,
    url: `http://127.0.0.1:9/${name}`,
    intervalMs: 3_600_000,
    timeoutMs: 1_000,
  });
  const test = await createTest(m.store.db, { serverId: server.id, mode: 'newest', pinnedRevision: null });
  const secondsAgo = (s: number) => new Date(Date.now() - s * 1000);
  await recordRun(m.store.db, resultOf(test, 'eu-west', secondsAgo(30), handshakeRun({ negotiated: '2025-06-18' })));
  const moved = await recordRun(
    m.store.db,
    resultOf(test, 'eu-west', secondsAgo(20), handshakeRun({ negotiated: '2025-11-25' })),
  );
  // One more run that sees 2025-11-25: the move is confirmed (confirmAfter defaults to 2 runs), so
  // the era-moves page's confirmed view, its default, lists it.
  await recordRun(m.store.db, resultOf(test, 'eu-west', secondsAgo(10), handshakeRun({ negotiated: '2025-11-25' })));
  return { server, runId: moved.duplicate ? null : moved.runId };
}

beforeAll(async () => {
  m = await startTestMonitor(
    'postgres+nats',
    [{ name: 'modern' }, { name: 'drifter' }, { name: 'sessions-2025-11-25', tests: ['newest', '2025-11-25'] }],
    { interval: '2s' },
  );
  extra = await startSim({ only: ['legacy-sse', 'bearer'] });
  web = await startDashboardProcess({ DATABASE_URL: m.databaseUrl!, MCP_FLEET_API_URL: m.control.url });
  browser = await launchBrowser();
  context = browser.context;
  page = await context.newPage();
  // Every server has spoken in both regions before the pages are read.
  await waitFor(
    'every server to have run in both regions',
    async () => (await servers()).every((s) => s.byRegion.length === 2 && s.byRegion.every((r) => r.currentRevision)),
    30_000,
  );
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await extra?.close();
  await m?.close();
});

describe('dashboard', () => {
  it('draws the overview from the database: headline, drift, region matrix', async () => {
    const list = await servers();
    const summary = (await m.api<FleetSummary>('/api/fleet/summary?range=1h')).body;
    await page.goto(`${web.url}/?range=1h`);
    await expect.poll(() => page.locator('[data-testid=fig-servers] .value').textContent()).toBe(String(list.length));

    // The stacked areas are drawn (recharts renders after hydration): one per revision, and the
    // revisions servers speak have an area with height.
    const areas = page.locator('[data-testid=drift-chart] .recharts-area-area');
    await areas.first().waitFor({ state: 'attached' });
    expect(await areas.count()).toBe(REVISIONS.length);
    for (const r of ['2025-11-25', '2026-07-28']) {
      const box = await page.locator(`[data-testid=drift-chart] .recharts-area-area[name^="${r}"]`).boundingBox();
      expect(box?.height, r).toBeGreaterThan(5);
    }

    // The last point of the drift equals what the API says the servers speak now.
    await page.getByText('Data').first().click();
    const lastRow = await page.locator('[data-testid=drift-data] tbody tr').last().locator('td').allTextContents();
    const expected = perRevision(list);
    expect(lastRow.slice(1).map(Number)).toEqual(REVISIONS.map((r) => expected[r]));
    expect(expected['2026-07-28']).toBe(1);
    expect(expected['2025-11-25']).toBe(2);

    // The region × revision matrix shows the API's per-region counts.
    for (const region of ['eu-west', 'us-east']) {
      const cells = await page
        .locator('[data-testid=region-matrix] tr', { hasText: region })
        .locator('td')
        .allTextContents();
      const want = REVISIONS.map(
        (r) => summary.byRevision.find((b) => b.region === region && b.revision === r)?.servers ?? 0,
      );
      expect(cells.map((c) => Number(c.split(' ')[0]))).toEqual(want);
    }

    // By era folds the same servers into two areas.
    await page.getByRole('button', { name: 'By era' }).click();
    await expect.poll(() => page.locator('[data-testid=drift-chart] .recharts-area-area').count()).toBe(2);
  });

  it('adds a server through the form: detection, then its tests, a failing pin refused', async () => {
    const url = extra.target('legacy-sse').url;
    await page.goto(`${web.url}/servers/new`);
    await page.getByLabel('Name').fill('added-legacy');
    // Short enough that its first runs come within the test.
    await page.getByLabel('Interval').fill('2s');
    await page.getByLabel('Timeout').fill('1500ms');
    // Everything the detection area ever says, in order.
    await page.evaluate(() => {
      const area = document.querySelector('[data-testid=detection]')!;
      const seen: string[] = [];
      (window as unknown as { detectionTexts: string[] }).detectionTexts = seen;
      new MutationObserver(() => seen.push(area.textContent ?? '')).observe(area, {
        childList: true,
        subtree: true,
        characterData: true,
      });
    });
    await page.getByLabel('URL').click();
    await page.keyboard.type(url, { delay: 5 });
    const texts = () => page.evaluate(() => (window as unknown as { detectionTexts: string[] }).detectionTexts);
    // Nothing while typing; after the pause, "Detecting protocol…", then the revisions table.
    expect(await texts()).toEqual([]);
    const table = page.locator('[data-testid=detection] [data-testid=detection-table]');
    await table.waitFor({ timeout: 30_000 }).catch(async (err) => {
      throw new Error(`${err.message}\ndetection area said: ${JSON.stringify(await texts())}\n${web.output()}`);
    });
    expect((await texts())[0]).toBe('Detecting protocol…');
    const rows = await table.locator('tbody tr').allTextContents();
    expect(rows).toHaveLength(5);
    expect(rows.find((r) => r.startsWith('2024-11-05'))).toContain('Supported');
    expect(rows.find((r) => r.startsWith('2026-07-28'))).toContain('Not supported');
    // The evidence of an unsupported revision is shown (status or failure, first bytes).
    expect(rows.find((r) => r.startsWith('2026-07-28'))).toMatch(/HTTP \d{3}|refused|reset|timeout/i);
    await expect.poll(() => page.getByText('currently 2024-11-05').count()).toBe(1);
    await expect.poll(() => page.getByLabel('Newest supported').isChecked()).toBe(true);
    expect(await page.getByRole('button', { name: 'Detect again' }).count()).toBe(1);

    // A pin the server does not accept today cannot be saved.
    await page.getByLabel('2025-03-26 · sessions · not the current revision').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => page.locator('form p[role=alert]').textContent(), { timeout: 20_000 })
      .toContain('did not pass');
    expect((await servers()).some((s) => s.name === 'added-legacy')).toBe(false);

    await page.getByLabel('2025-03-26 · sessions · not the current revision').uncheck();
    await page.getByLabel('2024-11-05 · HTTP+SSE transport · deprecated, eligible for removal').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/\/servers\/[0-9a-f-]{36}$/, { timeout: 20_000 });
    await page.getByRole('heading', { name: 'added-legacy' }).waitFor();

    const added = await byName('added-legacy');
    expect(added.url).toBe(url);
    expect([added.intervalMs, added.timeoutMs]).toEqual([2_000, 1_500]);
    expect(added.tests.map((t) => (t.mode === 'newest' ? 'newest' : t.pinnedRevision)).sort()).toEqual([
      '2024-11-05',
      'newest',
    ]);
    await expect.poll(() => page.getByText('Protocol: 2024-11-05 (pinned)').count()).toBe(1);
    // Its first runs arrive and the page shows them after a refresh.
    await waitFor(
      'the added server to run in both regions',
      async () => {
        const s = await byName('added-legacy');
        return s.byRegion.length === 2 && s.byRegion.every((r) => r.currentRevision === '2024-11-05');
      },
      20_000,
    );
    await page.reload();
    await expect
      .poll(() => page.locator('[data-testid=regions-now] tbody tr').allTextContents())
      .toEqual([expect.stringContaining('2024-11-05'), expect.stringContaining('2024-11-05')]);
  });

  it('shows a scripted drift as an era move on the server page and the era-moves page', async () => {
    const drifter = await byName('drifter');
    expect(drifter.byRegion.map((r) => r.currentRevision)).toEqual(['2025-11-25', '2025-11-25']);
    m.sim.drift('drifter', ['2026-07-28']);
    await waitFor(
      'the drifter to move to 2026-07-28 in both regions',
      async () => {
        const { body } = await m.api<{ moves: { serverName: string; toRevision: string }[] }>(
          '/api/era-moves?range=1h',
        );
        return body.moves.filter((mv) => mv.serverName === 'drifter' && mv.toRevision === '2026-07-28').length === 2;
      },
      30_000,
    );

    await page.goto(`${web.url}/servers/${drifter.id}`);
    await page
      .locator('[data-testid=run-history] tr.move', { hasText: 'now 2026-07-28, was 2025-11-25' })
      .first()
      .waitFor();

    await page.goto(`${web.url}/era-moves`);
    const row = page.locator('[data-testid=era-moves] tbody tr', { hasText: 'drifter' }).first();
    await row.waitFor();
    expect(await row.textContent()).toMatch(/now\s*2026-07-28\s*, was\s*2025-11-25/);
    expect(await row.textContent()).toContain('era change');
    await row.getByRole('link', { name: /^run \d+$/ }).click();
    await page.waitForURL(new RegExp(`/servers/${drifter.id}\\?run=\\d+`));
    expect(await page.locator('[data-testid=run-history] tr.highlight').textContent()).toContain('now 2026-07-28');

    // The overview counts it and puts it on the timeline.
    await page.goto(`${web.url}/?range=1h`);
    await expect
      .poll(async () => Number(await page.locator('[data-testid=fig-era-moves] .value').textContent()))
      .toBeGreaterThanOrEqual(2);
    await page.locator('[data-testid=era-move-timeline] .recharts-scatter-symbol').first().waitFor();
    expect(await page.locator('[data-testid=latest-moves]').textContent()).toContain('drifter');
  });

  it('filters, sorts and pages the servers table', async () => {
    for (let i = 0; i < 60; i++)
      await createServer(m.store.db, {
        name: `pad-${String(i).padStart(3, '0')}`,
        url: `http://127.0.0.1:9/pad-${i}`,
        intervalMs: 3_600_000,
        timeoutMs: 1_000,
      });
    const total = (await servers()).length;
    expect(total).toBe(64);

    await page.goto(`${web.url}/servers`);
    expect(await page.getByTestId('servers-count').textContent()).toBe('64 servers · page 1 of 2');
    expect(await page.locator('[data-testid=servers-table] tbody tr').count()).toBe(50);
    await page.getByRole('link', { name: 'Next →' }).click();
    await page.waitForURL(/page=2/);
    expect(await page.locator('[data-testid=servers-table] tbody tr').count()).toBe(14);

    // Filter by revision through the form: exactly the servers the API says speak it.
    await page.goto(`${web.url}/servers`);
    await page.getByLabel('Revision').selectOption('2026-07-28');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/revision=2026-07-28/);
    const modernNames = (await servers())
      .filter((s) => s.byRegion.some((r) => r.currentRevision === '2026-07-28'))
      .map((s) => s.name)
      .sort();
    expect(modernNames).toEqual(['drifter', 'modern']);
    expect(await page.locator('[data-testid=servers-table] tbody th a').allTextContents()).toEqual(modernNames);

    await page.goto(`${web.url}/servers?era=legacy`);
    expect(await page.locator('[data-testid=servers-table] tbody th a').allTextContents()).toEqual([
      'added-legacy',
      'sessions-2025-11-25',
    ]);

    await page.goto(`${web.url}/servers?q=pad-05`);
    expect(await page.getByTestId('servers-count').textContent()).toBe('10 servers');

    // Sorted by last run, newest first: servers never run go last.
    await page.goto(`${web.url}/servers?sort=lastRun&dir=desc`);
    const names = await page.locator('[data-testid=servers-table] tbody th a').allTextContents();
    expect(names.slice(0, 4).sort()).toEqual(['added-legacy', 'drifter', 'modern', 'sessions-2025-11-25']);
    expect(names[4]).toBe('pad-000');

    await page.goto(`${web.url}/servers?q=no-such-server`);
    await page.getByText('No server matches these filters.').waitFor();
  });

  it('edits a server: its tests and interval change, a stored credential stays on the server', async () => {
    const created = await m.api<{ server: { id: string } }>('/api/servers', {
      method: 'POST',
      json: {
        name: 'secured',
        url: extra.target('bearer').url,
        headers: { Authorization: `Bearer ${SIM_BEARER_TOKEN}` },
        interval: '2s',
        timeout: '1500ms',
        tests: [{ revision: 'newest' }],
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.server.id;
    await page.goto(`${web.url}/servers/${id}/edit`);
    // The credential's name is shown, its value never leaves the server.
    expect(await page.content()).not.toContain(SIM_BEARER_TOKEN);
    expect(await page.locator('fieldset', { hasText: 'Headers' }).getByLabel('Name').inputValue()).toBe(
      'Authorization',
    );
    const value = page.locator('fieldset', { hasText: 'Headers' }).getByLabel('Value');
    expect([await value.inputValue(), await value.getAttribute('placeholder')]).toEqual(['', '•••••• (unchanged)']);
    // An existing server's untouched URL is not detected.
    await page.waitForTimeout(2_000);
    expect(await page.getByTestId('detection').textContent()).toBe('');

    // Sending the stored credential to another origin is refused; the detection says why.
    await page.getByLabel('URL').fill(extra.target('legacy-sse').url);
    await page.getByLabel('URL').blur();
    await expect
      .poll(() => page.getByTestId('detection').textContent(), { timeout: 15_000 })
      .toContain('Detection failed. header Authorization: enter its value again');
    await page.getByLabel('URL').fill(extra.target('bearer').url);
    await page.getByLabel('URL').blur();
    await page.locator('[data-testid=detection] [data-testid=detection-table]').waitFor({ timeout: 30_000 });

    await page.getByLabel('Interval').fill('3s');
    await page.getByLabel('2025-11-25 · sessions · not the current revision').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(new RegExp(`/servers/${id}$`), { timeout: 20_000 });
    const stored = await getServer(m.store.db, id);
    expect(stored?.headers).toEqual({ Authorization: `Bearer ${SIM_BEARER_TOKEN}` });
    expect(stored?.intervalMs).toBe(3_000);
    const tests = (await byName('secured')).tests.map((t) => (t.mode === 'newest' ? 'newest' : t.pinnedRevision));
    expect(tests.sort()).toEqual(['2025-11-25', 'newest']);

    // Unticking a test retires it.
    await page.goto(`${web.url}/servers/${id}/edit`);
    await page.getByLabel('2025-11-25 · sessions · not the current revision').uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(new RegExp(`/servers/${id}$`), { timeout: 20_000 });
    expect((await byName('secured')).tests.map((t) => t.mode)).toEqual(['newest']);
  });

  it('a URL with credentials: masked on the server page, the list and the editor; kept when saved as shown, on its origin only', async () => {
    const full = `${extra.target('bearer').url}?token=url-token-e2e`.replace(
      'http://',
      'http://e2e-user:url-pass-e2e@',
    );
    const created = await m.api<{ server: { id: string; url: string } }>('/api/servers', {
      method: 'POST',
      json: {
        name: 'url-secured',
        url: full,
        headers: { Authorization: `Bearer ${SIM_BEARER_TOKEN}` },
        interval: '2s',
        timeout: '1500ms',
        tests: [{ revision: 'newest' }],
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.server.id;
    const port = new URL(full).port;
    const shown = `http://••••••:••••••@127.0.0.1:${port}/mcp?token=••••••`;
    expect(created.body.server.url).toBe(shown);
    const secrets = ['e2e-user', 'url-pass-e2e', 'url-token-e2e', SIM_BEARER_TOKEN];
    const noSecrets = async (where: string) => {
      const html = await page.content();
      for (const secret of secrets) expect(html, `${where}: ${secret}`).not.toContain(secret);
    };

    await page.goto(`${web.url}/servers/${id}`);
    await page.locator('.sub .evidence', { hasText: shown }).waitFor();
    await noSecrets('the server page');
    await page.goto(`${web.url}/servers?q=url-secured`);
    expect(await page.getByTestId('servers-table').textContent()).toContain(shown);
    await noSecrets('the servers table');

    await page.goto(`${web.url}/servers/${id}/edit`);
    expect(await page.getByLabel('URL').inputValue()).toBe(shown);
    await noSecrets('the editor');
    // Moved to another origin, the masked parts do not follow: the detection says why.
    const other = new URL(extra.target('legacy-sse').url).port;
    await page.getByLabel('URL').fill(shown.replace(`:${port}/`, `:${other}/`));
    await page.getByLabel('URL').blur();
    await expect
      .poll(() => page.getByTestId('detection').textContent(), { timeout: 15_000 })
      .toContain(
        `Detection failed. url: the user name, password, query token (••••••) stand for a stored credential, which is only sent to http://127.0.0.1:${port}`,
      );
    // Back on its origin, as shown: detected with the stored URL, and saved keeping it.
    await page.getByLabel('URL').fill(shown);
    await page.getByLabel('URL').blur();
    await page.locator('[data-testid=detection] [data-testid=detection-table]').waitFor({ timeout: 30_000 });
    await page.getByLabel('Interval').fill('3s');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(new RegExp(`/servers/${id}$`), { timeout: 20_000 });
    const stored = await getServer(m.store.db, id);
    expect(stored).toMatchObject({ url: shown, target: full, intervalMs: 3_000 });
    expect(stored?.headers).toEqual({ Authorization: `Bearer ${SIM_BEARER_TOKEN}` });
  });

  it('answers an unknown server with the not-found page and a bad range with the default', async () => {
    const res = await page.goto(`${web.url}/servers/00000000-0000-0000-0000-000000000000`);
    expect(res?.status()).toBe(404);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    // A bad range is no choice: the default, fitted to data minutes old, is the hour.
    const bad = await page.goto(`${web.url}/?range=forever`);
    expect(bad?.status()).toBe(200);
    expect(await page.locator('[data-testid=fig-era-moves] .label').textContent()).toContain('1h');
  });

  it('shows an era move whose run retention pruned, without a run link', async () => {
    const { server, runId } = await serverThatMoved('kept-history');
    // Forty days on by control's clock, retention prunes the runs; the move stays.
    await m.store.db
      .update(runs)
      .set({ receivedAt: sql`now() - interval '40 days'` })
      .where(eq(runs.serverId, server.id));
    expect((await pruneHistory(m.store.db, retentionCutoffs(30))).runs).toBeGreaterThanOrEqual(2);

    const { body } = await m.api<{ moves: { serverName: string; runId: number | null }[] }>(
      `/api/era-moves?server=${server.id}`,
    );
    expect(body.moves).toMatchObject([
      { serverName: 'kept-history', fromRevision: '2025-06-18', toRevision: '2025-11-25', runId: null },
    ]);
    await page.goto(`${web.url}/era-moves`);
    const row = page.locator('[data-testid=era-moves] tbody tr', { hasText: 'kept-history' });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/now\s*2025-11-25\s*, was\s*2025-06-18/);
    // The run cell says the run was pruned; the only link left is the server's.
    expect(await row.locator('td').last().textContent()).toBe('pruned');
    expect(await row.getByRole('link').allTextContents()).toEqual(['kept-history']);
    // An old link to the pruned run still opens the server page.
    await page.goto(`${web.url}/servers/${server.id}?run=${runId}#run-${runId}`);
    await page.getByRole('heading', { name: 'kept-history' }).waitFor();
  });

  it('keeps a retired server viewable from its era-move link: marked retired, read-only, counted apart', async () => {
    const { server } = await serverThatMoved('gone-server');
    const live = (await servers()).length;
    expect((await m.api(`/api/servers/${server.id}`, { method: 'DELETE' })).status).toBe(204);

    // The era-moves page still lists its move, and the run link opens its page: retired, when, no edit.
    await page.goto(`${web.url}/era-moves`);
    const row = page.locator('[data-testid=era-moves] tbody tr', { hasText: 'gone-server' });
    await row.getByRole('link', { name: /^run \d+$/ }).click();
    await page.waitForURL(new RegExp(`/servers/${server.id}\\?run=\\d+`));
    await page.getByRole('heading', { name: 'gone-server retired' }).waitFor();
    expect(await page.getByTestId('retired-notice').textContent()).toMatch(
      /^Retired \d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC \(.+ ago\): no longer probed\. Its history is kept and shown here, read-only\.$/,
    );
    expect(await page.locator('[data-testid=run-history] tr.highlight').textContent()).toContain('2025-11-25');
    expect(await page.getByRole('link', { name: 'Edit' }).count()).toBe(0);
    expect(await page.locator('main a[href$="/edit"]').count()).toBe(0);
    await page.screenshot({ path: shot('retired-server.png'), fullPage: true });
    // The editor's address answers with the notice and no form.
    await page.goto(`${web.url}/servers/${server.id}/edit`);
    await page.getByTestId('retired-notice').waitFor();
    expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);

    // The servers list shows live servers, and the retired ones under their own tab.
    await page.goto(`${web.url}/servers`);
    const tabs = page.getByTestId('server-tabs');
    await tabs.waitFor();
    expect(await tabs.getByRole('link').allTextContents()).toEqual([`Live (${live - 1})`, 'Retired (1)']);
    expect(await page.getByTestId('servers-count').textContent()).toMatch(new RegExp(`^${live - 1} servers( · |$)`));
    expect(await page.locator('[data-testid=servers-table] tbody th a', { hasText: 'gone-server' }).count()).toBe(0);
    await tabs.getByRole('link', { name: 'Retired (1)' }).click();
    await page.waitForURL(/status=retired/);
    await expect.poll(() => page.getByTestId('servers-count').textContent()).toBe('1 retired server');
    expect(await page.locator('[data-testid=servers-table] tbody th').textContent()).toMatch(/^gone-server · retired /);
    await page.screenshot({ path: shot('servers-retired-tab.png') });
    // The overview counts live servers only.
    await page.goto(`${web.url}/?range=1h`);
    expect(await page.locator('[data-testid=fig-servers] .value').textContent()).toBe(String(live - 1));
  });
});

describe('dashboard without data, a database or control', () => {
  it('says so: empty pages on an empty fleet, an error page when the database or control is gone', async () => {
    const empty = await createTestDatabase('mcpfleet_web_empty');
    const store = await openStore({ databaseUrl: empty.url, keyring: testKeyring() });
    await store.migrate();
    await store.close();
    const bare = await startDashboardProcess({ DATABASE_URL: empty.url, MCP_FLEET_API_URL: 'http://127.0.0.1:9' });
    const noDb = await startDashboardProcess({
      DATABASE_URL: empty.url.replace(empty.name, `${empty.name}_missing`),
      MCP_FLEET_API_URL: 'http://127.0.0.1:9',
    });
    try {
      // No range picked and no data: the default is the hour, and the picker says it was fitted.
      await context.clearCookies();
      await page.goto(`${bare.url}/`);
      await page.getByText('No servers yet.').waitFor();
      const picker = page.getByRole('group', { name: 'Time range' });
      expect(await picker.locator('button[aria-pressed=true]').textContent()).toBe('1h');
      expect(await page.getByTestId('range-fitted').textContent()).toBe('1h (fitted to data)');
      await page.locator('header.top').screenshot({ path: shot('range-picker-fitted.png') });
      // An explicit choice wins: a link's ?range=, then the picked one, kept in the cookie.
      await page.goto(`${bare.url}/era-moves?range=7d`);
      expect(await picker.locator('button[aria-pressed=true]').textContent()).toBe('7d');
      expect(await page.getByTestId('range-fitted').count()).toBe(0);
      await page.getByText('No era moves match, in the last 7d.').waitFor();
      await picker.getByRole('button', { name: '24h' }).click();
      await page.waitForURL(/range=24h/);
      await page.goto(`${bare.url}/era-moves`);
      await page.getByText('No era moves match, in the last 24h.').waitFor();
      expect(await picker.locator('button[aria-pressed=true]').textContent()).toBe('24h');
      expect(await page.getByTestId('range-fitted').count()).toBe(0);
      await context.clearCookies();
      await page.goto(`${bare.url}/era-moves`);
      await page.getByText('No era moves match, in the last 1h.').waitFor();

      await page.goto(`${bare.url}/`);
      await page.getByText('No servers yet.').waitFor();
      await page.goto(`${bare.url}/servers`);
      await page.getByText('No servers yet.').waitFor();
      await page.goto(`${bare.url}/era-moves`);
      await page.getByText('No era moves match').waitFor();

      // A test whose runs found no revision has run: only one that never ran is "not run yet".
      const seeded = await openStore({ databaseUrl: empty.url, keyring: testKeyring() });
      const silent = await serverWithTests(seeded.db, ['newest'], { name: 'never-answers' });
      const fresh = await serverWithTests(seeded.db, ['newest'], { name: 'brand-new' });
      const timedOut = handshakeRun({ negotiated: null, outcome: 'timeout', message: 'The probe timed out.' });
      await recordRun(seeded.db, resultOf(silent.tests[0]!, 'eu-west', new Date(), timedOut));
      await seeded.close();
      await page.goto(`${bare.url}/servers/${silent.server.id}`);
      await page.getByText('Protocol: Newest supported (no revision found yet)').waitFor();
      await page.goto(`${bare.url}/servers/${fresh.server.id}`);
      await page.getByText('Protocol: Newest supported (not run yet)').waitFor();
      await page.goto(`${bare.url}/servers?q=never-answers`);
      const row = page.locator('tbody tr', { hasText: 'never-answers' });
      await expect.poll(() => row.locator('td').allTextContents()).toContain('—');
      expect(await row.textContent()).toContain('timeout');
      expect(await row.textContent()).not.toContain('not run yet');
      // The editor needs control (regions, detection): without it the page says it could not load.
      await page.goto(`${bare.url}/servers/new`);
      await page.getByRole('heading', { name: 'This page could not be loaded' }).waitFor();
      await page.goto(`${noDb.url}/`);
      await page.getByRole('heading', { name: 'This page could not be loaded' }).waitFor();
      await page.getByRole('button', { name: 'Try again' }).waitFor();
      expect(noDb.output()).toMatch(/does not exist/);
      // The error page may not be framed by another site either (as every answer: auth.test.ts).
      const broken = await fetch(`${noDb.url}/`);
      await broken.arrayBuffer();
      expect(broken.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
      expect(broken.headers.get('x-frame-options')).toBe('DENY');
      // Container probes: alive either way, ready only with its database.
      expect((await fetch(`${noDb.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${noDb.url}/readyz`)).status).toBe(503);
      expect((await fetch(`${bare.url}/readyz`)).status).toBe(200);
    } finally {
      await bare.stop();
      await noDb.stop();
      await empty.drop();
    }
  });
});
