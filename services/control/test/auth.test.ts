// Control's API with tokens: every route from the router's own table, so a route added later
// cannot escape. Writes need admin (401 without or with a wrong token, 403 with a read one, and
// nothing changes); reads need any token; health stays open; /metrics takes its own token. No
// token ever reaches the log. With auth off, control stays on loopback and on loopback names.
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type Bus, createMemoryBus } from '@mcp-fleet/bus';
import { ConfigError } from '@mcp-fleet/config';
import { createLogger } from '@mcp-fleet/log';
import { openStore, type Store, servers as serversTable, tests as testsTable } from '@mcp-fleet/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiAuth,
  AuthConfigError,
  apiAuthFromEnv,
  type Control,
  isLoopbackHost,
  parseFleet,
  type RouteInfo,
  startControl,
} from '../src';

const token = () => randomBytes(24).toString('base64url'); // 32 characters
const ADMIN = token();
const READ = token();
const METRICS = token();
const WRONG = token();
const BIN = fileURLToPath(new URL('../../cli/bin/mcp-fleet.js', import.meta.url));

let dir: string;
let store: Store;
let bus: Bus;
let control: Control;
let logged = '';
let serverId: string;
let testId: string;

const fleet = parseFleet(
  'regions: [eu-west]\ndefaults: { interval: 60s, timeout: 5s }\nservers: []\npolicy: { allow: ["127.0.0.0/8"] }\n',
  'auth test fleet',
);

async function call(
  method: string,
  path: string,
  opts: { token?: string; body?: string; contentType?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  const res = await fetch(`${control.url}${path}`, { method, headers, body: opts.body });
  const text = await res.text();
  let json: { error?: string } | null = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // /metrics is text
  }
  return { status: res.status, headers: res.headers, json, text };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-auth-'));
  store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  // Everything control logs, at the most talkative level, to look for tokens in.
  const sink = new Writable({
    write(chunk, _enc, done) {
      logged += chunk.toString();
      done();
    },
  });
  const log = createLogger('control-auth-test', 'trace', sink);
  bus = createMemoryBus({ log });
  control = await startControl({
    store,
    bus,
    log,
    fleet,
    port: 0,
    tickMs: 1_000,
    auth: apiAuthFromEnv({
      MCP_FLEET_API_TOKENS: `admin:${ADMIN}, read:${READ}`,
      MCP_FLEET_METRICS_TOKEN: METRICS,
    }),
  });
  // A real write with the admin token: a server and a test to aim the routes with ids at.
  const created = await call('POST', '/api/servers', {
    token: ADMIN,
    body: JSON.stringify({ name: 'guarded', url: 'http://127.0.0.1:9/mcp', tests: [{ revision: 'newest' }] }),
  });
  expect(created.status).toBe(201);
  serverId = (created.json as unknown as { server: { id: string } }).server.id;
  const tests = await call('GET', `/api/servers/${serverId}/tests`, { token: READ });
  testId = (tests.json as unknown as { tests: { id: string }[] }).tests[0]!.id;
}, 60_000);

afterAll(async () => {
  await control?.stop();
  await bus?.close();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A route's path with real ids (`:id` of a server or a test), or a fresh uuid when `unknownIds`. */
function pathOf(route: RouteInfo, unknownIds = false): string {
  return route.pattern.replace(/:(\w+)/g, (_m, _name, offset: number) => {
    if (unknownIds) return randomUUID();
    return route.pattern.slice(0, offset).endsWith('/api/tests/') ? testId : serverId;
  });
}

/** A body the route would act on if it were admitted (so a refusal that leaked would show). */
function bodyOf(route: RouteInfo): { body?: string; contentType?: string } {
  const key = `${route.method} ${route.pattern}`;
  if (key === 'POST /api/fleet')
    return {
      body: 'regions: [eu-west]\nservers:\n  - name: sneaked\n    url: https://sneaked.example.com/mcp\n',
      contentType: 'application/yaml',
    };
  if (key === 'POST /api/servers')
    return { body: JSON.stringify({ name: 'sneaked', url: 'https://sneaked.example.com/mcp' }) };
  if (key === 'POST /api/servers/:id/tests') return { body: JSON.stringify({ revision: 'newest' }) };
  if (key === 'PATCH /api/servers/:id') return { body: JSON.stringify({ interval: '45s' }) };
  if (key === 'POST /api/detect') return { body: JSON.stringify({ url: 'http://127.0.0.1:9/mcp' }) };
  return route.method === 'DELETE' ? {} : { body: '{}' };
}

const writes = () => control.routes.filter((r) => r.method !== 'GET' && r.method !== 'HEAD');
const reads = () => control.routes.filter((r) => (r.method === 'GET' || r.method === 'HEAD') && r.access === 'read');

/** What a refused write could have changed: it must not have. */
async function fleetState() {
  const servers = await store.db.select().from(serversTable);
  const tests = await store.db.select().from(testsTable);
  return JSON.stringify({
    servers: servers.map((s) => [s.id, s.name, s.intervalMs, s.retiredAt]).sort(),
    tests: tests.map((t) => [t.id, t.retiredAt]).sort(),
  });
}

describe('the route table', () => {
  it('marks every route: writes admin, reads read, health public, /metrics its own', () => {
    const table = control.routes.map((r) => `${r.method} ${r.pattern} ${r.access}`);
    // The ones this test knows exist; a new one is covered by the loops below whatever it is.
    expect(table).toEqual(
      expect.arrayContaining([
        'POST /api/servers admin',
        'PATCH /api/servers/:id admin',
        'DELETE /api/servers/:id admin',
        'POST /api/servers/:id/tests admin',
        'DELETE /api/tests/:id admin',
        'POST /api/fleet admin',
        'POST /api/detect admin',
        'GET /api/servers read',
        'GET /metrics metrics',
        'GET /healthz public',
        'GET /readyz public',
      ]),
    );
    for (const r of control.routes) {
      if (r.method !== 'GET' && r.method !== 'HEAD') expect(r.access, `${r.method} ${r.pattern}`).toBe('admin');
      else if (!['/healthz', '/readyz', '/metrics'].includes(r.pattern))
        expect(r.access, `${r.method} ${r.pattern}`).toBe('read');
    }
    expect(writes().length).toBeGreaterThanOrEqual(7);
    expect(reads().length).toBeGreaterThanOrEqual(10);
  });
});

describe('every write route needs an admin token', () => {
  it('refuses without a token (401, WWW-Authenticate: Bearer, a JSON error) and changes nothing', async () => {
    const before = await fleetState();
    for (const route of writes()) {
      const res = await call(route.method, pathOf(route), bodyOf(route));
      const what = `${route.method} ${route.pattern}`;
      expect(res.status, what).toBe(401);
      expect(res.headers.get('www-authenticate'), what).toMatch(/^Bearer /);
      expect(res.headers.get('content-type'), what).toContain('application/json');
      expect(res.json?.error, what).toMatch(/authentication required/);
    }
    expect(await fleetState()).toBe(before);
  });

  it('refuses a wrong token (401, invalid_token) and changes nothing', async () => {
    const before = await fleetState();
    for (const route of writes()) {
      for (const bad of [WRONG, `${ADMIN}x`, ADMIN.slice(0, -1), ADMIN.toUpperCase()]) {
        const res = await call(route.method, pathOf(route), { ...bodyOf(route), token: bad });
        expect(res.status, `${route.method} ${route.pattern}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
        expect(res.json?.error).toBe('the bearer token is not valid');
      }
    }
    // Not a bearer token at all.
    const basic = await fetch(`${control.url}/api/servers`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN}`).toString('base64')}` },
    });
    expect(basic.status).toBe(401);
    expect(await fleetState()).toBe(before);
  });

  it('refuses a read token (403, insufficient_scope) and changes nothing', async () => {
    const before = await fleetState();
    for (const route of writes()) {
      const res = await call(route.method, pathOf(route), { ...bodyOf(route), token: READ });
      const what = `${route.method} ${route.pattern}`;
      expect(res.status, what).toBe(403);
      expect(res.headers.get('www-authenticate'), what).toMatch(/error="insufficient_scope"/);
      expect(res.json?.error, what).toMatch(/needs a token with admin scope/);
    }
    // The metrics token is no API token.
    const metricsToken = await call('DELETE', `/api/servers/${serverId}`, { token: METRICS });
    expect(metricsToken.status).toBe(403);
    expect(await fleetState()).toBe(before);
  });

  it('admits the admin token (any answer but 401/403)', async () => {
    for (const route of writes()) {
      // Unknown ids and empty bodies: admitted, then refused on their merits, nothing retired.
      const res = await call(route.method, pathOf(route, true), {
        token: ADMIN,
        ...(route.method === 'DELETE' ? {} : { body: '{}' }),
      });
      expect([401, 403], `${route.method} ${route.pattern}: ${res.status} ${res.text}`).not.toContain(res.status);
    }
    // Lower-case scheme is still Bearer.
    const patched = await fetch(`${control.url}/api/servers/${serverId}`, {
      method: 'PATCH',
      headers: { authorization: `bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ interval: '90s' }),
    });
    expect(patched.status).toBe(200);
  });
});

describe('every read route needs a token', () => {
  it('answers a read token and the admin token', async () => {
    for (const route of reads())
      for (const t of [READ, ADMIN]) {
        const res = await call(route.method, pathOf(route), { token: t });
        expect(res.status, `${route.method} ${route.pattern}: ${res.text}`).toBe(200);
      }
    // Unknown ids: admitted, then 404.
    expect((await call('GET', `/api/servers/${randomUUID()}`, { token: READ })).status).toBe(404);
  });

  it('refuses without a token or with a wrong one (401)', async () => {
    for (const route of reads()) {
      const none = await call(route.method, pathOf(route));
      expect(none.status, `${route.method} ${route.pattern}`).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(none.text).not.toContain('guarded');
      expect((await call(route.method, pathOf(route), { token: WRONG })).status).toBe(401);
    }
  });

  it('says nothing about which routes exist without a token', async () => {
    expect((await call('GET', '/api/nothing')).status).toBe(401);
    expect((await call('PUT', '/api/servers')).status).toBe(401);
    expect((await call('GET', '/api/nothing', { token: READ })).status).toBe(404);
    expect((await call('PUT', '/api/servers', { token: READ })).status).toBe(405);
  });
});

describe('mcp-fleet apply', () => {
  it('sends MCP_FLEET_API_TOKEN, and says so when control refuses it', async () => {
    const file = join(dir, 'fleet.yaml');
    writeFileSync(
      file,
      'regions: [eu-west]\ndefaults: { interval: 60s, timeout: 5s }\nservers: []\npolicy: { allow: ["127.0.0.0/8"] }\n',
    );
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('MCP_FLEET_')) delete env[k];
    const apply = (extra: Record<string, string>) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          // --yes: whatever earlier tests left, an empty fleet must not stop at the confirmation.
          [BIN, 'apply', '--fleet', file, '--api', control.url, '--yes', '--json'],
          { env: { ...env, ...extra }, timeout: 30_000 },
          (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
        ),
      );
    const [none, read, admin] = await Promise.all([
      apply({}),
      apply({ MCP_FLEET_API_TOKEN: READ }),
      apply({ MCP_FLEET_API_TOKEN: ADMIN }),
    ]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/authentication required.*set MCP_FLEET_API_TOKEN/);
    expect(read.code).toBe(1);
    expect(read.stderr).toMatch(/needs a token with admin scope/);
    expect(read.stderr).not.toContain(READ);
    expect(admin.code, admin.stderr).toBe(0);
    expect(admin.stdout).toContain('"created"');
  }, 60_000);
});

describe('open and metrics endpoints', () => {
  it('keeps /healthz and /readyz open', async () => {
    expect((await call('GET', '/healthz')).status).toBe(200);
    expect((await call('GET', '/readyz')).status).toBe(200);
    expect((await call('GET', '/healthz', { token: WRONG })).status).toBe(200);
  });

  it('asks /metrics for MCP_FLEET_METRICS_TOKEN (or an API token) when it is set', async () => {
    expect((await call('GET', '/metrics')).status).toBe(401);
    expect((await call('GET', '/metrics', { token: WRONG })).status).toBe(401);
    const scraped = await call('GET', '/metrics', { token: METRICS });
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('mcp_scheduler_jobs_total');
    expect((await call('GET', '/metrics', { token: READ })).status).toBe(200);
    // Unset, /metrics is open (Prometheus scrapes it as before).
    const open = new ApiAuth({ tokens: [{ scope: 'admin', token: ADMIN }] });
    expect(open.check('metrics', {})).toBeNull();
    expect(open.check('read', {})?.status).toBe(401);
  });
});

describe('tokens stay secret', () => {
  it('never writes a token to the log, though every refusal is logged', async () => {
    expect(logged).toContain('API request refused');
    expect(logged).toMatch(/"status":403/);
    for (const t of [ADMIN, READ, METRICS, WRONG, ADMIN.slice(0, 16)]) expect(logged).not.toContain(t);
  });

  it('names the variable, never the value, when a token is misconfigured', () => {
    const short = 'short-secret-value';
    const cases: [Record<string, string>, RegExp][] = [
      [{ MCP_FLEET_ADMIN_TOKEN: short }, /MCP_FLEET_ADMIN_TOKEN is 18 characters; a token needs at least 32/],
      [{ MCP_FLEET_API_TOKENS: `admin:${ADMIN},writer:${READ}` }, /entry 2 is not "read:<token>" or "admin:<token>"/],
      [{ MCP_FLEET_API_TOKENS: `read:${short}` }, /entry 1 is 18 characters/],
      [{ MCP_FLEET_API_TOKENS: `read:${ADMIN}`, MCP_FLEET_ADMIN_TOKEN: ADMIN }, /same token with different scopes/],
      [{ MCP_FLEET_READ_TOKEN: `${ADMIN} ${READ}` }, /printable ASCII without spaces/],
      [{ MCP_FLEET_API_TOKENS: `admin:${ADMIN}`, MCP_FLEET_METRICS_TOKEN: ADMIN }, /token of its own/],
    ];
    for (const [env, message] of cases) {
      let err: unknown;
      try {
        apiAuthFromEnv(env);
      } catch (e) {
        err = e;
      }
      // A setting is wrong: config's error, which the CLI says with exit code 2.
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(message);
      for (const secret of [short, ADMIN, READ]) expect((err as Error).message).not.toContain(secret);
    }
    expect(apiAuthFromEnv({}).enabled).toBe(false);
    expect(apiAuthFromEnv({ MCP_FLEET_READ_TOKEN: READ }).counts).toEqual({ read: 1, admin: 0 });
  });
});

describe('cross-site writes (a web page driving the API from a browser)', () => {
  const hostile: [string, Record<string, string>][] = [
    ['another origin', { origin: 'https://evil.example' }],
    ['another port of this host', { origin: 'http://127.0.0.1:3000' }],
    ['Origin null', { origin: 'null' }],
    ['a malformed Origin', { origin: 'http://127.0.0.1:7070/path' }],
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
  ];

  it('refuses every write from another site (403, a JSON error, logged) even with the admin token, and changes nothing', async () => {
    const before = await fleetState();
    for (const route of writes())
      for (const [what, headers] of hostile) {
        const res = await call(route.method, pathOf(route), { ...bodyOf(route), token: ADMIN, headers });
        const label = `${route.method} ${route.pattern}, ${what}`;
        expect(res.status, `${label}: ${res.text}`).toBe(403);
        expect(res.headers.get('content-type'), label).toContain('application/json');
        expect(res.json?.error, label).toMatch(/^refused: /);
        expect(res.headers.get('www-authenticate'), label).toBeNull();
      }
    expect(await fleetState()).toBe(before);
    expect(logged).toMatch(
      /"reason":"refused: Origin https:\/\/evil\.example is not this server.s own","msg":"API request refused"/,
    );
  });

  it("admits a write from control's own origin, and reads from anywhere (a page cannot read the answer)", async () => {
    const own = await call('PATCH', `/api/servers/${serverId}`, {
      token: ADMIN,
      body: JSON.stringify({ interval: '75s' }),
      headers: { origin: control.url, 'sec-fetch-site': 'same-origin' },
    });
    expect(own.status, own.text).toBe(200);
    const read = await call('GET', '/api/servers', { token: READ, headers: { origin: 'https://evil.example' } });
    expect(read.status).toBe(200);
  });

  it('grants no CORS preflight and sends no CORS header', async () => {
    const preflight = await call('OPTIONS', '/api/fleet', {
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBeGreaterThanOrEqual(400);
    const read = await call('GET', '/api/servers', { token: READ, headers: { origin: 'https://evil.example' } });
    for (const res of [preflight, read])
      for (const name of ['origin', 'methods', 'headers', 'credentials'])
        expect(res.headers.get(`access-control-allow-${name}`)).toBeNull();
  });
});

describe('media types', () => {
  const bodyTypes = (route: RouteInfo) =>
    route.pattern === '/api/fleet' ? ['yaml', 'json'] : route.method === 'DELETE' ? [] : ['json'];

  it('takes JSON only as exactly application/json (any case, charset=utf-8 allowed)', async () => {
    const before = await fleetState();
    for (const route of writes().filter((r) => bodyTypes(r).includes('json') && r.pattern !== '/api/fleet'))
      for (const type of [
        'text/plain; application/json',
        'text/plain',
        'application/json-patch+json',
        'application/jsonx',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json, text/plain',
        'application/json; charset=latin1',
        'application/yaml',
        'text/yaml',
      ]) {
        const res = await call(route.method, pathOf(route), { ...bodyOf(route), token: ADMIN, contentType: type });
        expect(res.status, `${route.method} ${route.pattern} as ${type}: ${res.text}`).toBe(415);
        expect(res.json?.error).toMatch(/^send the body (as application\/json|in UTF-8)/);
      }
    expect(await fleetState()).toBe(before);
    for (const type of [
      'application/json',
      'APPLICATION/JSON',
      'application/json; charset=UTF-8',
      'application/json;charset=utf-8',
    ]) {
      const res = await call('PATCH', `/api/servers/${serverId}`, {
        token: ADMIN,
        body: JSON.stringify({ interval: '80s' }),
        contentType: type,
      });
      expect(res.status, `${type}: ${res.text}`).toBe(200);
    }
  });

  it('takes YAML only on POST /api/fleet, as one of its four media types, and no JSON string as a fleet file', async () => {
    const fleetYaml = 'regions: [eu-west]\npolicy: { allow: ["127.0.0.0/8"] }\nservers: []\n';
    for (const type of [
      'application/yaml',
      'application/x-yaml',
      'text/yaml',
      'text/x-yaml',
      'Application/YAML; charset=utf-8',
    ]) {
      const res = await call('POST', '/api/fleet', { token: ADMIN, body: fleetYaml, contentType: type });
      expect(res.status, `${type}: ${res.text}`).toBe(200);
    }
    const before = await fleetState();
    const sneaked = 'regions: [eu-west]\nservers:\n  - name: sneaked\n    url: https://sneaked.example.com/mcp\n';
    for (const [body, type] of [
      [sneaked, 'text/plain'],
      [sneaked, 'text/plain; application/yaml'],
      [sneaked, 'application/yaml-patch'],
      [JSON.stringify(sneaked), 'application/json'],
      [JSON.stringify(sneaked), 'text/plain; application/json'],
    ] as const) {
      const res = await call('POST', '/api/fleet', { token: ADMIN, body, contentType: type });
      expect(res.status, `${type}: ${res.text}`).toBe(415);
    }
    // A JSON route takes no YAML.
    const yamlServer = await call('POST', '/api/servers', {
      token: ADMIN,
      body: 'name: sneaked\nurl: https://sneaked.example.com/mcp\n',
      contentType: 'application/yaml',
    });
    expect(yamlServer.status).toBe(415);
    expect(await fleetState()).toBe(before);
  });
});

describe('auth off: loopback only', () => {
  it('refuses to listen beyond loopback without tokens, unless MCP_FLEET_ALLOW_UNAUTHENTICATED', async () => {
    const log = createLogger('control-auth-test', 'silent');
    await expect(startControl({ store, bus, log, fleet, port: 0, host: '0.0.0.0' })).rejects.toThrow(
      /control's API would listen on 0\.0\.0\.0 with no authentication.*MCP_FLEET_API_TOKENS.*MCP_FLEET_ALLOW_UNAUTHENTICATED=1/,
    );
    await expect(startControl({ store, bus, log, fleet, port: 0, host: '::' })).rejects.toThrow(AuthConfigError);
    for (const h of ['127.0.0.1', '127.8.9.10', '::1', 'localhost', '[::1]', '::ffff:127.0.0.1'])
      expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '::ffff:10.0.0.1'])
      expect(isLoopbackHost(h), h).toBe(false);
  });

  it('mcp-fleet control and up exit 2 with a clear error before starting anything', () => {
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('MCP_FLEET_')) delete env[k];
    const run = (args: string[], extra: Record<string, string> = {}) =>
      spawnSync(process.execPath, [BIN, ...args], { env: { ...env, ...extra }, encoding: 'utf8', timeout: 30_000 });
    const control = run(['control', '--host', '0.0.0.0']);
    expect(control.status).toBe(2);
    expect(control.stderr).toMatch(/control's API would listen on 0\.0\.0\.0 with no authentication/);
    const up = run(['up'], { MCP_FLEET_WEB_HOST: '0.0.0.0' });
    expect(up.status).toBe(2);
    expect(up.stderr).toMatch(
      /the dashboard would listen on 0\.0\.0\.0 with no authentication.*MCP_FLEET_WEB_PASSWORD/,
    );
    const upApi = run(['up', '--no-dashboard'], { MCP_FLEET_API_HOST: '10.1.2.3' });
    expect(upApi.status).toBe(2);
    expect(upApi.stderr).toMatch(/control's API would listen on 10\.1\.2\.3/);
    const short = run(['control'], { MCP_FLEET_ADMIN_TOKEN: 'too-short-to-guess-well' });
    expect(short.status).toBe(2);
    expect(short.stderr).toMatch(/MCP_FLEET_ADMIN_TOKEN is 23 characters/);
    expect(short.stderr).not.toContain('too-short-to-guess-well');
    const password = run(['up'], { MCP_FLEET_WEB_PASSWORD: 'hunter2' });
    expect(password.status).toBe(2);
    expect(password.stderr).toMatch(/MCP_FLEET_WEB_PASSWORD is 7 characters; it needs at least 12/);
  }, 60_000);

  it("refuses the issue's attack: a page's text/plain post of a fleet to an open control (auth off)", async () => {
    const log = createLogger('control-auth-test', 'silent');
    const open = await startControl({ store, bus, log, fleet, port: 0, tickMs: 1_000 });
    try {
      const before = await fleetState();
      const attack =
        '"regions: [eu-west]\\npolicy: { allow: [\\"127.0.0.0/8\\"] }\\nservers:\\n  - name: x\\n    url: http://127.0.0.1:29999/mcp\\n    tests:\\n      - revision: newest\\n"';
      const post = (headers: Record<string, string>) =>
        fetch(`${open.url}/api/fleet`, { method: 'POST', headers, body: attack }).then(async (r) => ({
          status: r.status,
          error: ((await r.json()) as { error: string }).error,
        }));
      // As the browser sends it: from the page's origin, without a preflight.
      const page = await post({ 'content-type': 'text/plain; application/json', origin: 'https://evil.example' });
      expect(page.status).toBe(403);
      expect(page.error).toMatch(/Origin https:\/\/evil\.example is not this server's own/);
      const fetchMetadata = await post({
        'content-type': 'text/plain; application/json',
        'sec-fetch-site': 'cross-site',
      });
      expect(fetchMetadata.status).toBe(403);
      // Without the browser's headers (curl): the media type alone refuses it.
      const bare = await post({ 'content-type': 'text/plain; application/json' });
      expect(bare.status).toBe(415);
      // Even as exact JSON (which needs a preflight from a page): a JSON string is no fleet file.
      expect((await post({ 'content-type': 'application/json' })).status).toBe(415);
      expect((await post({ 'content-type': 'application/json', origin: 'https://evil.example' })).status).toBe(403);
      // Every other write too.
      for (const route of open.routes.filter((r) => r.method !== 'GET')) {
        const res = await fetch(`${open.url}${pathOf(route)}`, {
          method: route.method,
          headers: { origin: 'https://evil.example', 'content-type': 'text/plain' },
          body: route.method === 'DELETE' ? undefined : '{}',
        });
        expect(res.status, `${route.method} ${route.pattern}`).toBe(403);
      }
      expect(await fleetState()).toBe(before);
    } finally {
      await open.stop();
    }
  });

  it('serves only Host names that cannot be rebound with auth off, whatever the bind and even when allowed unauthenticated', async () => {
    const log = createLogger('control-auth-test', 'silent');
    // Beyond loopback (something in front authenticates, it says), naming one more host it is reached by.
    const open = await startControl({
      store,
      bus,
      log,
      fleet,
      port: 0,
      tickMs: 1_000,
      host: '0.0.0.0',
      allowUnauthenticated: true,
      allowedHosts: ['control'],
    });
    const port = new URL(open.url).port;
    try {
      const get = (host: string, path = '/api/servers') =>
        new Promise<number>((resolve, reject) => {
          request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
            .on('error', reject)
            .end();
        });
      expect(await get(`127.0.0.1:${port}`)).toBe(200);
      expect(await get(`localhost:${port}`)).toBe(200);
      expect(await get(`[::1]:${port}`)).toBe(200);
      expect(await get(`10.1.2.3:${port}`)).toBe(200); // an address is no name to rebind
      expect(await get('control:7070')).toBe(200); // MCP_FLEET_ALLOWED_HOSTS
      expect(await get('rebound.attacker.example:7070')).toBe(403);
      expect(await get('control.attacker.example')).toBe(403);
      expect(await get('rebound.attacker.example', '/metrics')).toBe(403);
      expect(await get('rebound.attacker.example', '/healthz')).toBe(200);
      expect(await get('rebound.attacker.example', '/readyz')).toBe(200);
    } finally {
      await open.stop();
    }
  });

  it('serves only loopback Host names when auth is off (no DNS rebinding into the API)', async () => {
    const log = createLogger('control-auth-test', 'silent');
    const open = await startControl({ store, bus, log, fleet, port: 0, tickMs: 1_000 });
    try {
      const get = (host: string, path = '/api/servers') =>
        new Promise<number>((resolve, reject) => {
          const url = new URL(open.url);
          request({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
            .on('error', reject)
            .end();
        });
      expect(await get(`127.0.0.1:${new URL(open.url).port}`)).toBe(200);
      expect(await get('localhost')).toBe(200);
      expect(await get('rebound.attacker.example:7070')).toBe(403);
      expect(await get('rebound.attacker.example', '/healthz')).toBe(200);
    } finally {
      await open.stop();
    }
  });
});
