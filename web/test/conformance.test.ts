// Conformance in the browser: the server page's last result per era (failures first, failing
// since, evidence on click), the fleet's check × server matrix with its era and level filters, the
// overview's share passing every MUST check, the editor's depth, and a hostile check message and
// evidence rendered inert. A real control (Postgres, NATS) without agents, so the check states
// written here are the ones shown (as ingest writes them after a conformance run, each pointing
// at a real run); the built dashboard as its own process; Debian's Chromium.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestMonitor, type TestMonitor } from '@mcp-fleet/monitor/testing';
import type { Revision } from '@mcp-fleet/probe';
import { checkStates, recordRun, type Test, tests } from '@mcp-fleet/store';
import { handshakeRun, resultOf, serverWithTests } from '@mcp-fleet/store/testing';
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../tools/browser';
import { type DashboardProcess, startDashboardProcess } from '../tools/next-process';

const SHOTS = process.env.MCP_FLEET_SHOTS ?? join(tmpdir(), 'mcpfleet-shots');
mkdirSync(SHOTS, { recursive: true });
const shot = (name: string) => join(SHOTS, name);

/** Fleet regions no agent serves (there are none here anyway): the seeded states stay as written. */
const REGIONS = ['eu-west', 'us-east'];
const HOUR = 3_600_000;
const utc = (d: Date) => `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
/** What a hostile server (through an agent) could put in a check's message and evidence. */
const HOSTILE_MESSAGE = '<img src=x onerror="window.__xss=1">result has no resultType';
const HOSTILE_BODY = '<script>window.__xss=2</script></pre><img src=x onerror="window.__xss=3">';
const HOSTILE_ID = '<svg onload="window.__xss=4">';

type Row = [check: string, level: 'MUST' | 'SHOULD', status: 'pass' | 'fail' | 'skip', message?: string];

let m: TestMonitor;
let web: DashboardProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
const ids: Record<string, string> = {};
const failingSince = new Date(Date.now() - 2 * HOUR);

/** A conformance run of `test` in `region` (a real run row) and its checks' states. */
async function judged(
  test: Test,
  region: string,
  negotiated: Revision,
  rows: Row[],
  opts: { since?: Date; evidence?: unknown } = {},
) {
  const at = new Date(Date.now() - 60_000);
  const era = negotiated === '2026-07-28' ? 'modern' : 'legacy';
  const run = await recordRun(
    m.store.db,
    resultOf(
      test,
      region,
      at,
      handshakeRun({ negotiated, requested: negotiated, era, generation: era === 'modern' ? 'stateless' : 'sessions' }),
    ),
  );
  await m.store.db.insert(checkStates).values(
    rows.map(([checkId, level, status, message]) => ({
      testId: test.id,
      serverId: test.serverId,
      region,
      checkId,
      level,
      era,
      status,
      message: message ?? `${checkId}: ${status}`,
      evidence: status === 'fail' ? (opts.evidence ?? { status: 200, bodyPreview: `{"check":"${checkId}"}` }) : null,
      since: status === 'fail' ? (opts.since ?? at) : at,
      lastRunId: run.duplicate ? null : run.runId,
      lastRunAt: at,
    })),
  );
}

/** A server with one newest-supported conformance test (and a handshake one when asked). */
async function conformanceServer(name: string, regions = REGIONS, withHandshake = false) {
  const { server, tests: made } = await serverWithTests(m.store.db, withHandshake ? ['newest', 'newest'] : ['newest'], {
    name,
    regions,
  });
  await m.store.db.update(tests).set({ depth: 'conformance' }).where(eq(tests.id, made[0]!.id));
  ids[name] = server.id;
  return made[0]!;
}

beforeAll(async () => {
  m = await startTestMonitor('postgres+nats', [{ name: 'modern' }], { agents: false, interval: '1h' });
  // Modern, failing a MUST (result_type_present) in both regions and a SHOULD in one.
  const failing = await conformanceServer('conf-failing', REGIONS, true);
  await judged(
    failing,
    'eu-west',
    '2026-07-28',
    [
      ['discover_succeeds', 'MUST', 'pass'],
      ['no_session_id', 'SHOULD', 'fail', 'a response carried Mcp-Session-Id'],
      ['result_type_present', 'MUST', 'fail', 'tools/list result has no resultType'],
      ['header_mismatch_rejected', 'MUST', 'skip', 'an HTTP-only rule'],
    ],
    { since: failingSince },
  );
  await judged(failing, 'us-east', '2026-07-28', [
    ['discover_succeeds', 'MUST', 'pass'],
    ['no_session_id', 'SHOULD', 'pass'],
    ['result_type_present', 'MUST', 'fail', 'tools/list result has no resultType'],
    ['header_mismatch_rejected', 'MUST', 'skip', 'an HTTP-only rule'],
  ]);
  // Legacy, every MUST passing.
  const passing = await conformanceServer('conf-passing', ['eu-west']);
  await judged(passing, 'eu-west', '2025-06-18', [
    ['server_info_present', 'MUST', 'pass'],
    ['ping_succeeds', 'MUST', 'pass'],
    ['request_before_initialize_rejected', 'SHOULD', 'fail', 'answered with a result'],
    ['list_prompts_succeeds', 'MUST', 'skip', 'prompts not declared'],
  ]);
  // What a hostile server could make an agent report: markup in the message, evidence and id.
  const hostile = await conformanceServer('conf-hostile', ['eu-west']);
  await judged(
    hostile,
    'eu-west',
    '2025-11-25',
    [
      ['server_info_present', 'MUST', 'fail', HOSTILE_MESSAGE],
      [HOSTILE_ID, 'SHOULD', 'fail', HOSTILE_MESSAGE],
    ],
    { evidence: { status: 200, bodyPreview: HOSTILE_BODY, message: HOSTILE_MESSAGE } },
  );
  // A handshake-only server: no conformance anywhere.
  ids['handshake-only'] = (await serverWithTests(m.store.db, ['newest'], { name: 'handshake-only' })).server.id;

  web = await startDashboardProcess({ DATABASE_URL: m.databaseUrl!, MCP_FLEET_API_URL: m.control.url });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  page.on('dialog', (d) => void d.dismiss());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await m?.close();
});

/** The editor saved and went to the server page; else the error it showed (control's refusal, say). */
async function saved(p: Page, url: RegExp) {
  const alert = p.locator('form p[role=alert]');
  await Promise.race([p.waitForURL(url, { timeout: 20_000 }), alert.waitFor({ timeout: 20_000 })]);
  if (!url.test(p.url())) throw new Error(`the editor did not save: ${await alert.textContent()}`);
}

const xss = (p: Page) => p.evaluate(() => (window as unknown as { __xss?: number }).__xss ?? null);

describe('conformance on the dashboard', () => {
  it("shows a server's last result per era: failures first, failing since, evidence on click", async () => {
    await page.goto(`${web.url}/servers/${ids['conf-failing']}`);
    const section = page.getByTestId('conformance');
    await section.getByRole('heading', { name: 'Conformance' }).waitFor();
    const era = section.getByTestId('conformance-modern');
    expect(await era.locator('h3').textContent()).toMatch(/Modern era\s*2026-07-28\s*1 MUST check fails · 1 warning/);
    const rows = era.locator('[data-testid=conformance-table] tbody tr');
    // The failing MUST first, then the failing SHOULD, then the pass, then the skip.
    expect(await rows.locator('th code').allTextContents()).toEqual([
      'result_type_present',
      'no_session_id',
      'discover_succeeds',
      'header_mismatch_rejected',
    ]);
    const first = await rows.first().locator('td').allTextContents();
    expect(first[0]).toBe('MUST');
    expect(first[1]).toBe('fail');
    expect(first[2]).toContain('tools/list result has no resultType');
    // Failing since the earliest region's failure (eu-west's, two hours ago).
    expect(first[3]).toContain(`failing since ${utc(failingSince)}`);
    expect(first[3]).toContain('2 h ago');
    // A SHOULD failing in one of two regions: a warning, and where.
    const second = await rows.nth(1).locator('td').allTextContents();
    expect(second[1]).toBe('fail (warning)in eu-west');
    // A pass in one region beats nothing; a check skipped in both stays a skip.
    expect((await rows.nth(3).locator('td').allTextContents())[1]).toBe('skip');
    // Evidence on click.
    const evidence = rows.first().getByTestId('check-evidence');
    expect(await evidence.isVisible()).toBe(false);
    await rows.first().getByText('Evidence').click();
    await evidence.waitFor({ state: 'visible' });
    expect(JSON.parse((await evidence.textContent()) ?? '')).toEqual({
      status: 200,
      bodyPreview: '{"check":"result_type_present"}',
    });
    // The tests list says which test runs the checks.
    expect(await page.getByTestId('tests').textContent()).toContain('conformance checks');
    await section.screenshot({ path: shot('conformance-server.png') });

    // A server without conformance tests has no such section.
    await page.goto(`${web.url}/servers/${ids['handshake-only']}`);
    await page.getByRole('heading', { name: 'handshake-only' }).waitFor();
    expect(await page.getByTestId('conformance').count()).toBe(0);
  });

  it('draws the check × server matrix and filters it by era and level', async () => {
    await page.goto(`${web.url}/conformance`);
    const matrix = page.getByTestId('conformance-matrix');
    await matrix.waitFor();
    // Servers failing MUST checks first; the handshake-only server is not in it.
    const names = () => matrix.locator('tbody th a').allTextContents();
    expect(await names()).toEqual(['conf-failing', 'conf-hostile', 'conf-passing']);
    expect(await page.getByTestId('conformance-count').textContent()).toBe('3 servers · 2 failing a MUST check');
    const cell = matrix.locator('tbody tr', { hasText: 'conf-failing' }).locator('td[data-check=result_type_present]');
    expect(await cell.getAttribute('data-status')).toBe('fail');
    expect(await cell.getAttribute('title')).toBe(
      'result_type_present (MUST): fails in 2 of 2 regions — tools/list result has no resultType',
    );
    const warn = matrix.locator('tbody tr', { hasText: 'conf-failing' }).locator('td[data-check=no_session_id]');
    expect(await warn.getAttribute('title')).toMatch(/^no_session_id \(SHOULD\): fails in 1 of 2 regions/);
    const skip = matrix
      .locator('tbody tr', { hasText: 'conf-passing' })
      .locator('td[data-check=list_prompts_succeeds]');
    expect(await skip.getAttribute('data-status')).toBe('skip');
    expect([await skip.isVisible(), await skip.textContent()]).toEqual([true, '–']);
    await page.screenshot({ path: shot('conformance-matrix.png'), fullPage: true });

    // By era, through the form (server-rendered, as the other pages' filters).
    await page.getByLabel('Era').selectOption('legacy');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/era=legacy/);
    expect(await names()).toEqual(['conf-hostile', 'conf-passing']);
    expect(await matrix.locator('thead th[data-check=result_type_present]').count()).toBe(0);
    expect(await page.getByLabel('Era').inputValue()).toBe('legacy');

    // By level: SHOULD columns only.
    await page.goto(`${web.url}/conformance?level=SHOULD`);
    const columns = await matrix.locator('thead th[data-check]').evaluateAll((ths) => ths.map((t) => t.dataset.check));
    expect(columns).toEqual(['request_before_initialize_rejected', 'no_session_id', HOSTILE_ID]);
    await page.goto(`${web.url}/conformance?era=modern&level=MUST`);
    expect(await names()).toEqual(['conf-failing']);
    // A filter value outside the lists is no filter.
    await page.goto(`${web.url}/conformance?era=<b>&level=MAY`);
    expect(await names()).toHaveLength(3);

    // A row links to its server page.
    await matrix.getByRole('link', { name: 'conf-passing' }).click();
    await page.waitForURL(new RegExp(`/servers/${ids['conf-passing']}$`));
    await page.getByTestId('conformance-legacy').waitFor();
  });

  it('shows the share of servers passing every MUST check on the overview', async () => {
    await page.goto(`${web.url}/`);
    const fig = page.getByTestId('fig-conformance');
    await fig.waitFor();
    expect(await fig.locator('.value').textContent()).toBe('33%');
    expect(await fig.locator('.label').textContent()).toBe(
      'pass every MUST conformance check (1 of 3 servers with results)',
    );
    expect(await fig.getAttribute('href')).toBe('/conformance');
  });

  it('renders a hostile check message, evidence and id as text, never as markup (XSS)', async () => {
    await page.goto(`${web.url}/servers/${ids['conf-hostile']}`);
    const section = page.getByTestId('conformance');
    await section.getByTestId('conformance-table').waitFor();
    for (const details of await section.locator('details').all()) await details.locator('summary').click();
    const html = await section.innerHTML();
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<svg');
    expect(await section.locator('img, script, svg').count()).toBe(0);
    const text = (await section.textContent()) ?? '';
    expect(text).toContain(HOSTILE_MESSAGE);
    expect(text).toContain(HOSTILE_ID);
    expect(await section.getByTestId('check-evidence').first().textContent()).toContain(
      JSON.stringify(HOSTILE_BODY).slice(1, -1),
    );
    expect(await xss(page)).toBeNull();

    await page.goto(`${web.url}/conformance`);
    const matrix = page.getByTestId('conformance-matrix');
    await matrix.waitFor();
    expect(await matrix.locator('img, script, svg').count()).toBe(0);
    expect(await matrix.locator('thead').textContent()).toContain(HOSTILE_ID);
    const cell = matrix.locator('tbody tr', { hasText: 'conf-hostile' }).locator('td[data-check=server_info_present]');
    expect(await cell.getAttribute('title')).toContain(HOSTILE_MESSAGE);
    expect(await xss(page)).toBeNull();
  });

  it("sets a test's depth in the editor: handshake, conformance or both, through control's API", async () => {
    await page.goto(`${web.url}/servers/new`);
    await page.getByLabel('Name').fill('editor-depth');
    await page.getByLabel('URL').fill(m.sim.target('modern').url);
    await page.getByLabel('Interval').fill('1h');
    // Newest supported is ticked for a new server; its depth is a handshake until chosen.
    const depth = page.getByLabel('Depth (newest)');
    expect(await depth.inputValue()).toBe('handshake');
    await depth.selectOption('both');
    await page.getByRole('button', { name: 'Save' }).click();
    await saved(page, /\/servers\/[0-9a-f-]{36}$/);
    const id = page.url().split('/').pop()!;
    const live = async () =>
      (
        await m.store.db
          .select({ mode: tests.mode, depth: tests.depth })
          .from(tests)
          .where(and(inArray(tests.serverId, [id]), isNull(tests.retiredAt)))
      )
        .map((t) => `${t.mode}/${t.depth}`)
        .sort();
    expect(await live()).toEqual(['newest/conformance', 'newest/handshake']);
    await page.getByTestId('conformance').getByText('Not run yet').waitFor();

    // Edited: the stored depths are shown; conformance alone retires the handshake test.
    await page.goto(`${web.url}/servers/${id}/edit`);
    expect(await page.getByLabel('Depth (newest)').inputValue()).toBe('both');
    await page.getByLabel('Depth (newest)').selectOption('conformance');
    await page.locator('form.editor').screenshot({ path: shot('editor-depth.png') });
    await page.getByRole('button', { name: 'Save' }).click();
    await saved(page, new RegExp(`/servers/${id}$`));
    expect(await live()).toEqual(['newest/conformance']);
  });
});
