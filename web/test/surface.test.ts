// Surfaces in the browser: the server page's Surface section (what the server offers per era, the
// regions disagreeing, required parameters and annotations, a truncated snapshot), its change
// history and a tool's schema diff; the era-moves page's surface kind and its filters; the
// overview's count of breaking changes linking to exactly them; and a hostile server's tool names,
// descriptions, schemas and change messages shown inert and bounded. A real control (Postgres,
// NATS) without agents, so the rows written here (as ingest writes them after surface runs) are the
// ones shown; the built dashboard as its own process; Debian's Chromium.
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestMonitor, type TestMonitor } from '@mcp-fleet/monitor/testing';
import type { Surface, SurfaceChange } from '@mcp-fleet/probe';
import { type Server, surfaceBlobs, surfaceChanges, surfaceHeads, type Test } from '@mcp-fleet/store';
import { serverWithTests } from '@mcp-fleet/store/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../tools/browser';
import { type DashboardProcess, startDashboardProcess } from '../tools/next-process';

const SHOTS = process.env.MCP_FLEET_SHOTS ?? join(tmpdir(), 'mcpfleet-shots');
mkdirSync(SHOTS, { recursive: true });
const shot = (name: string) => join(SHOTS, name);

const MIN = 60_000;
const now = Date.now();
const ago = (minutes: number) => new Date(now - minutes * MIN);

/** What a hostile server could put in its tools, resources and serverInfo. */
const HOSTILE_NAME = '<script>window.__xss=1</script>';
const HOSTILE_PARAM = '<svg onload="window.__xss=2">';
const HOSTILE_LINK = 'javascript:window.__xss=3';
const HUGE = `<img src=x onerror="window.__xss=4">${'A'.repeat(100_000)}`;

let m: TestMonitor;
let web: DashboardProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
const ids: Record<string, string> = {};
const changeIds: Record<string, number> = {};

function surface(era: 'legacy' | 'modern', tools: Surface['tools'], extra: Partial<Surface> = {}): Surface {
  return {
    era,
    revision: era === 'modern' ? '2026-07-28' : '2025-06-18',
    serverInfo: { name: 'orders-mcp', version: '2.1.0' },
    capabilities: { tools: { listChanged: true }, resources: {}, prompts: {} },
    tools,
    resources: [{ uri: 'file:///orders.csv', name: 'orders', mimeType: 'text/csv', description: 'All orders' }],
    resourceTemplates: [{ uriTemplate: 'orders://{id}', name: 'order', description: 'One order' }],
    prompts: [{ name: 'summarise', description: 'Summarise', arguments: [{ name: 'text', required: true }] }],
    truncated: false,
    ...extra,
  };
}

const createOrder = (required: string[]): Surface['tools'][number] => ({
  name: 'create_order',
  description: 'Create an order',
  inputSchema: {
    type: 'object',
    properties: {
      sku: { type: 'string', description: 'The article' },
      quantity: { type: 'integer' },
      currency: { type: 'string', enum: ['EUR', 'USD'] },
    },
    required,
  },
  annotations: { readOnlyHint: false, destructiveHint: true },
});
const getOrder: Surface['tools'][number] = {
  name: 'get_order',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  annotations: { readOnlyHint: true },
};

/**
 * Where the seed writes: one transaction for every blob and what refers to it, since control's
 * first prune runs as it starts and deletes a blob nothing refers to yet (ingest holds its blobs
 * the same way: surface-ingest.ts).
 */
type Seed = Pick<TestMonitor['store']['db'], 'insert'>;

async function blob(db: Seed, s: Surface): Promise<string> {
  const body = JSON.stringify(s);
  const hash = createHash('sha256').update(body).digest('hex');
  await db
    .insert(surfaceBlobs)
    .values({ hash, body: s, bytes: body.length, truncated: s.truncated })
    .onConflictDoNothing();
  return hash;
}

async function head(db: Seed, server: Server, region: string, s: Surface, hash: string, since: Date) {
  await db.insert(surfaceHeads).values({
    serverId: server.id,
    region,
    era: s.era,
    revision: s.revision,
    hash,
    since,
    lastSeenAt: ago(1),
  });
}

async function change(db: Seed, server: Server, test: Test, at: Date, c: SurfaceChange, from: string, to: string) {
  const [row] = await db
    .insert(surfaceChanges)
    .values({
      serverId: server.id,
      testId: test.id,
      region: 'eu-west',
      era: 'modern',
      ...c,
      fromHash: from,
      toHash: to,
      at,
    })
    .returning({ id: surfaceChanges.id });
  return row!.id;
}

beforeAll(async () => {
  m = await startTestMonitor('postgres+nats', [{ name: 'modern' }], { agents: false, interval: '1h' });
  const db = m.store.db;
  // orders: modern in two regions that read different surfaces (eu-west after the breaking change),
  // legacy in one, truncated.
  const orders = await serverWithTests(db, ['newest'], { name: 'orders', regions: ['eu-west', 'us-east'] });
  ids.orders = orders.server.id;
  const hostile = await serverWithTests(db, ['newest'], { name: 'hostile', regions: ['eu-west'] });
  ids.hostile = hostile.server.id;
  const busy = await serverWithTests(db, ['newest'], { name: 'busy', regions: ['eu-west'] });
  ids.busy = busy.server.id;
  await db.transaction(async (tx) => {
    const v1 = surface('modern', [createOrder(['sku']), getOrder]);
    const v2 = surface('modern', [createOrder(['sku', 'currency']), getOrder]);
    const legacy = surface('legacy', [createOrder(['sku'])], { truncated: true, prompts: [], resourceTemplates: [] });
    const [h1, h2, hl] = [await blob(tx, v1), await blob(tx, v2), await blob(tx, legacy)];
    await head(tx, orders.server, 'eu-west', v2, h2, ago(30));
    await head(tx, orders.server, 'us-east', v1, h1, ago(300));
    await head(tx, orders.server, 'eu-west', legacy, hl, ago(400));
    const t = orders.tests[0]!;
    changeIds.required = await change(
      tx,
      orders.server,
      t,
      ago(30),
      {
        severity: 'breaking',
        kind: 'tool',
        name: 'create_order',
        change: 'required_added',
        message: 'tool `create_order`: parameter `currency` now required',
        path: 'inputSchema.required',
      },
      h1,
      h2,
    );
    changeIds.hint = await change(
      tx,
      orders.server,
      t,
      ago(20),
      {
        severity: 'warning',
        kind: 'tool',
        name: 'get_order',
        change: 'annotation_changed',
        message: 'tool `get_order`: readOnlyHint now true',
      },
      h1,
      h2,
    );
    changeIds.added = await change(
      tx,
      orders.server,
      t,
      ago(15),
      { severity: 'info', kind: 'prompt', name: 'summarise', change: 'added', message: 'prompt `summarise` added' },
      hl,
      h2,
    );
    // Three days ago: outside a day's range.
    await change(
      tx,
      orders.server,
      t,
      ago(3 * 24 * 60),
      {
        severity: 'breaking',
        kind: 'capability',
        name: 'logging',
        change: 'removed',
        message: 'capability `logging` removed',
      },
      h1,
      h2,
    );

    // hostile: markup, javascript: links and huge strings in every field a surface has.
    const evilTool = (required: string[]): Surface['tools'][number] => ({
      name: HOSTILE_NAME,
      title: `[click](${HOSTILE_LINK})`,
      description: HUGE,
      inputSchema: {
        type: 'object',
        properties: {
          [HOSTILE_PARAM]: { type: HOSTILE_NAME, description: HUGE },
          url: { type: 'string', default: HOSTILE_LINK },
        },
        required,
      },
      annotations: { [HOSTILE_PARAM]: HUGE, readOnlyHint: true },
    });
    const e1 = surface('modern', [evilTool([])], {
      serverInfo: { name: HOSTILE_NAME, version: HUGE, title: HOSTILE_LINK },
      capabilities: { [HOSTILE_PARAM]: { x: HUGE } },
      resources: [{ uri: HOSTILE_LINK, name: HOSTILE_NAME, description: HUGE, mimeType: HOSTILE_PARAM }],
      resourceTemplates: [{ uriTemplate: HOSTILE_LINK, name: HOSTILE_PARAM }],
      prompts: [{ name: HOSTILE_PARAM, description: HUGE, arguments: [{ name: HOSTILE_NAME, required: true }] }],
    });
    const e2 = { ...e1, tools: [evilTool([HOSTILE_PARAM])] };
    const [eh1, eh2] = [await blob(tx, e1), await blob(tx, e2)];
    await head(tx, hostile.server, 'eu-west', e2, eh2, ago(10));
    changeIds.hostile = await change(
      tx,
      hostile.server,
      hostile.tests[0]!,
      ago(10),
      {
        severity: 'breaking',
        kind: 'tool',
        name: HOSTILE_NAME,
        change: 'required_added',
        message: `tool \`${HOSTILE_NAME}\`: parameter \`${HOSTILE_PARAM}\` now required ${HOSTILE_LINK} ${HUGE}`,
      },
      eh1,
      eh2,
    );

    // busy: 35 changes ten days ago (outside every range the other tests read), for the history's pages.
    for (let i = 0; i < 35; i++)
      await change(
        tx,
        busy.server,
        busy.tests[0]!,
        ago(10 * 24 * 60 + i),
        { severity: 'info', kind: 'tool', name: `tool_${i}`, change: 'added', message: `tool \`tool_${i}\` added` },
        h1,
        h2,
      );
  });

  web = await startDashboardProcess({ DATABASE_URL: m.databaseUrl!, MCP_FLEET_API_URL: m.control.url });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  page.on('dialog', (d) => void d.dismiss());
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await m?.close();
});

const xss = (p: Page) => p.evaluate(() => (window as unknown as { __xss?: number }).__xss ?? null);

describe('surfaces on the dashboard', () => {
  it('shows what a server offers per era: regions disagreeing, required parameters, annotations, truncation', async () => {
    await page.goto(`${web.url}/servers/${ids.orders}`);
    const section = page.getByTestId('surface');
    await section.getByRole('heading', { name: 'Surface' }).waitFor();

    // Modern: eu-west and us-east read different surfaces, each shown; modern comes first.
    const modern = section.getByTestId('surface-modern');
    expect(await modern.locator('h3').textContent()).toBe('Modern era · regions disagree');
    const views = modern.getByTestId('surface-view');
    expect(await views.count()).toBe(2);
    expect(await views.nth(0).locator('p.sub').first().textContent()).toMatch(
      /^2026-07-28 in eu-west · unchanged since 30 min ago/,
    );
    expect(await views.nth(1).locator('p.sub').first().textContent()).toMatch(/in us-east · unchanged since 5 h ago/);
    const eu = views.nth(0);
    expect(await eu.getByTestId('surface-info').textContent()).toContain('orders-mcp 2.1.0');
    expect(await eu.getByTestId('surface-info').locator('.badge').allTextContents()).toEqual([
      'prompts',
      'resources',
      'tools',
    ]);
    const createRow = eu.locator('tr[data-tool=create_order]');
    const required = async (row: typeof createRow) =>
      row.locator('.parameter[data-required=true] code').allTextContents();
    expect(await required(createRow)).toEqual(['currency', 'sku']);
    expect(await createRow.locator('.parameter', { hasText: 'currency' }).textContent()).toBe(
      'currency: string (EUR, USD)required',
    );
    expect(await createRow.locator('[data-annotation]').allTextContents()).toEqual([
      'destructiveHint: true',
      'readOnlyHint: false',
    ]);
    expect(await createRow.locator('.badge.destructive').count()).toBe(1);
    // us-east has not seen the change: currency is optional there.
    expect(await required(views.nth(1).locator('tr[data-tool=create_order]'))).toEqual(['sku']);
    expect(await eu.locator('tr[data-tool=get_order] [data-annotation]').allTextContents()).toEqual([
      'readOnlyHint: true',
    ]);
    // The schema as sent, on click.
    await createRow.locator('summary', { hasText: 'Schema' }).click();
    const schema = JSON.parse((await createRow.getByTestId('tool-schema').textContent()) ?? '');
    expect(schema.inputSchema.required).toEqual(['sku', 'currency']);
    // Resources, templates, prompts (a required argument marked).
    expect(await eu.getByTestId('surface-resources').locator('tbody tr').first().textContent()).toBe(
      'file:///orders.csvorderstext/csvAll orders',
    );
    expect(await eu.getByTestId('surface-templates').locator('tbody th').allTextContents()).toEqual(['orders://{id}']);
    expect(await eu.getByTestId('surface-prompts').locator('tbody td').first().textContent()).toBe('textrequired');

    // Legacy: one view, truncated, said so.
    const legacy = section.getByTestId('surface-legacy');
    expect(await legacy.locator('h3').textContent()).toBe('Legacy era');
    expect(await legacy.getByTestId('surface-truncated').textContent()).toMatch(/^Truncated/);
    expect(await modern.getByTestId('surface-truncated').count()).toBe(0);
    await section.screenshot({ path: shot('surface-server.png') });
  });

  it("lists the server's changes newest first with their severity, and diffs a tool's schema", async () => {
    await page.goto(`${web.url}/servers/${ids.orders}`);
    const rows = page.getByTestId('surface').getByTestId('surface-changes').locator('tbody tr');
    expect(await rows.count()).toBe(4);
    expect(await rows.locator('[data-severity]').allTextContents()).toEqual([
      'info',
      'warning',
      'breaking',
      'breaking',
    ]);
    const first = await rows.nth(2).locator('td').allTextContents();
    expect(first.slice(1, 5)).toEqual([
      'eu-west',
      'modern',
      'breaking',
      'tool create_order: parameter currency now required',
    ]);
    expect(await rows.nth(2).locator('td.change-message code').allTextContents()).toEqual(['create_order', 'currency']);
    expect(await rows.nth(3).locator('td').first().textContent()).toBe('3 d ago');
    expect(await page.getByTestId('surface-diff').count()).toBe(0);

    // The diff: the tool's definition before and after, the added requirement in green.
    await rows.nth(2).getByRole('link', { name: 'diff' }).click();
    await page.waitForURL(new RegExp(`change=${changeIds.required}#surface-diff$`));
    const diff = page.getByTestId('surface-diff');
    await diff.waitFor();
    expect(await diff.locator('h3').textContent()).toBe('breaking tool create_order: parameter currency now required');
    const lines = async (sign: string) =>
      (await diff.locator(`tr[data-sign="${sign}"] pre`).allTextContents()).map((l) => l.trim());
    expect(await lines('+')).toEqual(['+       "sku",', '+       "currency"']);
    expect(await lines('-')).toEqual(['-       "sku"']);
    // Unchanged lines around it stay as context; the rest folds.
    expect(await lines(' ')).toContain('"required": [');
    expect(await diff.locator('tr.fold').count()).toBeGreaterThan(0);
    expect(await page.locator(`#change-${changeIds.required}`).getAttribute('class')).toBe('highlight');
    await diff.screenshot({ path: shot('surface-diff.png') });

    // A change of another server's id, or no such change: no diff, the page still there.
    await page.goto(`${web.url}/servers/${ids.orders}?change=${changeIds.hostile}`);
    await page.getByTestId('surface').waitFor();
    expect(await page.getByTestId('surface-diff').count()).toBe(0);
    await page.goto(`${web.url}/servers/${ids.orders}?change=<b>&changes_before=nope`);
    expect(await page.getByTestId('surface-changes').locator('tbody tr').count()).toBe(4);
  });

  it("pages a server's change history, newest first, without losing or repeating one", async () => {
    await page.goto(`${web.url}/servers/${ids.busy}`);
    const names = () => page.getByTestId('surface-changes').locator('td.change-message code').allTextContents();
    const first = await names();
    expect(first).toHaveLength(30);
    expect(first[0]).toBe('tool_0');
    // No snapshot kept, only its history: said so.
    expect(await page.getByTestId('surface').getByText('No snapshot kept now.').count()).toBe(1);
    await page.getByRole('link', { name: 'Older changes →' }).click();
    await page.waitForURL(/changes_before=/);
    await expect.poll(names).toEqual(['tool_30', 'tool_31', 'tool_32', 'tool_33', 'tool_34']);
    expect(await page.getByRole('link', { name: 'Older changes →' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Newest changes' }).click();
    await expect.poll(async () => (await names())[0]).toBe('tool_0');
  });

  it('lists surface changes as a kind on the era-moves page, filtered by region, severity and item', async () => {
    await page.goto(`${web.url}/era-moves?range=24h`);
    await page.getByLabel('Kind').selectOption('surface');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/kind=surface/);
    const table = page.getByTestId('surface-changes');
    const names = () => table.locator('tbody tr td:nth-child(2)').allTextContents();
    // Newest first, across servers; the range (the form does not carry it: the default) leaves the 3-day-old one out.
    expect(await names()).toEqual(['hostile', 'orders', 'orders', 'orders']);
    await page.getByLabel('Severity').selectOption('breaking');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/severity=breaking/);
    expect(await names()).toEqual(['hostile', 'orders']);
    expect(await table.locator('[data-severity]').allTextContents()).toEqual(['breaking', 'breaking']);
    await page.screenshot({ path: shot('surface-era-moves.png'), fullPage: true });
    await page.goto(`${web.url}/era-moves?range=24h&kind=surface&item=prompt`);
    expect(await names()).toEqual(['orders']);
    await page.goto(`${web.url}/era-moves?range=7d&kind=surface&severity=breaking&region=us-east`);
    await page.getByText('No surface changes match').waitFor();
    await page.goto(`${web.url}/era-moves?range=7d&kind=surface&severity=breaking`);
    expect(await names()).toEqual(['hostile', 'orders', 'orders']);
    // Another kind leaves the surface filters out and lists era moves again.
    await page.goto(`${web.url}/era-moves?range=24h&kind=downgrade&severity=breaking`);
    expect(await page.getByLabel('Severity').count()).toBe(0);
    await page.getByText('No era moves match').waitFor();
    // A row's diff link goes to its server page's diff.
    await page.goto(`${web.url}/era-moves?range=24h&kind=surface&item=prompt`);
    await table.getByRole('link', { name: 'diff' }).click();
    await page.waitForURL(new RegExp(`/servers/${ids.orders}\\?change=${changeIds.added}`));
    expect(await page.getByTestId('surface-diff').locator('tr[data-sign="+"]').count()).toBeGreaterThan(3);
  });

  it("counts the range's breaking changes on the overview, linking to exactly them", async () => {
    await page.goto(`${web.url}/?range=24h`);
    const fig = page.getByTestId('fig-breaking-surface');
    await fig.waitFor();
    expect(await fig.locator('.value').textContent()).toBe('2');
    expect(await fig.locator('.label').textContent()).toBe('breaking surface changes in 24h');
    expect(await fig.getAttribute('class')).toBe('figure bad');
    expect(await fig.getAttribute('href')).toBe('/era-moves?kind=surface&severity=breaking&range=24h');
    await page.goto(`${web.url}/?range=7d`);
    expect(await fig.locator('.value').textContent()).toBe('3');
    await page.goto(`${web.url}/?range=1h`);
    expect(await fig.locator('.value').textContent()).toBe('2');
    await fig.click();
    await page.waitForURL(/\/era-moves\?kind=surface&severity=breaking&range=1h$/);
    // A client-side navigation: the list arrives after the URL.
    await expect.poll(() => page.getByTestId('surface-changes').locator('tbody tr').count()).toBe(2);
    expect(await page.getByLabel('Severity').inputValue()).toBe('breaking');
  });

  it("shows a hostile server's names, descriptions, schemas and messages as bounded text (XSS)", async () => {
    await page.goto(`${web.url}/servers/${ids.hostile}?change=${changeIds.hostile}`);
    const section = page.getByTestId('surface');
    await section.getByTestId('surface-diff').waitFor();
    for (const details of await section.locator('details').all()) await details.locator('summary').click();
    const html = await section.innerHTML();
    for (const tag of ['<script', '<img', '<svg']) expect(html).not.toContain(tag);
    expect(await section.locator('script, img, svg').count()).toBe(0);
    // Nothing the server sent became a link.
    expect(await page.locator('a[href^="javascript:" i]').count()).toBe(0);
    expect(await section.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')))).toEqual(
      expect.arrayContaining([`/servers/${ids.hostile}?change=${changeIds.hostile}#surface-diff`]),
    );
    for (const href of await section.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? '')))
      expect(href.startsWith('/servers/')).toBe(true);
    // As text, quoted whole where short.
    const text = (await section.textContent()) ?? '';
    for (const s of [HOSTILE_NAME, HOSTILE_PARAM, HOSTILE_LINK]) expect(text).toContain(s);
    // Bounded: a 100 000-character description is cut, said so; nothing widens the page.
    const tool = section.locator('table[data-testid=surface-tools] tbody tr').first();
    const description = (await tool.locator('th .description').textContent()) ?? '';
    expect(description.length).toBeLessThan(400);
    expect(description).toMatch(/more characters cut\)$/);
    expect(text.length).toBeLessThan(150_000);
    const diffText = (await section.getByTestId('surface-diff').textContent()) ?? '';
    expect(diffText).toContain('more characters cut');
    expect(diffText.length).toBeLessThan(30_000);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    expect(await xss(page)).toBeNull();
    await section.screenshot({ path: shot('surface-hostile.png') });

    await page.goto(`${web.url}/era-moves?range=24h&kind=surface`);
    const table = page.getByTestId('surface-changes');
    await table.waitFor();
    expect(await table.locator('script, img, svg').count()).toBe(0);
    expect(await page.locator('a[href^="javascript:" i]').count()).toBe(0);
    expect((await table.textContent()) ?? '').toContain(HOSTILE_NAME);
    expect(await xss(page)).toBeNull();
    await page.goto(`${web.url}/?range=24h`);
    await page.getByTestId('fig-breaking-surface').waitFor();
    expect(await xss(page)).toBeNull();
  });
});
