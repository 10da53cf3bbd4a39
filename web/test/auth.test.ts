// Dashboard sign-in end to end: the built app as its own process with a password, over a control
// that wants tokens. Pages go to /login without a session, a wrong password is refused, the right
// one gets in (Debian's Chromium, from the keyboard), server actions refuse without an admin
// session, a post from another origin is refused, `next` never leaves the dashboard, failed
// sign-ins are rationed per client address, and no page renders in another site's frame. The
// dashboard's own API token stays on the server.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type Bus, createMemoryBus } from '@mcp-fleet/bus';
import { apiAuthFromEnv, type Control, parseFleet, startControl } from '@mcp-fleet/control';
import { createLogger } from '@mcp-fleet/log';
import { openStore, type Store } from '@mcp-fleet/store';
import { createTestDatabase, type TestDatabase, testKeyring } from '@mcp-fleet/testkit';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST as loginPost } from '../app/auth/login/route';
import { SESSION_COOKIE, safeNext, setWebAuth } from '../lib/auth-core';
import { webAuthFromEnv } from '../lib/auth-env';
import {
  CLIENT_ADDRESS_HEADER,
  clientKey,
  FAILED_SIGN_INS_PER_CLIENT,
  FAILED_SIGN_INS_PER_MINUTE,
  signInBudget,
} from '../lib/sign-in-budget';
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
  store = await openStore({ databaseUrl: db.url, keyring: testKeyring() });
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
    expect(cross.text).toContain("Refused: Origin http://evil.example is not this server's own");
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
    // The route's own check, without the proxy in front (sign-in set up in this process as a start would).
    setWebAuth(() => webAuthFromEnv(process.env));
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
    // Sign-out too: another site cannot end a session (nor start one for an account of its own).
    const out = await raw('/auth/logout', { method: 'POST', headers: { 'sec-fetch-site': 'same-site' } });
    expect(out.status).toBe(403);
    expect(out.headers.get('set-cookie')).toBeNull();
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

describe('where signing in leads (next)', () => {
  it('keeps only paths of this dashboard, as a browser would read them in a Location', () => {
    const kept: [string, string][] = [
      ['/servers', '/servers'],
      ['/servers?q=a%20b&range=7d', '/servers?q=a%20b&range=7d'],
      ['/era-moves#latest', '/era-moves#latest'],
      ['/%5Cevil.example', '/%5Cevil.example'], // an encoded backslash is a path segment, not a host
      ['/servers?next=//evil.example', '/servers?next=//evil.example'], // in the query, `//` is data
      ['/servers/é', '/servers/%C3%A9'], // percent-encoded: a header can carry it
      ['/a/../servers', '/servers'],
    ];
    for (const [next, where] of kept) expect(safeNext(next), JSON.stringify(next)).toBe(where);
    for (const hostile of [
      '//evil.example',
      '///evil.example',
      '/\\evil.example',
      '\\/evil.example',
      '/\t/evil.example',
      '/\n/evil.example',
      '/\r\n/evil.example',
      '/\u0000/evil.example',
      '/\u007f/evil.example',
      '/.//evil.example',
      '/servers//x',
      'https://evil.example/',
      'evil.example',
      ' /servers',
      '',
      '/login',
      '/login/',
      '/a/../login',
      '/auth/logout',
      `/${'a'.repeat(2_001)}`,
    ])
      expect(safeNext(hostile), JSON.stringify(hostile)).toBe('/');
    expect(safeNext(['/servers'])).toBe('/');
  });
});

describe('other sites in Chromium', () => {
  /** Pages served from another loopback origin (127.0.0.2), as a hostile site would serve them. */
  let elsewhere: Server;
  let elsewhereUrl: string;
  const hits: string[] = [];
  const pages = new Map<string, string>();

  beforeAll(async () => {
    const port = await freePort();
    elsewhere = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(pages.get(req.url ?? '') ?? '<!doctype html><title>elsewhere</title><h1>Elsewhere</h1>');
    });
    await new Promise<void>((resolve) => elsewhere.listen(port, '127.0.0.2', resolve));
    elsewhereUrl = `http://127.0.0.2:${port}`;
  });

  afterAll(async () => {
    elsewhere?.closeAllConnections();
    await new Promise<void>((resolve) => elsewhere?.close(() => resolve()));
  });

  it('a hostile next: signing in lands on the dashboard, never on another host', async () => {
    const ctx = await browser.context.browser()?.newContext();
    const p = ctx ? await ctx.newPage() : await context.newPage();
    try {
      // A tab, which browsers drop from a URL: the Location `/<tab>/127.0.0.2:…` would be `//127.0.0.2:…`.
      const hostile = `/\t/${new URL(elsewhereUrl).host}/landed`;
      await p.goto(`${web.url}/login?next=${encodeURIComponent(hostile)}`);
      await p.getByLabel('Password').fill(PASSWORD);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.waitForURL((u) => u.pathname === '/' || u.host !== new URL(web.url).host);
      expect(p.url()).toBe(`${web.url}/`);
      expect(hits).not.toContain('/landed');
      await p.getByRole('button', { name: 'Sign out' }).click();
      await p.waitForURL(`${web.url}/login`);
    } finally {
      await p.close();
      await ctx?.close();
    }
  });

  it("refuses another site's sign-in form, its server-action form and its fetch posts; same-origin still works", async () => {
    pages.set(
      '/login-form',
      `<!doctype html><form id=f method=post action="${web.url}/auth/login">
        <input name=password value="${PASSWORD}"><input name=next value="/servers"></form>
        <script>document.getElementById('f').submit()</script>`,
    );
    // A server action without JavaScript: a multipart form naming the action, as Next's progressive enhancement posts it.
    pages.set(
      '/action-form',
      `<!doctype html><form id=f method=post enctype="multipart/form-data" action="${web.url}/servers/new">
        <input name="$ACTION_ID_${actionId('detectProtocol')}" value=""></form>
        <script>document.getElementById('f').submit()</script>`,
    );
    pages.set(
      '/fetch',
      `<!doctype html><script>
        fetch('${web.url}/auth/login', { method: 'POST', mode: 'no-cors', credentials: 'include',
          headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=${PASSWORD}' });
        fetch('${web.url}/auth/logout', { method: 'POST', mode: 'no-cors', credentials: 'include' });
      </script>`,
    );
    const posts = new Map<string, number>();
    page.on('response', (r) => {
      if (r.request().method() === 'POST' && r.url().startsWith(web.url))
        posts.set(new URL(r.url()).pathname, r.status());
    });
    for (const path of ['/login-form', '/action-form']) {
      const target = path === '/login-form' ? '/auth/login' : '/servers/new';
      const answered = page.waitForResponse(
        (r) => r.url() === `${web.url}${target}` && r.request().method() === 'POST',
      );
      await page.goto(`${elsewhereUrl}${path}`);
      const res = await answered;
      expect(res.status(), path).toBe(403);
      expect(await res.text()).toMatch(
        /^Refused: (Origin http:\/\/127\.0\.0\.2:\d+ is not this server's own|a cross-site request)/,
      );
    }
    expect((await context.cookies(web.url)).some((c) => c.name === SESSION_COOKIE)).toBe(false);
    await page.goto(`${elsewhereUrl}/fetch`);
    await expect.poll(() => [posts.get('/auth/login'), posts.get('/auth/logout')]).toEqual([403, 403]);
    expect((await context.cookies(web.url)).some((c) => c.name === SESSION_COOKIE)).toBe(false);
    // The dashboard's own form, from its own page, signs in.
    await page.goto(`${web.url}/login?next=%2Fservers`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${web.url}/servers`);
    await page.getByRole('link', { name: 'behind-login' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${web.url}/login`);
  });

  it("does not render in another site's frame: every answer says so", async () => {
    for (const [path, init] of [
      ['/login', {}],
      ['/', {}],
      ['/no-such-page', {}],
      ['/healthz', {}],
      ['/auth/login', { method: 'POST', headers: { origin: 'http://evil.example' } }],
    ] as const) {
      const res = await raw(path, init);
      expect(res.headers.get('content-security-policy'), path).toBe("frame-ancestors 'none'");
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
    }
    const signedIn = cookieOf((await signIn(PASSWORD)).headers.get('set-cookie'));
    for (const path of ['/servers', `/servers/${serverId}`, '/servers/00000000-0000-0000-0000-000000000000']) {
      const res = await raw(path, { cookie: signedIn });
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
    }
    // A page elsewhere frames the sign-in page and one of its own: only its own renders.
    pages.set(
      '/frame',
      `<!doctype html><iframe id=own src="${elsewhereUrl}/inner"></iframe><iframe id=dash src="${web.url}/login"></iframe>`,
    );
    await page.goto(`${elsewhereUrl}/frame`);
    const own = page.frameLocator('#own');
    await own.getByRole('heading', { name: 'Elsewhere' }).waitFor();
    // The dashboard's frame loaded (page.goto waits for every frame) and shows nothing of it.
    expect(page.frames()).toHaveLength(3);
    for (const f of page.frames()) expect(await f.getByRole('heading', { name: 'Sign in' }).count(), f.url()).toBe(0);
  });
});

describe('sign-in off', () => {
  it('serves only Host names that cannot be rebound, even allowed unauthenticated, and no cross-site write', async () => {
    // Something in front authenticates, it says: the Host rule holds all the same.
    const open = await startDashboardProcess({
      DATABASE_URL: db.url,
      MCP_FLEET_API_URL: control.url,
      MCP_FLEET_ALLOW_UNAUTHENTICATED: '1',
      MCP_FLEET_ALLOWED_HOSTS: 'fleet.internal.example',
    });
    try {
      const port = new URL(open.url).port;
      const send = (host: string, path = '/servers', method = 'GET', headers: Record<string, string> = {}) =>
        new Promise<number>((resolve, reject) => {
          request({ host: '127.0.0.1', port, path, method, headers: { ...headers, host } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
            .on('error', reject)
            .end(method === 'POST' ? 'password=x' : undefined);
        });
      expect(await send(`127.0.0.1:${port}`)).toBe(200);
      expect(await send(`localhost:${port}`)).toBe(200);
      expect(await send(`[::1]:${port}`)).toBe(200);
      expect(await send('fleet.internal.example:3000')).toBe(200);
      expect(await send('rebound.attacker.example:3000')).toBe(403);
      expect(await send('rebound.attacker.example:3000', '/login')).toBe(403);
      expect(await send('rebound.attacker.example:3000', '/no-such-page')).toBe(403);
      expect(await send('rebound.attacker.example:3000', '/healthz')).toBe(200);
      expect(await send('rebound.attacker.example:3000', '/readyz')).toBe(200);
      // An open dashboard still takes no write from another site's page.
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      for (const path of ['/auth/login', '/auth/logout', '/servers/new'])
        for (const from of [{ origin: 'http://evil.example' }, { 'sec-fetch-site': 'same-site' }] as Record<
          string,
          string
        >[])
          expect(
            await send(`127.0.0.1:${port}`, path, 'POST', { ...form, ...from }),
            `${path} ${JSON.stringify(from)}`,
          ).toBe(403);
      expect(await send(`127.0.0.1:${port}`, '/auth/login', 'POST', { ...form, origin: open.url })).toBe(303);
    } finally {
      await open.stop();
    }
  });

  it('refuses an MCP_FLEET_ALLOWED_HOSTS that lists no names', () => {
    expect(() => webAuthFromEnv({ MCP_FLEET_ALLOWED_HOSTS: 'http://fleet.example.com' })).toThrow(
      /MCP_FLEET_ALLOWED_HOSTS entry 1 .*is not a host name/,
    );
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
  /** A sign-in from one loopback source address (node:http can bind the client socket; fetch cannot). */
  const signInFrom = (localAddress: string, password: string, headers: Record<string, string> = {}) =>
    new Promise<string>((resolve, reject) => {
      const body = new URLSearchParams({ password, next: '/servers' }).toString();
      const url = new URL(web.url);
      request(
        {
          host: url.hostname,
          port: url.port,
          localAddress,
          method: 'POST',
          path: '/auth/login',
          headers: { origin: web.url, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        },
        (res) => {
          res.resume();
          resolve(`${res.headers.location} ${res.headers['set-cookie'] ? 'cookie' : 'no-cookie'}`);
        },
      )
        .on('error', reject)
        .end(body);
    });
  const WRONG = '/login?error=wrong&next=%2Fservers no-cookie';
  const BUSY = '/login?error=busy&next=%2Fservers no-cookie';

  it("are rationed per client: one client's failures spend its own budget, not another's", async () => {
    // 127.0.0.3 spends its budget, then is refused, the right password too, whatever address it claims.
    for (let i = 0; i < FAILED_SIGN_INS_PER_CLIENT; i += 1)
      expect(await signInFrom('127.0.0.3', `wrong-${i}`)).toBe(WRONG);
    expect(await signInFrom('127.0.0.3', PASSWORD)).toBe(BUSY);
    for (const forged of ['127.0.0.4', '10.9.8.7', ''])
      expect(
        await signInFrom('127.0.0.3', PASSWORD, { [CLIENT_ADDRESS_HEADER]: forged, 'x-forwarded-for': forged }),
      ).toBe(BUSY);
    // Another client still signs in, even one claiming to be the spent one.
    expect(await signInFrom('127.0.0.4', PASSWORD)).toBe('/servers cookie');
    expect(await signInFrom('127.0.0.5', PASSWORD, { [CLIENT_ADDRESS_HEADER]: '127.0.0.3' })).toBe('/servers cookie');
    expect(await signInFrom('127.0.0.4', 'wrong-again')).toBe(WRONG);
  });

  it('are rationed for the whole dashboard too: past its budget even the right password waits, and is not compared', async () => {
    // Clients of their own, each under its own budget, together spend the dashboard's.
    const clients = Array.from(
      { length: Math.ceil(FAILED_SIGN_INS_PER_MINUTE / FAILED_SIGN_INS_PER_CLIENT) + 1 },
      (_, i) => `127.0.1.${i + 1}`,
    );
    let busy = 0;
    await Promise.all(
      clients.map(async (address) => {
        for (let i = 0; i < FAILED_SIGN_INS_PER_CLIENT - 1; i += 1)
          if ((await signInFrom(address, `wrong-${i}`)) === BUSY) busy += 1;
      }),
    );
    expect(busy).toBeGreaterThan(0);
    const fresh = await signInFrom('127.0.2.1', PASSWORD);
    expect(fresh).toBe(BUSY);
    const form = await raw('/login?error=busy');
    expect(form.status).toBe(200);
    expect(form.text).toContain('Too many failed sign-ins in the last minute');
  });

  it('frees a try as the oldest failure leaves the minute, per client and in all', () => {
    const budget = signInBudget({ perClient: 2, total: 3, windowMs: 60_000 });
    const t0 = 1_000_000;
    budget.failed('10.0.0.1', t0);
    budget.failed('10.0.0.1', t0 + 10_000);
    expect(budget.wait('10.0.0.1', t0 + 20_000)).toBe(40_000);
    expect(budget.wait('::ffff:10.0.0.1', t0 + 20_000)).toBe(40_000); // the same client, IPv4-mapped
    expect(budget.wait('10.0.0.2', t0 + 20_000)).toBe(0);
    expect(budget.wait(null, t0 + 20_000)).toBe(0);
    budget.failed('10.0.0.2', t0 + 20_000);
    expect(budget.wait('10.0.0.3', t0 + 20_000)).toBe(40_000); // the dashboard's budget is spent
    expect(budget.wait('10.0.0.3', t0 + 60_000)).toBe(0);
    expect(budget.wait('10.0.0.1', t0 + 59_999)).toBe(1);
    expect(budget.wait('10.0.0.1', t0 + 60_000)).toBe(0);
    // An IPv6 client is its /64: it cannot dodge its budget by changing the rest of its address.
    expect(clientKey('2001:db8:1:2::1')).toBe(clientKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd'));
    expect(clientKey('2001:db8:1:2::1')).not.toBe(clientKey('2001:db8:1:3::1'));
    const v6 = signInBudget({ perClient: 1, total: 100 });
    v6.failed('2001:db8:1:2::1');
    expect(v6.wait('2001:db8:1:2::9')).toBeGreaterThan(0);
    expect(v6.wait('2001:db8:1:3::1')).toBe(0);
  });

  it('remembers a bounded number of clients', () => {
    const budget = signInBudget({ perClient: 1, total: 1_000_000, maxClients: 3 });
    const t0 = 5_000_000;
    for (const c of ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']) budget.failed(c, t0);
    // The oldest was forgotten to make room; the newest are kept.
    expect(budget.wait('10.0.0.1', t0)).toBe(0);
    expect(budget.wait('10.0.0.4', t0)).toBe(60_000);
  });
});
