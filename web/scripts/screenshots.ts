// `npm run screenshots`: the README's pictures of every page, taken in Debian's Chromium from the
// real app. The charts need history, so the fleet is the bench's seeded one (300 servers, 30 days
// of runs, in its own Postgres database); the editor detects a fleet-sim server through a scratch
// control plane. Everything stays on loopback.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryBus } from '@mcp-fleet/bus';
import { parseFleet, startControl } from '@mcp-fleet/control';
import { startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { eraMoves, openStore } from '@mcp-fleet/store';
import { ADMIN_URL, admin } from '@mcp-fleet/testkit';
import { desc } from 'drizzle-orm';
import { seedFleet } from '../bench/seed';
import { launchBrowser } from '../tools/browser';
import { startDashboardProcess } from '../tools/next-process';

const OUT = join(import.meta.dirname, '..', '..', 'docs', 'screenshots');
const DATABASE = 'mcpfleet_screenshots';

async function main() {
  mkdirSync(OUT, { recursive: true });
  await admin(`drop database if exists ${DATABASE} with (force)`);
  await admin(`create database ${DATABASE}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${DATABASE}`;
  const databaseUrl = url.toString();
  await seedFleet(databaseUrl, { servers: 300, runs: 300_000, days: 30 });

  const log = createLogger('screenshots', 'silent');
  const scratchDir = mkdtempSync(join(tmpdir(), 'mcpfleet-shots-'));
  const scratch = await openStore({ dataDir: join(scratchDir, 'pgdata') });
  await scratch.migrate();
  const bus = createMemoryBus({ log });
  // Probes may reach loopback only (the sim).
  const fleet = parseFleet(
    'regions: [eu-west, us-east]\nservers: []\npolicy: { allow: ["127.0.0.0/8"] }\n',
    'screenshots',
  );
  // The editor's detection is control's own probe: its floor (public addresses only by default) opens loopback here.
  const control = await startControl({
    store: scratch,
    bus,
    log,
    fleet,
    port: 0,
    probeFloor: { allow: ['127.0.0.0/8'], deny: [] },
  });
  const sim = await startSim({ only: ['drifter-modern'] });
  const web = await startDashboardProcess({ DATABASE_URL: databaseUrl, MCP_FLEET_API_URL: control.url });
  const data = await openStore({ databaseUrl });
  const [move] = await data.db.select().from(eraMoves).orderBy(desc(eraMoves.at)).limit(1);

  const shoot = async (
    scheme: 'light' | 'dark',
    shots: [string, string, ((p: import('playwright-core').Page) => Promise<void>)?][],
  ) => {
    const browser = await launchBrowser({ colorScheme: scheme });
    const page = await browser.context.newPage();
    for (const [name, path, before] of shots) {
      await page.goto(`${web.url}${path}`);
      await page.waitForLoadState('networkidle');
      await before?.(page);
      await page.waitForTimeout(400);
      // Long lists are shown by their first screen.
      const list = name === 'servers' || name === 'era-moves';
      await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: !list });
      console.log(`docs/screenshots/${name}.png`);
    }
    await browser.close();
  };
  try {
    await shoot('light', [
      ['overview', '/?range=7d'],
      ['servers', '/servers?sort=failing&dir=desc'],
      ['server', `/servers/${move?.serverId}?range=7d`],
      ['era-moves', '/era-moves?range=7d'],
      [
        'add-server',
        '/servers/new',
        async (page) => {
          await page.getByLabel('Name').fill('orders-mcp');
          await page.getByLabel('URL').fill(sim.target('drifter-modern').url);
          await page.getByLabel('URL').blur();
          await page
            .locator('[data-testid=detection] [data-testid=detection-table]')
            .waitFor({ timeout: 30_000 })
            .catch(async (err) => {
              throw new Error(`${err.message}: ${await page.locator('[data-testid=detection]').textContent()}`);
            });
        },
      ],
    ]);
    await shoot('dark', [['overview-dark', '/?range=30d']]);
  } finally {
    await web.stop();
    await data.close();
    await sim.close();
    await control.stop();
    await bus.close();
    await scratch.close();
    rmSync(scratchDir, { recursive: true, force: true });
    await admin(`drop database if exists ${DATABASE} with (force)`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
