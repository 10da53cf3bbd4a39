// The editor's Command mode in the browser (issue 20): a stdio server's command is chosen among those
// some live agent of the chosen regions allows (their heartbeats say which); a region whose agents
// allow none says so and nothing can be saved; a saved one is in the server list and its agent runs
// it. A real monitor (Postgres, NATS, control, two agents allowing this Node only, fleet-sim's stdio
// server), the built dashboard as its own process, Debian's Chromium.
import { stdioServer } from '@mcp-fleet/fleet-sim';
import { startTestMonitor, type TestMonitor } from '@mcp-fleet/monitor/testing';
import { getServer, type ServerOverview } from '@mcp-fleet/store';
import { waitFor } from '@mcp-fleet/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../tools/browser';
import { type DashboardProcess, startDashboardProcess } from '../tools/next-process';

/** A fleet region no agent serves: no command is allowed there. */
const QUIET = 'ap-south';
const NODE = process.execPath;
const v2 = stdioServer('v2');

let m: TestMonitor;
let web: DashboardProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

const servers = async () => (await m.api<{ servers: ServerOverview[] }>('/api/servers')).body.servers;
const commandOptions = () => page.locator('select[name=command] option').allTextContents();
const allowedNote = () => page.locator('[data-testid=command-allowed]').textContent();
const save = () => page.getByRole('button', { name: 'Save' });

beforeAll(async () => {
  m = await startTestMonitor('postgres+nats', [{ name: 'modern' }], {
    interval: '2s',
    spareRegions: [QUIET],
    stdioCommands: [NODE],
  });
  // Both agents' heartbeats, naming this Node, are recorded before the editor asks.
  await waitFor(
    'both agents to say they allow this Node',
    async () => {
      const { regions } = (await m.api<{ regions: Record<string, string[]> }>('/api/stdio-commands')).body;
      return ['eu-west', 'us-east'].every((r) => regions[r]?.includes(NODE));
    },
    15_000,
  );
  web = await startDashboardProcess({ DATABASE_URL: m.databaseUrl!, MCP_FLEET_API_URL: m.control.url });
  browser = await launchBrowser();
  page = await browser.context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await m?.close();
});

describe("the editor's Command mode", () => {
  it('offers only allowed commands, refuses to save where none is, and saves a stdio server that then runs', async () => {
    await page.goto(`${web.url}/servers/new`);
    await page.getByLabel('Name').fill('stdio-added');
    await page.getByRole('button', { name: 'Command' }).click();
    // No region ticked: every region of the fleet, and this Node is all their agents allow.
    expect(await commandOptions()).toEqual(['Choose a command an agent allows', NODE]);
    expect(await allowedNote()).toContain(`allow: ${NODE}`);

    // Only a region whose agents allow nothing: said, and Save is off.
    await page.getByLabel(QUIET).check();
    await expect.poll(allowedNote).toContain(`No live agent of region ${QUIET} allows a stdio command`);
    expect(await commandOptions()).toEqual(['No command allowed']);
    expect(await save().isDisabled()).toBe(true);
    expect((await servers()).some((s) => s.name === 'stdio-added')).toBe(false);

    // eu-west's agent allows this Node: chosen, with fleet-sim's stdio server as its arguments.
    await page.getByLabel(QUIET).uncheck();
    await page.getByLabel('eu-west').check();
    await expect.poll(commandOptions).toEqual(['Choose a command an agent allows', NODE]);
    expect(await save().isDisabled()).toBe(true);
    await page.locator('select[name=command]').selectOption(NODE);
    await page.locator('textarea[name=args]').fill(v2.args.join('\n'));
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Variable', { exact: true }).fill('SIM_NOTE');
    await page.getByLabel('Value', { exact: true }).fill('from-the-editor');
    // Each run starts a Node process, which takes seconds while a test run loads both cores.
    await page.getByLabel('Interval').fill('5s');
    await page.getByLabel('Timeout').fill('5s');
    expect(await save().isDisabled()).toBe(false);
    await save().click();
    await page.waitForURL(/\/servers\/[0-9a-f-]{36}$/, { timeout: 20_000 }).catch(async (err) => {
      const alert = await page
        .locator('form p[role=alert]')
        .textContent()
        .catch(() => null);
      throw new Error(`${err.message}\nthe form said: ${alert}\n${web.output()}`);
    });
    await page.getByRole('heading', { name: 'stdio-added' }).waitFor();

    // In the server list, as control stores it: this Node, its args, its env masked, eu-west only.
    await page.goto(`${web.url}/servers`);
    await expect
      .poll(() => page.locator('[data-testid=servers-table] tbody th a').allTextContents())
      .toContain('stdio-added');
    const added = (await servers()).find((s) => s.name === 'stdio-added')!;
    expect(added.url).toBe(`stdio: ${NODE} ${v2.args.join(' ')}`);
    const detail = (await m.api<{ server: Record<string, unknown> }>(`/api/servers/${added.id}`)).body.server;
    expect(detail).toMatchObject({ command: NODE, args: v2.args, env: { SIM_NOTE: '••••••' }, regions: ['eu-west'] });

    // eu-west's agent starts it: its first run lands.
    await waitFor(
      'the stdio server to run in eu-west',
      async () =>
        (await servers()).find((s) => s.name === 'stdio-added')?.byRegion[0]?.currentRevision === '2026-07-28',
      30_000,
    );
  }, 90_000);

  it('edits a stdio server as one: its command shown, a blank env value keeps the stored one', async () => {
    const added = (await servers()).find((s) => s.name === 'stdio-added')!;
    await page.goto(`${web.url}/servers/${added.id}/edit`);
    // No URL/Command switch: a server stays what it is.
    expect(await page.getByRole('button', { name: 'Command' }).count()).toBe(0);
    await expect.poll(() => page.locator('select[name=command]').inputValue()).toBe(NODE);
    expect(await page.locator('textarea[name=args]').inputValue()).toBe(v2.args.join('\n'));
    expect(await page.getByLabel('Variable', { exact: true }).inputValue()).toBe('SIM_NOTE');
    // The value never comes to the browser.
    expect(await page.getByLabel('Value', { exact: true }).inputValue()).toBe('');
    expect(await page.content()).not.toContain('from-the-editor');
    await page.getByLabel('Interval').fill('6s');
    await save().click();
    await page.waitForURL(/\/servers\/[0-9a-f-]{36}$/, { timeout: 20_000 }).catch(async (err) => {
      const alert = await page
        .locator('form p[role=alert]')
        .textContent()
        .catch(() => null);
      throw new Error(`${err.message}\nthe form said: ${alert}\n${web.output()}`);
    });
    const stored = await getServer(m.store.db, added.id);
    expect(stored).toMatchObject({ intervalMs: 6_000, command: { command: NODE, args: v2.args } });
    expect(stored?.command?.env).toEqual({ SIM_NOTE: 'from-the-editor' });
  }, 60_000);
});
