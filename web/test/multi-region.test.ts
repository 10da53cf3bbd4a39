// Issue 17 as on-call sees it, in Debian's Chromium against the built dashboard (its own process)
// over a real Postgres seeded through the store the way control's ingest leaves it: servers with a
// judgement, test states with failed runs in a row, era moves in every state, region
// disagreements, test slots and detections. The servers table (disagreement, availability, upgrade
// available, consensus), the server page's Regions section, and the era-moves page in its confirmed
// and raw views; and hostile stored values (a forged region, revision, move) stay inert text, cut to
// a bound.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Judgement } from '@mcp-fleet/config';
import {
  createServer,
  createTest,
  type Db,
  detections,
  eraMoves,
  fleetSummary,
  openStore,
  regionDisagreements,
  type Store,
  servers,
  testSlots,
  testStates,
} from '@mcp-fleet/store';
import { createTestDatabase, type TestDatabase, testKeyring } from '@mcp-fleet/testkit';
import { eq } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../tools/browser';
import { type DashboardProcess, startDashboardProcess } from '../tools/next-process';

const SHOTS = process.env.MCP_FLEET_SHOTS ?? join(tmpdir(), 'mcpfleet-shots');
mkdirSync(SHOTS, { recursive: true });
const shot = (name: string) => join(SHOTS, name);

const REGIONS = ['ap-south', 'eu-west', 'us-east'];
const HOSTILE_REGION = `<img src=x onerror="window.__pwned=1">${'r'.repeat(5_000)}`;
const HOSTILE_REVISION = '<script>window.__pwned=2</script>';
const LONG_KEY = 'z'.repeat(4_000);

let database: TestDatabase;
let store: Store;
let web: DashboardProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
const ids: Record<string, string> = {};

const ago = (ms: number) => new Date(Date.now() - ms);
const MIN = 60_000;

async function server(db: Db, name: string, regions: string[], judgement?: Judgement) {
  const s = await createServer(db, {
    name,
    url: `http://127.0.0.1:9/${name}`,
    regions,
    intervalMs: 3_600_000,
    timeoutMs: 1_000,
  });
  // A server's judgement as control stores it (config's resolved Judgement).
  if (judgement) await db.update(servers).set({ judgement }).where(eq(servers.id, s.id));
  return s;
}

async function state(db: Db, testId: string, region: string, revision: string | null, failedInARow = 0) {
  await db.insert(testStates).values({
    testId,
    region,
    currentRevision: revision,
    lastOutcome: failedInARow ? 'unsupported_version' : 'success',
    lastMessage: failedInARow ? 'Server no longer speaks protocol 2025-11-25' : 'The handshake succeeded.',
    failing: failedInARow > 0,
    consecutiveFailures: failedInARow,
    lastRunAt: ago(MIN),
  });
}

/** One test's slots over the last hours: `up` of them with a passing run, `executions` runs each, `successes` passing. */
async function slots(db: Db, testId: string, serverId: string, rows: { executions: number; successes: number }[]) {
  await db.insert(testSlots).values(rows.map((r, i) => ({ testId, serverId, bucket: ago((i + 1) * 30 * MIN), ...r })));
}

async function seed(db: Db) {
  const judgement: Judgement = {
    quorum: 'half',
    failAfter: 2,
    confirmAfter: 2,
    flapWindowMs: 30 * MIN,
    recheckMs: 86_400_000,
    disagreementAfterMs: 10 * MIN,
    slo: 99.5,
  };
  // A geo-DNS rollout: us-east and ap-south speak 2026-07-28, eu-west still 2025-11-25; its pin fails in two of three.
  const rollout = await server(db, 'rollout', REGIONS, judgement);
  ids.rollout = rollout.id;
  const newest = await createTest(db, { serverId: rollout.id, mode: 'newest', pinnedRevision: null });
  const pinned = await createTest(db, { serverId: rollout.id, mode: 'pinned', pinnedRevision: '2025-11-25' });
  await state(db, newest.id, 'ap-south', '2026-07-28');
  await state(db, newest.id, 'eu-west', '2025-11-25');
  await state(db, newest.id, 'us-east', '2026-07-28');
  await state(db, pinned.id, 'ap-south', '2025-11-25');
  await state(db, pinned.id, 'eu-west', null, 3);
  await state(db, pinned.id, 'us-east', null, 2);
  await db.insert(regionDisagreements).values([
    {
      serverId: rollout.id,
      testId: newest.id,
      revisions: { 'eu-west': '2025-11-25', 'us-east': '2026-07-28', 'ap-south': '2026-07-28' },
      startedAt: ago(12 * MIN + 5_000),
      updatedAt: ago(MIN),
    },
    {
      serverId: rollout.id,
      testId: newest.id,
      revisions: { 'eu-west': '2025-06-18', 'us-east': '2025-11-25' },
      startedAt: ago(2 * 86_400_000),
      endedAt: ago(2 * 86_400_000 - 30 * MIN),
      updatedAt: ago(2 * 86_400_000 - 30 * MIN),
    },
  ]);
  // The latest detection (us-east) found 2026-07-28: eu-west's newest-supported test has an upgrade available.
  await db.insert(detections).values([
    {
      serverId: rollout.id,
      region: 'eu-west',
      outcome: 'DETECTED',
      newestSupported: '2025-11-25',
      result: {},
      at: ago(3 * 3_600_000),
    },
    {
      serverId: rollout.id,
      region: 'us-east',
      outcome: 'DETECTED',
      newestSupported: '2026-07-28',
      result: {},
      at: ago(MIN),
    },
  ]);
  // 24 h: newest up in 9 of 10 intervals (27 of 30 runs passed); the pin up in all 10, 10 of 30 runs passed.
  await slots(
    db,
    newest.id,
    rollout.id,
    Array.from({ length: 10 }, (_, i) => ({ executions: 3, successes: i === 4 ? 0 : 3 })),
  );
  await slots(
    db,
    pinned.id,
    rollout.id,
    Array.from({ length: 10 }, () => ({ executions: 3, successes: 1 })),
  );

  // Up everywhere, regions agree, nothing to upgrade.
  const steady = await server(db, 'steady', ['eu-west', 'us-east']);
  ids.steady = steady.id;
  const steadyTest = await createTest(db, { serverId: steady.id, mode: 'newest', pinnedRevision: null });
  await state(db, steadyTest.id, 'eu-west', '2026-07-28');
  await state(db, steadyTest.id, 'us-east', '2026-07-28');
  await slots(
    db,
    steadyTest.id,
    steady.id,
    Array.from({ length: 4 }, () => ({ executions: 2, successes: 2 })),
  );

  // Era moves in every state (confirmAfter: the default 2).
  const mover = await server(db, 'mover', ['eu-west', 'us-east']);
  ids.mover = mover.id;
  const moverTest = await createTest(db, { serverId: mover.id, mode: 'newest', pinnedRevision: null });
  await state(db, moverTest.id, 'eu-west', '2026-07-28');
  await state(db, moverTest.id, 'us-east', '2025-11-25');
  const base = { serverId: mover.id, testId: moverTest.id, runId: null };
  const insert = async (row: Omit<typeof eraMoves.$inferInsert, 'serverId' | 'testId'>) =>
    (
      await db
        .insert(eraMoves)
        .values({ ...base, ...row })
        .returning({ id: eraMoves.id })
    )[0]!.id;
  const t = (from: string, to: string) => ({
    fromRevision: from,
    toRevision: to,
    downgrade: to < from,
    eraChanged: (to === '2026-07-28') !== (from === '2026-07-28'),
  });
  await insert({
    region: 'eu-west',
    ...t('2025-06-18', '2025-11-25'),
    at: ago(50 * MIN),
    state: 'confirmed',
    seenRuns: 2,
    confirmedAt: ago(49 * MIN),
    confirmedBy: 'runs',
  });
  const flapFirst = await insert({
    region: 'eu-west',
    ...t('2025-11-25', '2026-07-28'),
    at: ago(40 * MIN),
    state: 'flapping',
  });
  await insert({
    region: 'eu-west',
    ...t('2026-07-28', '2025-11-25'),
    at: ago(38 * MIN),
    state: 'flapping',
    flapOf: flapFirst,
  });
  // A quorum of regions confirms its moves at one instant (the run that completed the quorum).
  const confirmedAt = ago(29 * MIN);
  for (const region of ['eu-west', 'us-east'])
    await insert({
      region,
      ...t('2025-11-25', '2026-07-28'),
      at: ago(30 * MIN),
      state: 'confirmed',
      confirmedAt,
      confirmedBy: 'regions',
    });
  await insert({ region: 'us-east', ...t('2026-07-28', '2025-06-18'), at: ago(20 * MIN), state: 'superseded' });
  await insert({ region: 'us-east', ...t('2025-06-18', '2025-11-25'), at: ago(10 * MIN), state: 'pending' });

  // Hostile stored values: a forged move (region, revision) and a disagreement with made-up regions and revisions.
  const forged = await server(db, 'forged', ['eu-west']);
  ids.forged = forged.id;
  const forgedTest = await createTest(db, { serverId: forged.id, mode: 'newest', pinnedRevision: null });
  await state(db, forgedTest.id, 'eu-west', '2025-11-25');
  await db.insert(eraMoves).values({
    serverId: forged.id,
    testId: forgedTest.id,
    runId: null,
    region: HOSTILE_REGION,
    fromRevision: HOSTILE_REVISION,
    toRevision: `2026-07-28${'x'.repeat(3_000)}`,
    downgrade: false,
    eraChanged: false,
    at: ago(5 * MIN),
    state: 'confirmed',
    seenRuns: 2,
    confirmedAt: ago(4 * MIN),
    confirmedBy: 'runs',
  });
  await db.insert(regionDisagreements).values({
    serverId: forged.id,
    testId: forgedTest.id,
    revisions: {
      '<img src=x onerror="window.__pwned=3">': '2026-07-28',
      'eu-west': HOSTILE_REVISION,
      [LONG_KEY]: '2025-11-25',
    },
    startedAt: ago(3 * MIN),
    updatedAt: ago(MIN),
  });
  await db.insert(detections).values({
    serverId: forged.id,
    region: 'eu-west',
    outcome: 'DETECTED',
    newestSupported: HOSTILE_REVISION,
    result: {},
    at: ago(MIN),
  });
}

beforeAll(async () => {
  database = await createTestDatabase('mcpfleet_web_regions');
  store = await openStore({ databaseUrl: database.url, keyring: testKeyring() });
  await store.migrate();
  await seed(store.db);
  web = await startDashboardProcess({ DATABASE_URL: database.url, MCP_FLEET_API_URL: 'http://127.0.0.1:9' });
  browser = await launchBrowser();
  page = await browser.context.newPage();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await store?.close();
  await database?.drop();
});

const row = (name: string) => page.locator('[data-testid=servers-table] tbody tr', { hasText: name });
const text = async (l: ReturnType<Page['locator']>) => ((await l.textContent()) ?? '').replace(/\s+/g, ' ').trim();

/** Nothing stored ran as HTML: no injected element, no script ran. */
async function inert() {
  expect(await page.locator('img[src=x]').count()).toBe(0);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
}

describe('the servers table', () => {
  it('marks the disagreement, shows availability with the SLO line, the upgrade and the consensus', async () => {
    await page.goto(`${web.url}/servers`);
    const r = row('rollout');
    expect(await text(r.getByTestId('disagreement'))).toBe(
      'regions disagree: ap-south 2026-07-28, us-east 2026-07-28, eu-west 2025-11-25 for 12 min',
    );
    const availability = await text(r.getByTestId('availability'));
    // 19 of 20 intervals up; 37 of 60 runs passed; SLO 99.5 %: overspent.
    expect(availability).toContain('24 h: up 95.0% · reachable 61.7%');
    expect(availability).toContain('30 d: up 95.0% · reachable 61.7%');
    expect(availability).toMatch(/SLO 99\.5% uptime over 30 d: error budget overspent \(\d+% over\)/);
    expect(await text(r.getByTestId('upgrade'))).toBe('upgrade available: 2026-07-28');
    expect(await r.getByTestId('consensus').allTextContents()).toEqual([
      'pinned 2025-11-25: failing in 2 of 3 regions (quorum met)',
    ]);

    const steady = row('steady');
    expect(await text(steady.getByTestId('availability'))).toBe(
      '24 h: up 100% · reachable 100%30 d: up 100% · reachable 100%SLO 99.5% uptime over 30 d: 100% of the error budget left',
    );
    expect(await steady.getByTestId('disagreement').count()).toBe(0);
    expect(await steady.getByTestId('upgrade').count()).toBe(0);
    expect(await steady.getByTestId('consensus').count()).toBe(0);
    await page.getByTestId('servers-table').screenshot({ path: shot('regions-servers-table.png') });
  });

  it('hostile disagreement values: unknown revisions dropped, names rendered as text, cut to a bound', async () => {
    await page.goto(`${web.url}/servers`);
    const mark = await text(row('forged').getByTestId('disagreement'));
    expect(mark).toContain('<img src=x onerror="window.__pwned=3"> 2026-07-28');
    expect(mark).not.toContain('<script>');
    expect(mark.length).toBeLessThan(300);
    expect(mark).toMatch(/more characters cut\)$/);
    // A detection whose newest revision is no revision offers no upgrade.
    expect(await row('forged').getByTestId('upgrade').count()).toBe(0);
    await inert();
  });
});

describe("the server page's Regions section", () => {
  it('consensus per test, the open disagreement and its history, availability per window, the SLO line', async () => {
    await page.goto(`${web.url}/servers/${ids.rollout}`);
    const regions = page.getByTestId('regions');
    const consensus = await regions.locator('[data-testid=consensus-table] tbody tr').allTextContents();
    expect(consensus).toHaveLength(2);
    expect(consensus[0]).toBe('newest supportedupgrade available: 2026-07-280 / 3half (2 needed)2 runsnonepassing');
    expect(consensus[1]).toBe(
      'pinned 2025-11-252 / 3half (2 needed)2 runseu-west, us-eastfailing in 2 of 3 regions (quorum met)',
    );
    expect(await text(regions.getByTestId('disagreement-open'))).toMatch(
      /^regions disagree: ap-south 2026-07-28, us-east 2026-07-28, eu-west 2025-11-25 for 12 min ?started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
    );
    const history = await regions.locator('[data-testid=disagreement-history] tbody tr').allTextContents();
    expect(history).toHaveLength(2);
    expect(history[0]).toMatch(/ongoing12 minap-south 2026-07-28, us-east 2026-07-28, eu-west 2025-11-25$/);
    expect(history[1]).toMatch(/UTC30 minus-east 2025-11-25, eu-west 2025-06-18$/);

    expect(await text(regions.getByTestId('slo-line'))).toMatch(
      /^SLO 99\.5% uptime over 30 d: error budget overspent \(\d+% over\)$/,
    );
    const cells = async (testId: string) =>
      Promise.all(
        (await regions.getByTestId(testId).all()).map(async (tr) =>
          (await tr.locator('th, td').allTextContents()).map((c) => c.trim()),
        ),
      );
    // Of, then per window (24 h, 7 d, 30 d): uptime, reachability, runs.
    expect(await cells('availability-server')).toEqual([
      ['the server', '95.0%', '61.7%', '60', '95.0%', '61.7%', '60', '95.0%', '61.7%', '60'],
    ]);
    expect(await cells('availability-test')).toEqual([
      ['newest supported', '90.0%', '90.0%', '30', '90.0%', '90.0%', '30', '90.0%', '90.0%', '30'],
      ['pinned 2025-11-25', '100%', '33.3%', '30', '100%', '33.3%', '30', '100%', '33.3%', '30'],
    ]);
    // The Tests section says it too, and where.
    expect(await text(page.getByTestId('tests').getByTestId('upgrade'))).toBe(
      'upgrade available: 2026-07-28 (in eu-west)',
    );
    await regions.screenshot({ path: shot('regions-server-page.png') });
  });

  it('a server whose budget is intact says how much is left, and that its regions always agreed', async () => {
    await page.goto(`${web.url}/servers/${ids.steady}`);
    const regions = page.getByTestId('regions');
    expect(await text(regions.getByTestId('slo-line'))).toBe(
      'SLO 99.5% uptime over 30 d: 100% of the error budget left',
    );
    expect(await regions.getByTestId('disagreement-open').count()).toBe(0);
    expect(await regions.textContent()).toContain('Its regions have always agreed on the revision.');
  });

  it('hostile disagreement values stay text on the server page', async () => {
    await page.goto(`${web.url}/servers/${ids.forged}`);
    const history = await page.locator('[data-testid=disagreement-history] tbody tr td').last().textContent();
    expect(history).toContain('<img src=x onerror="window.__pwned=3"> 2026-07-28');
    expect(history).not.toContain('<script>');
    expect(history!.length).toBeLessThan(300);
    await inert();
  });
});

describe('the era-moves page', () => {
  const moverRows = () => page.locator('[data-testid=era-moves] tbody tr', { hasText: 'mover' });
  const states = async () =>
    (await moverRows().all()).length
      ? Promise.all(
          (await moverRows().all()).map(async (r) => [
            await text(r.getByTestId('move')),
            await text(r.getByTestId('move-state')),
          ]),
        )
      : [];

  it('confirmed by default: confirmed moves with their badges, a flap once', async () => {
    await page.goto(`${web.url}/era-moves?range=24h`);
    const view = page.getByTestId('move-view');
    expect(await view.locator('[aria-current=page]').textContent()).toBe('Confirmed');
    expect(await states()).toEqual([
      ['now 2026-07-28, was 2025-11-25', 'confirmed by 2 regions'],
      ['now 2026-07-28, was 2025-11-25', 'confirmed by 2 regions'],
      ['flapping: 2025-11-25→2026-07-28→2025-11-25', 'flapping'],
      ['now 2025-11-25, was 2025-06-18', 'confirmed in 2 runs'],
    ]);
    // A flap is not a downgrade: the kind says flap.
    const flap = moverRows().filter({ hasText: 'flapping:' });
    expect(await flap.locator('td').nth(5).textContent()).toBe('flap');
    await page.getByTestId('era-moves').screenshot({ path: shot('regions-era-moves-confirmed.png') });
  });

  it('the raw view, one click away: pending and superseded moves, and both halves of the flap', async () => {
    await page.goto(`${web.url}/era-moves?range=24h`);
    await page.getByTestId('move-view').getByRole('link', { name: /^Raw/ }).click();
    await page.waitForURL(/view=raw/);
    await expect.poll(() => moverRows().count()).toBe(7);
    expect(await page.getByTestId('move-view').locator('[aria-current=page]').textContent()).toMatch(/^Raw/);
    expect(await states()).toEqual([
      ['now 2025-11-25, was 2025-06-18', 'pending: seen in 1 of 2 runs'],
      ['now 2025-06-18, was 2026-07-28', 'superseded'],
      ['now 2026-07-28, was 2025-11-25', 'confirmed by 2 regions'],
      ['now 2026-07-28, was 2025-11-25', 'confirmed by 2 regions'],
      ['flapping: 2025-11-25→2026-07-28→2025-11-25', 'flapping'],
      ['now 2026-07-28, was 2025-11-25', 'flapping (undone)'],
      ['now 2025-11-25, was 2025-06-18', 'confirmed in 2 runs'],
    ]);
    // The filters keep the view.
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/view=raw/);
    await page.getByTestId('era-moves').screenshot({ path: shot('regions-era-moves-raw.png') });
  });

  it('a forged move is inert text, cut to a bound, in both views', async () => {
    for (const view of ['', '&view=raw']) {
      await page.goto(`${web.url}/era-moves?range=24h${view}`);
      const forged = page.locator('[data-testid=era-moves] tbody tr', { hasText: 'forged' });
      const cells = (await forged.locator('td').allTextContents()).map((c) => c.trim());
      expect(cells[2]).toMatch(/^<img src=x onerror="window\.__pwned=1">r+… \(\d+ more characters cut\)$/);
      expect(cells[2]!.length).toBeLessThan(300);
      expect(cells[3]).toContain(HOSTILE_REVISION);
      expect(cells[3]!.length).toBeLessThan(600);
      await inert();
    }
  });

  it("the overview counts confirmed moves and flaps once, as the store's summary does", async () => {
    const summary = await fleetSummary(store.db, { since: ago(86_400_000), countRuns: false });
    // mover: by runs, two by regions, the flap; forged: one.
    expect([summary.eraMoves, summary.flaps, summary.downgrades, summary.pendingMoves]).toEqual([5, 1, 0, 1]);
    await page.goto(`${web.url}/?range=24h`);
    expect(Number(await page.locator('[data-testid=fig-era-moves] .value').textContent())).toBe(5);
    const sub = await text(page.locator('section[aria-labelledby=moves-h] p.sub'));
    expect(sub).toContain('5 moves in the last 24h (0 to an older revision, 2 across eras, 1 flapping)');
    expect(sub).toContain('1 more waits for confirmation');
    expect(await page.getByTestId('latest-moves').textContent()).toContain(
      'flapping: 2025-11-25→2026-07-28→2025-11-25',
    );
    await inert();
  });
});
