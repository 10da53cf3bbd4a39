// Debian's headless Chromium through playwright-core (never a downloaded browser), on a fresh profile.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = process.env.MCP_FLEET_CHROMIUM ?? '/usr/bin/chromium';

export async function launchBrowser(opts: { colorScheme?: 'light' | 'dark' } = {}): Promise<{
  context: BrowserContext;
  close(): Promise<void>;
}> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's (apt-get install -y chromium) or set MCP_FLEET_CHROMIUM`,
    );
  const profile = mkdtempSync(join(tmpdir(), 'mcpfleet-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1400, height: 1000 },
    colorScheme: opts.colorScheme ?? 'light',
  });
  return {
    context,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
