// The dashboard and control with compose's environment: the `secrets` service's command run as
// compose runs it, then control's API with the tokens its files hold and the built dashboard as its
// own process with nothing but the web service's `<VAR>_FILE` paths (and this machine's database
// and control's address). Signing in takes the generated password, and the dashboard's calls to
// control carry the generated admin token: the files are really read, by the real processes.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Bus, createMemoryBus } from '@mcp-fleet/bus';
import { apiAuthFromEnv, type Control, parseFleet, startControl } from '@mcp-fleet/control';
import { createLogger } from '@mcp-fleet/log';
import { openStore, type Store } from '@mcp-fleet/store';
import { createTestDatabase, type TestDatabase, testKeyring } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../web/lib/auth-core';
import { type DashboardProcess, startDashboardProcess } from '../../web/tools/next-process';
import { composeOnDisk } from './compose-file';
import { REPO } from './source-env';

let root: string;
let db: TestDatabase;
let store: Store;
let bus: Bus;
let control: Control;
let web: DashboardProcess;
let files: Record<string, string>;

/** A server action's id, from the build's manifest. */
function actionId(name: string): string {
  const manifest = JSON.parse(readFileSync(join(REPO, 'web/.next/server/server-reference-manifest.json'), 'utf8'));
  const entry = Object.entries(manifest.node as Record<string, { exportedName: string }>).find(
    ([, v]) => v.exportedName === name,
  );
  if (!entry) throw new Error(`no server action ${name} in the build`);
  return entry[0];
}

async function post(path: string, headers: Record<string, string>, body: string) {
  const res = await fetch(`${web.url}${path}`, {
    method: 'POST',
    headers: { origin: web.url, ...headers },
    body,
    redirect: 'manual',
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const signIn = (password: string) =>
  post(
    '/auth/login',
    { 'content-type': 'application/x-www-form-urlencoded' },
    new URLSearchParams({ password, next: '/servers' }).toString(),
  );
const cookieOf = (setCookie: string | null) => setCookie?.match(new RegExp(`${SESSION_COOKIE}=[^;]+`))?.[0] ?? '';

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'mcp-fleet-compose-web-'));
  const disk = composeOnDisk(root);
  const init = await disk.runInit();
  expect(init.stderr).toBe('');
  const webEnv = disk.envOf('web');
  files = Object.fromEntries(
    Object.entries(webEnv)
      .filter(([k]) => k.endsWith('_FILE'))
      .map(([k, path]) => [k.slice(0, -'_FILE'.length), readFileSync(path, 'utf8')]),
  );
  db = await createTestDatabase('mcpfleet_compose_web');
  store = await openStore({ databaseUrl: db.url, keyring: testKeyring() });
  await store.migrate();
  const log = createLogger('compose-web-test', 'silent');
  bus = createMemoryBus({ log });
  control = await startControl({
    store,
    bus,
    log,
    fleet: parseFleet('regions: [eu-west]\nservers: []\n', 'compose web fleet'),
    port: 0,
    // Control's tokens as `mcp-fleet control` reads them from its service's environment.
    auth: apiAuthFromEnv(disk.envOf('control')),
  });
  // Only the web service's own settings, with this machine's database and control in place of the
  // compose network's (the runner's MCP_FLEET_SECRET_KEY emptied: the file is the dashboard's key).
  const { DATABASE_URL: _db, MCP_FLEET_API_URL: _api, PORT: _port, ...rest } = webEnv;
  web = await startDashboardProcess({
    ...rest,
    MCP_FLEET_SECRET_KEY: '',
    DATABASE_URL: db.url,
    MCP_FLEET_API_URL: control.url,
  });
}, 180_000);

afterAll(async () => {
  await web?.stop();
  await control?.stop();
  await bus?.close();
  await store?.close();
  await db?.drop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('the dashboard, started with the web service’s secret files', () => {
  it('asks for a sign-in, and lets in the generated password (admin) and read token (read-only)', async () => {
    const page = await fetch(`${web.url}/servers`, { redirect: 'manual' });
    expect(page.status).toBe(307);
    expect(page.headers.get('location')).toMatch(/\/login/);
    const wrong = await signIn('not the password at all');
    expect(wrong.headers.get('location')).toBe('/login?error=wrong&next=%2Fservers');
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const admin = await signIn(files.MCP_FLEET_WEB_PASSWORD!);
    expect(admin.status).toBe(303);
    expect(admin.headers.get('location')).toBe('/servers');
    expect(cookieOf(admin.headers.get('set-cookie'))).toMatch(/^mcp-fleet-session=v1\.admin\./);
    const read = await signIn(files.MCP_FLEET_READ_TOKEN!);
    expect(cookieOf(read.headers.get('set-cookie'))).toMatch(/^mcp-fleet-session=v1\.read\./);
  });

  it("calls control with the generated admin token, which control's own file holds", async () => {
    const cookie = cookieOf((await signIn(files.MCP_FLEET_WEB_PASSWORD!)).headers.get('set-cookie'));
    const res = await post(
      '/servers/new',
      {
        cookie,
        'next-action': actionId('detectProtocol'),
        accept: 'text/x-component',
        'content-type': 'text/plain;charset=UTF-8',
      },
      JSON.stringify([{ url: 'http://10.9.8.7/mcp', headers: [] }]),
    );
    expect(res.status).toBe(200);
    // Control admitted the dashboard's token and judged the URL on its merits (the target policy).
    expect(res.text).toContain('10.9.8.7 is loopback, private or link-local');
    expect(res.text).not.toContain('refused the dashboard');
    for (const secret of Object.values(files)) if (secret) expect(res.text).not.toContain(secret);
  });
});
