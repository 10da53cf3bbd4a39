// Dashboard sign-in end to end: the built app as its own process with a password, over a control
// that wants tokens. Pages go to /login without a session, a wrong password is refused, the right
// one gets in (Debian's Chromium, from the keyboard), server actions refuse without an admin
// session, and a post from another origin is refused. The dashboard's own API token stays on the
// server.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type Bus, createLogger, createMemoryBus } from '@mcp-fleet/bus';
import { apiAuthFromEnv, type Control, parseFleet, startControl } from '@mcp-fleet/control';
import { openStore, type Store } from '@mcp-fleet/store';
import { createTestDatabase, type TestDatabase } from '@mcp-fleet/testkit';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST as loginPost } from '../app/auth/login/route';
import { crossOriginRefusal, SESSION_COOKIE, webAuthFromEnv } from '../lib/auth-core';
import { FAILED_SIGN_INS_PER_MINUTE, signInBudget } from '../lib/sign-in-budget';
import { launchBrowser } from '../tools/browser';
import { type DashboardProcess, freePort, startDashboardProcess } from '../tools/next-process';

const token = () => randomBytes(24).toString('base64url');
const ADMIN = token();
const READ = token();
const PASSWORD = `pw-${randomBytes(9).toString('base64url')}`;

let db: TestDatabase;
let store: Store;
let bus: Bus;
let control: Control;
let web: DashboardProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let context: BrowserContext;
let page: Page;
let serverId: string;

/** The server actions' ids, from the build's manifest. */
function actionId(name: string): string {
  const file = fileURLToPath(new URL('../.next/server/server-reference-manifest.json', import.meta.url));
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  const entry = Object.entries(manifest.node as Record<string, { exportedName: string }>).find(
    ([, v]) => v.exportedName === name,
  );
  if (!entry) throw new Error(`no server action ${name} in the build`);
  return entry[0];
}

async function raw(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; cookie?: string } = {},
) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.cookie) headers.cookie = init.cookie;
  const res = await fetch(`${web.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body,
    redirect: 'manual',
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function signIn(password: string, extra: Record<string, string> = {}) {
  return raw('/auth/login', {
    method: 'POST',
    headers: {
      origin: web.url,
      'content-type': 'application/x-www-form-urlencoded',
      ...extra,
    },
    body: new URLSearchParams({ password, next: '/servers' }).toString(),
  });
}

const cookieOf = (setCookie: string | null) => setCookie?.match(new RegExp(`${SESSION_COOKIE}=[^;]+`))?.[0] ?? '';

/** Call a server action the way the browser does (a fetch to the page, `Next-Action` naming it). */
async function callAction(name: string, args: unknown[], opts: { cookie?: string; origin?: string } = {}) {
  return raw('/servers/new', {
    method: 'POST',
    cookie: opts.cookie,
    headers: {
      'next-action': actionId(name),
      accept: 'text/x-component',
      'content-type': 'text/plain;charset=UTF-8',
      origin: opts.origin ?? web.url,
    },
    body: JSON.stringify(args),
  });
}

beforeAll(async () => {
  db = await createTestDatabase('mcpfleet_web_auth');
  store = await openStore({ databaseUrl: db.url });
  await store.migrate();
  const log = createLogger('web-auth-test', 'silent');
  bus = createMemoryBus({ log });
  control = await startControl({
    store,
    bus,
    log,
    fleet: parseFleet(
      'regions: [eu-west]\ndefaults: { interval: 60s, timeout: 5s }\nservers: []\npolicy: { allow: ["127.0.0.0/8"] }\n',
      'auth fleet',
    ),
    port: 0,
    auth: apiAuthFromEnv({ MCP_FLEET_ADMIN_TOKEN: ADMIN, MCP_FLEET_READ_TOKEN: READ }),
  });
  const created = await fetch(`${control.url}/api/servers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'behind-login', url: 'http://127.0.0.1:9/mcp' }),
  });
  expect(created.status).toBe(201);
  serverId = ((await created.json()) as { server: { id: string } }).server.id;
  web = await startDashboardProcess({
    DATABASE_URL: db.url,
    MCP_FLEET_API_URL: control.url,
    MCP_FLEET_WEB_PASSWORD: PASSWORD,
    // The dashboard's own token for control; it also signs in (admin), as the read token does (read-only).
    MCP_FLEET_API_TOKEN: ADMIN,
    MCP_FLEET_READ_TOKEN: READ,
  });
  browser = await launchBrowser();
  context = browser.context;
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await control?.stop();
  await bus?.close();
  await store?.close();
  await db?.drop();
});

describe('without a session', () => {
  it('sends every page to /login, and keeps the probes and the sign-in page open', async () => {
    for (const path of [
      '/',
      '/?range=7d',
      '/servers',
      `/servers/${serverId}`,
      `/servers/${serverId}/edit`,
      '/servers/new',
      '/era-moves',
      '/no-such-page',
    ]) {
      const res = await raw(path);
      expect(res.status, path).toBe(307);
      const location = new URL(res.headers.get('location') ?? '', web.url);
      expect(location.pathname, path).toBe('/login');
      if (path !== '/') expect(location.searchParams.get('next'), path).toBe(path);
      expect(res.text, path).not.toContain('behind-login');
    }
    // A client-side navigation (an RSC request) too.
    const rsc = await raw('/servers', { headers: { rsc: '1' } });
    expect(rsc.status).toBe(307);
    expect(rsc.text).not.toContain('behind-login');
    expect((await raw('/healthz')).status).toBe(200);
    expect((await raw('/readyz')).status).toBe(200);
    const login = await raw('/login?next=/servers');
    expect(login.status).toBe(200);
    expect(login.text).toContain('action="/auth/login"');
    expect(login.text).not.toContain('behind-login');
  });

  it('refuses a forged or tampered session cookie', async () => {
    const good = cookieOf((await signIn(READ)).headers.get('set-cookie'));
    expect(good).toMatch(/=v1\.read\./);
    const forged = [
      good.replace('v1.read.', 'v1.admin.'),
      good.replace(/\.(\d+)\./, (_m, exp) => `.${Number(exp) + 3600}.`),
      `${SESSION_COOKIE}=v1.admin.9999999999.${'A'.repeat(43)}`,
      `${SESSION_COOKIE}=admin`,
    ];
    for (const cookie of forged) {
      const res = await raw('/servers', { cookie });
      expect(res.status, cookie).toBe(307);
      expect(res.headers.get('location')).toContain('error=expired');
    }
    expect((await raw('/servers', { cookie: good })).status).toBe(200);
  });
});

describe('signing in', () => {
  it('refuses a wrong password: back to the form, no cookie', async () => {
    for (const wrong of ['', 'wrong-password-123', `${PASSWORD}x`, PASSWORD.toUpperCase(), ADMIN.slice(1)]) {
      const res = await signIn(wrong);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/login?error=wrong&next=%2Fservers');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
  });

  it('lets the right password in with an HttpOnly, SameSite=Strict cookie (Secure over HTTPS)', async () => {
    const res = await signIn(PASSWORD);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/servers');
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toMatch(/Secure/);
    expect(setCookie).not.toContain(PASSWORD);
    const page = await raw('/servers', { cookie: cookieOf(setCookie) });
    expect(page.status).toBe(200);
    expect(page.text).toContain('behind-login');
    // Behind a TLS-terminating proxy the cookie is Secure.
    expect((await signIn(PASSWORD, { 'x-forwarded-proto': 'https' })).headers.get('set-cookie')).toMatch(/; Secure/);
    // An open redirect is not on offer.
    const away = await raw('/auth/login', {
      method: 'POST',
      headers: { origin: web.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password: PASSWORD, next: '//evil.example/x' }).toString(),
    });
    expect(away.headers.get('location')).toBe('/');
  });

  it('never sends the dashboard its API token or the password to the browser', async () => {
    const cookie = cookieOf((await signIn(PASSWORD)).headers.get('set-cookie'));
    // /servers/new asks control for the regions with the dashboard's token.
    const editor = await raw('/servers/new', { cookie });
    expect(editor.status).toBe(200);
    expect(editor.text).toContain('eu-west');
    for (const path of ['/servers/new', `/servers/${serverId}/edit`, '/', '/login'])
      for (const secret of [ADMIN, READ, PASSWORD]) expect((await raw(path, { cookie })).text).not.toContain(secret);
  });
});

describe('server actions', () => {
  const detect = [{ url: 'http://10.9.8.7/mcp', headers: [] }];

  it('refuse without a session', async () => {
    const res = await callAction('detectProtocol', detect);
    expect(res.status).toBe(401);
    expect(res.text).toContain('Sign in first');
    const save = await callAction('saveServer', [
      { name: 'sneaked', url: 'http://127.0.0.1:9/x', headers: [], regions: [], interval: '', timeout: '', tests: [] },
    ]);
    expect(save.status).toBe(401);
  });

  it('refuse a read-only session themselves (the second lock), and work for an admin one', async () => {
    const read = cookieOf((await signIn(READ)).headers.get('set-cookie'));
    const refused = await callAction('detectProtocol', detect, { cookie: read });
    expect(refused.status).toBe(200);
    expect(refused.text).toContain('This session is read-only');
    const admin = cookieOf((await signIn(PASSWORD)).headers.get('set-cookie'));
    const answered = await callAction('detectProtocol', detect, { cookie: admin });
    expect(answered.status).toBe(200);
    // Control admitted the dashboard's token and judged the URL on its merits (the target policy).
    expect(answered.text).toContain('10.9.8.7 is loopback, private or link-local');
    expect(answered.text).not.toContain('refused the dashboard');
  });

  it('refuse a post from another origin, even with a session', async () => {
    const admin = cookieOf((await signIn(PASSWORD)).headers.get('set-cookie'));
    const cross = await callAction('detectProtocol', detect, { cookie: admin, origin: 'http://evil.example' });
    expect(cross.status).toBe(403);
    expect(cross.text).toContain('Cross-origin request refused');
    const crossSite = await raw('/servers/new', {
      method: 'POST',
      cookie: admin,
      headers: { 'next-action': actionId('detectProtocol'), 'sec-fetch-site': 'cross-site' },
      body: JSON.stringify(detect),
    });
    expect(crossSite.status).toBe(403);
    const nullOrigin = await callAction('detectProtocol', detect, { cookie: admin, origin: 'null' });
    expect(nullOrigin.status).toBe(403);
  });
});

describe('cross-origin sign-in', () => {
  it('is refused by the dashboard, and by the sign-in route itself', async () => {
    const res = await signIn(PASSWORD, { origin: 'http://evil.example' });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
    const sameSite = await signIn(PASSWORD, { 'sec-fetch-site': 'same-site' });
    expect(sameSite.status).toBe(403);
    // The route's own check, without the proxy in front.
    const direct = await loginPost(
      new Request('http://127.0.0.1:3000/auth/login', {
        method: 'POST',
        headers: {
          host: '127.0.0.1:3000',
          origin: 'http://evil.example',
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ password: PASSWORD }).toString(),
      }),
    );
    expect(direct.status).toBe(403);
    expect(direct.headers.get('set-cookie')).toBeNull();
    expect(crossOriginRefusal(new Headers({ host: 'a:1', origin: 'http://a:1' }))).toBeNull();
    expect(crossOriginRefusal(new Headers({ host: 'a:1', origin: 'http://a:2' }))).toMatch(/not this dashboard/);
    expect(crossOriginRefusal(new Headers({ host: 'a:1' }))).toBeNull(); // curl: no browser, no one else's cookies
  });
});

describe('in Chromium', () => {
  it('signs in from the keyboard, refuses a wrong password, signs out', async () => {
    await page.goto(`${web.url}/servers`);
    await page.waitForURL(/\/login\?next=%2Fservers$/);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // The password field has the focus; Enter submits.
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name)).toBe('password');
    await page.keyboard.type('not-the-password');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/login\?error=wrong/);
    expect(await page.locator('form p[role=alert]').textContent()).toBe('That password is not right.');
    await page.getByLabel('Password').focus();
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Sign in');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${web.url}/servers`);
    await page.getByRole('link', { name: 'behind-login' }).waitFor();

    const session = (await context.cookies(web.url)).find((c) => c.name === SESSION_COOKIE);
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: false });
    expect(await page.evaluate(() => document.cookie)).not.toContain(SESSION_COOKIE);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${web.url}/login`);
    expect((await context.cookies(web.url)).some((c) => c.name === SESSION_COOKIE)).toBe(false);
    await page.goto(`${web.url}/era-moves`);
    await page.waitForURL(/\/login\?next=%2Fera-moves/);
  });

  it('follows a link from another site into a signed-in page (the Strict cookie after one reload)', async () => {
    await page.goto(`${web.url}/login`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${web.url}/`);
    // `localhost` is another site than 127.0.0.1: a link from there arrives without the cookie.
    const port = await freePort();
    const elsewhere: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<a href="${web.url}/servers/${serverId}">the server</a>`);
    });
    await new Promise<void>((resolve) => elsewhere.listen(port, '127.0.0.1', resolve));
    try {
      await page.goto(`http://localhost:${port}/`);
      await page.getByRole('link', { name: 'the server' }).click();
      await page.waitForURL(`${web.url}/servers/${serverId}`);
      await page.getByRole('heading', { name: 'behind-login' }).waitFor();
      // Signed out, the same link ends on the sign-in page after that one reload, not in a loop.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(`${web.url}/login`);
      const seen: string[] = [];
      page.on('request', (r) => r.isNavigationRequest() && seen.push(r.url()));
      await page.goto(`http://localhost:${port}/`);
      await page.getByRole('link', { name: 'the server' }).click();
      await page.waitForURL(/\/login\?next=/);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect(seen.filter((u) => u === `${web.url}/servers/${serverId}`).length).toBeLessThanOrEqual(2);
    } finally {
      elsewhere.closeAllConnections();
      await new Promise<void>((resolve) => elsewhere.close(() => resolve()));
    }
  });
});

describe('sign-in off', () => {
  it('serves loopback names only (no DNS rebinding into an open dashboard)', async () => {
    const open = await startDashboardProcess({ DATABASE_URL: db.url, MCP_FLEET_API_URL: control.url });
    try {
      const get = (host: string) =>
        new Promise<number>((resolve, reject) => {
          const url = new URL(open.url);
          request({ host: url.hostname, port: url.port, path: '/servers', headers: { host } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
            .on('error', reject)
            .end();
        });
      expect(await get(new URL(open.url).host)).toBe(200);
      expect(await get(`localhost:${new URL(open.url).port}`)).toBe(200);
      expect(await get('rebound.attacker.example:3000')).toBe(403);
    } finally {
      await open.stop();
    }
  });

  it('is on whenever a password or a token is configured, and checks them', () => {
    expect(webAuthFromEnv({}).enabled).toBe(false);
    expect(webAuthFromEnv({ MCP_FLEET_WEB_PASSWORD: PASSWORD }).enabled).toBe(true);
    // A dashboard holding an admin token for control is never an open door to it.
    const withToken = webAuthFromEnv({ MCP_FLEET_API_TOKEN: ADMIN });
    expect([withToken.enabled, withToken.login(ADMIN), withToken.login(READ)]).toEqual([true, 'admin', null]);
    expect(webAuthFromEnv({ MCP_FLEET_API_TOKENS: `read:${READ}` }).login(READ)).toBe('read');
    expect(() => webAuthFromEnv({ MCP_FLEET_WEB_PASSWORD: 'short' })).toThrow(/at least 12/);
    expect(() => webAuthFromEnv({ MCP_FLEET_WEB_PASSWORD: PASSWORD, MCP_FLEET_SESSION_KEY: 'k' })).toThrow(
      /MCP_FLEET_SESSION_KEY needs at least 32/,
    );
    // Sessions signed under one key or one set of credentials do not open another.
    const key = token();
    const a = webAuthFromEnv({ MCP_FLEET_WEB_PASSWORD: PASSWORD, MCP_FLEET_SESSION_KEY: key });
    const b = webAuthFromEnv({ MCP_FLEET_WEB_PASSWORD: PASSWORD, MCP_FLEET_SESSION_KEY: key });
    const c = webAuthFromEnv({ MCP_FLEET_WEB_PASSWORD: `${PASSWORD}2`, MCP_FLEET_SESSION_KEY: key });
    const d = webAuthFromEnv({ MCP_FLEET_WEB_PASSWORD: PASSWORD });
    const s = a.sign('admin');
    expect([!!b.verify(s), !!c.verify(s), !!d.verify(s)]).toEqual([true, false, false]);
    expect(a.verify(a.sign('admin', Date.now() - 13 * 3600_000))).toBeNull();
  });

  it('reads the API tokens exactly as control does: the same scope for every token, the same refusals', () => {
    const env = { MCP_FLEET_API_TOKENS: `read:${READ}`, MCP_FLEET_ADMIN_TOKEN: ADMIN };
    for (const presented of [READ, ADMIN, token(), `${ADMIN} `])
      expect(webAuthFromEnv(env).login(presented)).toBe(apiAuthFromEnv(env).identify(presented));
    const refusal = (read: () => unknown) => {
      try {
        read();
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    for (const bad of [
      { MCP_FLEET_ADMIN_TOKEN: 'short-secret-value' },
      { MCP_FLEET_API_TOKENS: `writer:${ADMIN}` },
      { MCP_FLEET_API_TOKENS: `read:${ADMIN}`, MCP_FLEET_ADMIN_TOKEN: ADMIN },
      { MCP_FLEET_READ_TOKEN: `${READ},x` },
    ]) {
      const message = refusal(() => webAuthFromEnv(bad));
      expect(message).not.toBe('accepted');
      expect(message).toBe(refusal(() => apiAuthFromEnv(bad)));
    }
  });
});

// Last: it spends the main dashboard's sign-in budget for the minute.
describe('failed sign-ins', () => {
  it('are rationed: past the minute budget even the right password waits, and is not compared', async () => {
    let tries = 0;
    for (; tries < FAILED_SIGN_INS_PER_MINUTE; tries += 1) {
      const res = await signIn(`wrong-${tries}-${PASSWORD}`);
      if (res.headers.get('location') === '/login?error=busy&next=%2Fservers') break;
      expect(res.headers.get('location')).toBe('/login?error=wrong&next=%2Fservers');
    }
    // Earlier tests spent part of the budget (six wrong passwords); it ran out within it.
    expect(tries).toBeGreaterThanOrEqual(1);
    expect(tries).toBeLessThanOrEqual(FAILED_SIGN_INS_PER_MINUTE - 6);
    const right = await signIn(PASSWORD);
    expect(right.status).toBe(303);
    expect(right.headers.get('location')).toBe('/login?error=busy&next=%2Fservers');
    expect(right.headers.get('set-cookie')).toBeNull();
    const form = await raw('/login?error=busy');
    expect(form.status).toBe(200);
    expect(form.text).toContain('Too many failed sign-ins in the last minute');
  });

  it('frees a try as the oldest failure leaves the minute', () => {
    const budget = signInBudget(3, 60_000);
    const t0 = 1_000_000;
    budget.failed(t0);
    budget.failed(t0 + 10_000);
    expect(budget.wait(t0 + 20_000)).toBe(0);
    budget.failed(t0 + 20_000);
    expect(budget.wait(t0 + 20_000)).toBe(40_000);
    expect(budget.wait(t0 + 59_999)).toBe(1);
    expect(budget.wait(t0 + 60_000)).toBe(0);
    budget.failed(t0 + 60_000);
    expect(budget.wait(t0 + 60_001)).toBe(9_999);
  });
});
