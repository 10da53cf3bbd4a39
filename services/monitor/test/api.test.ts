// The management API over HTTP: validation errors are 400 with a message, unknown ids 404,
// changes to a retired server 409, pinned tests run once before they are saved, nothing is
// written by a refused request.
import { randomBytes } from 'node:crypto';
import {
  agents,
  getServer,
  servers as serversTable,
  testStates as testStatesTable,
  upsertAgentHeartbeat,
} from '@mcp-fleet/store';
import { parseMetrics, type Recorder, seriesValue, startRecorder, waitFor } from '@mcp-fleet/testkit';
import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMonitor, type TestMonitor } from './support';

let m: TestMonitor;
beforeAll(async () => {
  // No agents: the API alone (pinned tests are still run once, by control itself).
  m = await startTestMonitor('pglite+memory', [{ name: 'modern' }], { agents: false, interval: '60s' });
});
afterAll(async () => {
  await m?.close();
});

const count = async () => (await m.store.db.select().from(serversTable)).length;

describe('servers', () => {
  it('creates a server with its tests, masks its headers and lists it by name', async () => {
    const res = await m.api<{
      server: {
        id: string;
        name: string;
        headers: Record<string, string>;
        tests: { mode: string; pinnedRevision: string | null }[];
      };
    }>('/api/servers', {
      method: 'POST',
      json: {
        name: 'orders',
        url: m.sim.target('modern').url,
        headers: { Authorization: 'Bearer api-secret-99' },
        regions: ['eu-west'],
        interval: '30s',
        tests: [{ revision: 'newest' }, { revision: '2026-07-28' }],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.server.headers).toEqual({ Authorization: '••••••' });
    expect(res.body.server.tests.map((t) => t.pinnedRevision).sort()).toEqual(['2026-07-28', null]);
    const list = await m.api<{ servers: { name: string }[] }>('/api/servers');
    expect(list.body.servers.map((s) => s.name)).toContain('orders');
    expect(JSON.stringify(list.body)).not.toContain('api-secret-99');
    const one = await m.api(`/api/servers/${res.body.server.id}`);
    expect(JSON.stringify(one.body)).not.toContain('api-secret-99');
  });

  it('refuses a pinned test the server does not pass today, and saves nothing', async () => {
    const before = await count();
    const res = await m.api<{ error: string }>('/api/servers', {
      method: 'POST',
      json: {
        name: 'legacy',
        url: m.sim.target('modern').url,
        tests: [{ revision: 'newest' }, { revision: '2024-11-05' }],
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/^the pinned test did not pass, so it was not saved: /);
    expect(await count()).toBe(before);
  });

  it('adds and retires tests; a pinned one runs first', async () => {
    const list = await m.api<{ servers: { id: string; name: string }[] }>('/api/servers');
    const id = list.body.servers.find((s) => s.name === 'orders')!.id;
    expect((await m.api(`/api/servers/${id}/tests`, { method: 'POST', json: { revision: '2025-11-25' } })).status).toBe(
      201,
    );
    expect((await m.api(`/api/servers/${id}/tests`, { method: 'POST', json: { revision: '2025-11-25' } })).status).toBe(
      409,
    );
    const refused = await m.api<{ error: string }>(`/api/servers/${id}/tests`, {
      method: 'POST',
      json: { revision: '2024-11-05' },
    });
    expect(refused.status).toBe(422);
    const tests = await m.api<{ tests: { id: string; pinnedRevision: string | null }[] }>(`/api/servers/${id}/tests`);
    const pin = tests.body.tests.find((t) => t.pinnedRevision === '2025-11-25')!;
    expect((await m.api(`/api/tests/${pin.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await m.api(`/api/tests/${pin.id}`, { method: 'DELETE' })).status).toBe(404);
  });

  it('changes and retires a server; its history stays', async () => {
    const list = await m.api<{ servers: { id: string; name: string }[] }>('/api/servers');
    const id = list.body.servers.find((s) => s.name === 'orders')!.id;
    const patched = await m.api<{ server: { intervalMs: number; regions: string[] } }>(`/api/servers/${id}`, {
      method: 'PATCH',
      json: { interval: '45s', regions: ['us-east'] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.server).toMatchObject({ intervalMs: 45_000, regions: ['us-east'] });
    expect((await m.api(`/api/servers/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await m.store.db.select().from(serversTable)).some((s) => s.id === id && s.retiredAt)).toBe(true);
  });

  it('keeps a retired server readable (links to its history still work) and refuses changes to it with 409', async () => {
    const [retired] = (await m.store.db.select().from(serversTable)).filter((s) => s.name === 'orders' && s.retiredAt);
    const id = retired!.id;
    const one = await m.api<{
      server: { name: string; retiredAt: string; tests: { pinnedRevision: string | null }[] };
    }>(`/api/servers/${id}`);
    expect(one.status).toBe(200);
    expect(one.body.server).toMatchObject({ name: 'orders', retiredAt: retired!.retiredAt!.toISOString() });
    // The tests it had when it was retired (the pin retired earlier stays out).
    expect(one.body.server.tests.map((t) => t.pinnedRevision).sort()).toEqual(['2026-07-28', null]);
    expect((await m.api(`/api/servers/${id}/runs`)).status).toBe(200);
    expect((await m.api(`/api/servers/${id}/detection`)).status).toBe(200);
    expect((await m.api(`/api/servers/${id}/tests`)).status).toBe(200);
    // Not among the live servers.
    const list = await m.api<{ servers: { id: string }[] }>('/api/servers');
    expect(list.body.servers.some((s) => s.id === id)).toBe(false);

    const refusal = `server "orders" was retired at ${retired!.retiredAt!.toISOString()} and is read-only (its history is kept): apply a fleet file that names it, or add a server, to watch it again`;
    const writes: [string, string, unknown][] = [
      ['PATCH', `/api/servers/${id}`, { interval: '50s' }],
      ['DELETE', `/api/servers/${id}`, undefined],
      ['POST', `/api/servers/${id}/tests`, { revision: 'newest' }],
    ];
    for (const [method, path, json] of writes) {
      const res = await m.api<{ error: string }>(path, { method, ...(json ? { json } : {}) });
      expect([method, res.status, res.body.error]).toEqual([method, 409, refusal]);
    }
    expect((await getServer(m.store.db, id))?.intervalMs).toBe(45_000);
  });
});

describe('bad requests: 4xx with a message, nothing written', () => {
  const cases: [string, string, string, unknown, number, RegExp][] = [
    ['no body', 'POST', '/api/servers', undefined, 400, /name/],
    ['a bad URL', 'POST', '/api/servers', { name: 'x', url: 'ftp://x' }, 400, /url: an http/],
    [
      'a private URL the policy does not allow',
      'POST',
      '/api/servers',
      { name: 'x', url: 'http://10.1.2.3:1/mcp' },
      400,
      /10\.1\.2\.3 is loopback, private or link-local/,
    ],
    [
      'a link-local URL',
      'POST',
      '/api/servers',
      { name: 'y', url: 'http://169.254.169.254/' },
      400,
      /loopback, private or link-local/,
    ],
    [
      'an unknown key',
      'POST',
      '/api/servers',
      { name: 'z', url: 'https://z.example.com/', colour: 'red' },
      400,
      /Unrecognized key/,
    ],
    [
      'an unknown region',
      'POST',
      '/api/servers',
      { name: 'z', url: 'https://z.example.com/', regions: ['mars'] },
      400,
      /not one of the fleet's regions/,
    ],
    [
      'an unknown revision',
      'POST',
      '/api/servers',
      { name: 'z', url: 'https://z.example.com/', tests: [{ revision: '2030-01-01' }] },
      400,
      /newest or one of/,
    ],
    [
      'a timeout over the interval',
      'POST',
      '/api/servers',
      { name: 'z', url: 'https://z.example.com/', interval: '5s', timeout: '10s' },
      400,
      /timeout: at most the interval/,
    ],
    [
      'a duplicate name',
      'POST',
      '/api/servers',
      { name: 'modern', url: 'https://z.example.com/' },
      409,
      /already exists/,
    ],
    ['an unknown server', 'GET', '/api/servers/00000000-0000-4000-8000-000000000000', undefined, 404, /no server/],
    ['a malformed id', 'GET', '/api/servers/not-an-id/runs', undefined, 404, /no server/],
    ['a bad cursor', 'GET', '/api/era-moves?before=zzz', undefined, 400, /before/],
    ['a bad limit', 'GET', '/api/era-moves?limit=0', undefined, 400, /limit/],
    ['a bad range', 'GET', '/api/fleet/summary?since=yesterday', undefined, 400, /since/],
    ['an unknown route', 'GET', '/api/nothing', undefined, 404, /no route/],
    ['a wrong method', 'PUT', '/api/servers', undefined, 405, /not allowed/],
    ['a detection of a refused target', 'POST', '/api/detect', { url: 'http://10.0.0.1/' }, 400, /policy\.allow/],
  ];
  it.each(cases)('%s', async (_what, method, path, json, status, message) => {
    const before = await count();
    const res = await m.api<{ error?: string }>(path, { method, json });
    expect(res.status).toBe(status);
    expect(res.body.error).toMatch(message);
    expect(await count()).toBe(before);
  });

  it('answers 400 to a body that is not JSON and 415 to one that is not declared JSON', async () => {
    const bad = await fetch(`${m.control.url}/api/servers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'the request body is not valid JSON' });
    const text = await fetch(`${m.control.url}/api/servers`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hi',
    });
    expect(text.status).toBe(415);
  });
});

describe('reads', () => {
  it('POST /api/detect answers a detection for the editor', async () => {
    const res = await m.api<{ outcome: string; newestSupported: string }>('/api/detect', {
      method: 'POST',
      json: { url: m.sim.target('modern').url },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'DETECTED', newestSupported: '2026-07-28' });
  });

  it('serves the summary, era moves and agents', async () => {
    const summary = await m.api<{ servers: number; runs: { total: number } }>('/api/fleet/summary?range=24h');
    expect(summary.status).toBe(200);
    expect(summary.body.servers).toBeGreaterThanOrEqual(1);
    expect((await m.api<{ moves: unknown[]; next: null }>('/api/era-moves?range=7d')).body).toEqual({
      moves: [],
      next: null,
    });
    expect((await m.api<{ agents: unknown[] }>('/api/agents')).body).toEqual({ agents: [], staleAfterSeconds: 60 });
    expect((await m.api('/healthz')).status).toBe(200);
    expect((await m.api('/readyz')).status).toBe(200);
  });

  it('GET /api/agents marks the agents control has not heard from for a minute stale, and /metrics counts the rest', async () => {
    const beat = (id: string) =>
      upsertAgentHeartbeat(m.store.db, {
        id,
        region: 'eu-west',
        version: '0.1.0',
        inFlight: 0,
        startedAt: new Date(),
        at: new Date(),
      });
    await beat('host-1-eu-west');
    await beat('host-2-eu-west');
    // host-1 was restarted (a new pid, a new id) two minutes ago: its row stays until retention.
    await m.store.db
      .update(agents)
      .set({ receivedAt: sql`now() - interval '2 minutes'` })
      .where(eq(agents.id, 'host-1-eu-west'));
    const res = await m.api<{ agents: { id: string; stale: boolean; lastSeen: string }[]; staleAfterSeconds: number }>(
      '/api/agents',
    );
    expect(res.body.staleAfterSeconds).toBe(60);
    expect(res.body.agents.map((a) => [a.id, a.stale])).toEqual([
      ['host-1-eu-west', true],
      ['host-2-eu-west', false],
    ]);
    expect(res.body.agents.every((a) => typeof a.lastSeen === 'string')).toBe(true);
    const metrics = parseMetrics(await (await fetch(`${m.control.url}/metrics`)).text());
    expect(seriesValue(metrics, 'mcp_agents_seen', { region: 'eu-west' })).toBe(1);
    await m.store.db.delete(agents).where(inArray(agents.id, ['host-1-eu-west', 'host-2-eu-west']));
  });
});

describe('headers the probe owns', () => {
  const cases: [string, string, unknown][] = [
    ['POST /api/servers', '/api/servers', { name: 'h', url: 'https://h.example.com/', headers: { Host: 'evil' } }],
    [
      'POST /api/servers, any case',
      '/api/servers',
      { name: 'h', url: 'https://h.example.com/', headers: { hOsT: 'e' } },
    ],
    ['POST /api/detect', '/api/detect', { url: 'https://h.example.com/', headers: { 'Transfer-Encoding': 'chunked' } }],
  ];
  it.each(cases)('a Host (or framing) header is refused: %s', async (_what, path, json) => {
    const before = await count();
    const res = await m.api<{ error: string }>(path, { method: 'POST', json });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(
      /^headers\.[A-Za-z-]+: [A-Za-z-]+ is set by the probe itself, never by a fleet entry/,
    );
    expect(await count()).toBe(before);
  });

  it('a PATCH with a Host header is refused and changes nothing', async () => {
    const list = await m.api<{ servers: { id: string; name: string }[] }>('/api/servers');
    const id = list.body.servers.find((s) => s.name === 'modern')!.id;
    const res = await m.api<{ error: string }>(`/api/servers/${id}`, {
      method: 'PATCH',
      json: { headers: { Host: '169.254.169.254' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/Host is set by the probe itself/);
    expect((await getServer(m.store.db, id))!.headers).toEqual({});
  });
});

// With agents: what a change makes them send, to real loopback listeners.
describe('credentials and origins, seen from the targets', () => {
  let w: TestMonitor;
  let a: Recorder;
  let b: Recorder;
  beforeAll(async () => {
    w = await startTestMonitor('pglite+memory', [{ name: 'modern' }], { interval: '2s' });
    a = await startRecorder();
    b = await startRecorder();
  });
  afterAll(async () => {
    await w?.close();
    await a?.close();
    await b?.close();
  });
  const sentTo = (r: Recorder, value: string) =>
    r.requests.filter((q) => Object.values(q.headers).some((v) => String(v).includes(value)));

  it('a PATCH moving the URL to another origin drops the stored headers: they never reach the new host', async () => {
    const secret = `Bearer origin-secret-${randomBytes(8).toString('hex')}`;
    const created = await w.api<{ server: { id: string } }>('/api/servers', {
      method: 'POST',
      json: { name: 'moving', url: a.url(), headers: { Authorization: secret }, interval: '2s', timeout: '1500ms' },
    });
    expect(created.status).toBe(201);
    const id = created.body.server.id;
    // The credential is used where it was given.
    await waitFor('the old origin to get the credential', () => sentTo(a, secret).length > 0, 20_000);

    const moved = await w.api<{
      server: { url: string; headers: Record<string, string> };
      headersDropped: string[];
      notice: string;
    }>(`/api/servers/${id}`, { method: 'PATCH', json: { url: b.url('/other/mcp') } });
    expect(moved.status).toBe(200);
    expect(moved.body.server).toMatchObject({ url: b.url('/other/mcp'), headers: {} });
    expect(moved.body.headersDropped).toEqual(['Authorization']);
    expect(moved.body.notice).toMatch(/stored headers Authorization were dropped: give them again/);
    expect((await getServer(w.store.db, id))!.headers).toEqual({});

    // The new origin is probed, from both regions, without the old origin's credential.
    await waitFor('the new origin to be probed from both regions', () => b.requests.length >= 4, 20_000);
    expect(sentTo(b, secret)).toEqual([]);
    expect(sentTo(b, secret.slice('Bearer '.length))).toEqual([]);

    // Given again with the move, it goes there; a PATCH on the same origin keeps it.
    const back = await w.api<{ headersDropped: string[] }>(`/api/servers/${id}`, {
      method: 'PATCH',
      json: { url: a.url('/v2/mcp'), headers: { Authorization: secret } },
    });
    expect(back.body.headersDropped).toEqual([]);
    const same = await w.api<{ headersDropped: string[] }>(`/api/servers/${id}`, {
      method: 'PATCH',
      json: { url: a.url('/v3/mcp') },
    });
    expect(same.body.headersDropped).toEqual([]);
    expect((await getServer(w.store.db, id))!.headers).toEqual({ Authorization: secret });
    await waitFor('the same origin to get it at the new path', () =>
      a.requests.some((q) => q.url === '/v3/mcp' && q.headers.authorization === secret),
    );
    expect((await w.api(`/api/servers/${id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('a URL with credentials is shown masked, kept masked on its origin only, and sent whole to its target', async () => {
    const full = a.url('/creds/mcp?token=url-token-123&v=1').replace('http://', 'http://url-user:url-pass-456@');
    const created = await w.api<{ server: { id: string; url: string } }>('/api/servers', {
      method: 'POST',
      json: { name: 'url-creds', url: full, interval: '2s', timeout: '1500ms' },
    });
    expect(created.status).toBe(201);
    const id = created.body.server.id;
    const shown = `http://••••••:••••••@127.0.0.1:${a.port}/creds/mcp?token=••••••&v=••••••`;
    expect(created.body.server.url).toBe(shown);
    const one = await w.api<{ server: { url: string } }>(`/api/servers/${id}`);
    expect(one.body.server.url).toBe(shown);
    const all = await w.api('/api/servers');
    expect(JSON.stringify(all.body)).toContain(shown);
    for (const text of [JSON.stringify(one.body), JSON.stringify(all.body)])
      for (const secret of ['url-user', 'url-pass-456', 'url-token-123']) expect(text).not.toContain(secret);
    // The probe sends the real URL.
    await waitFor('the target to get the token', () =>
      a.requests.some((q) => q.url === '/creds/mcp?token=url-token-123&v=1'),
    );

    // GET, change the interval, PATCH it back as shown: the stored credentials stay.
    const kept = await w.api<{ server: { url: string } }>(`/api/servers/${id}`, {
      method: 'PATCH',
      json: { url: shown.replace('v=••••••', 'v=2'), interval: '3s' },
    });
    expect(kept.status).toBe(200);
    expect((await getServer(w.store.db, id))!.target).toBe(full.replace('v=1', 'v=2'));
    // The mask toward another origin is refused, and nothing changes.
    const elsewhere = await w.api<{ error: string }>(`/api/servers/${id}`, {
      method: 'PATCH',
      json: { url: shown.replace(String(a.port), String(b.port)) },
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error).toMatch(
      new RegExp(
        `stand for a stored credential, which is only sent to http://127\\.0\\.0\\.1:${a.port}: give it again`,
      ),
    );
    expect((await getServer(w.store.db, id))!.target).toBe(full.replace('v=1', 'v=2'));
    // A new server has nothing stored for the mask to stand for.
    const masked = await w.api<{ error: string }>('/api/servers', {
      method: 'POST',
      json: { name: 'masked', url: shown },
    });
    expect(masked.status).toBe(400);
    expect(masked.body.error).toMatch(/•••••• stands for a stored credential: give the value itself/);
    expect((await w.api(`/api/servers/${id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it(`POST /api/fleet: a YAML fleet with \${HOME} is refused, applied nothing, and reached no listener (the issue’s attack)`, async () => {
    const servers = async () => (await w.store.db.select().from(serversTable)).map((s) => [s.name, s.retiredAt]);
    const before = JSON.stringify(await servers());
    const regionsBefore = (await w.api('/api/regions')).body;
    const yaml = `regions: [eu-west]\npolicy: { allow: ["127.0.0.0/8"] }\nservers:\n  - name: x\n    url: ${b.url('/leak')}\n    headers: { X-Leak: "\${HOME}" }\n    tests:\n      - revision: newest\n`;
    // As the issue sent it (any page can: text/plain needs no preflight), and as YAML proper.
    const attempts = [
      { type: 'text/plain; application/json', body: JSON.stringify(yaml) },
      { type: 'application/yaml', body: yaml },
    ];
    for (const { type, body } of attempts) {
      const res = await fetch(`${w.control.url}/api/fleet`, {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      });
      const answer = (await res.json()) as { error: string };
      // 400 here; a stricter HTTP layer may refuse the first form earlier (415): either way, not applied.
      expect([400, 415], `${type}: ${answer.error}`).toContain(res.status);
      if (res.status === 400)
        expect(answer.error).toContain(
          `servers[0].headers.X-Leak: \${HOME} is not expanded by control: expand it where the file is read; \`mcp-fleet apply\` does`,
        );
      expect(answer.error).not.toContain(process.env.HOME!);
    }
    expect(JSON.stringify(await servers())).toBe(before);
    expect((await w.api('/api/regions')).body).toEqual(regionsBefore);

    // The JSON form is taken literally: `${HOME}` goes as written, never control's HOME.
    const applied = await w.api<{ created: string[] }>('/api/fleet', {
      method: 'POST',
      json: {
        regions: ['eu-west', 'us-east'],
        defaults: { interval: '2s', timeout: '1500ms' },
        servers: [{ name: 'x', url: b.url('/leak'), headers: { 'X-Leak': `\${HOME}` } }],
        policy: { allow: ['127.0.0.0/8'] },
      },
    });
    expect(applied.status).toBe(200);
    expect(applied.body.created).toEqual(['x']);
    await waitFor('the fleet sent as JSON to be probed', () => b.requests.some((q) => q.url === '/leak'), 20_000);
    const leaks = b.requests.filter((q) => q.url === '/leak');
    // Every request that ever reached this path came from the JSON fleet: the refused one sent none.
    expect(leaks.map((q) => q.headers['x-leak'])).toEqual(leaks.map(() => `\${HOME}`));
    // A body that is neither a fleet's text nor its object form is refused.
    for (const body of ['[1]', '42', 'null']) {
      const res = await fetch(`${w.control.url}/api/fleet`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(res.status, body).toBe(400);
    }
  });
});

describe('the API takes back what it answers (issue 13 point 11)', () => {
  type Detail = {
    id: string;
    name: string;
    intervalMs: number;
    timeoutMs: number;
    detectionIntervalMs: number | null;
    regions: string[] | null;
    headers: Record<string, string>;
    tests: { id: string; mode: string; pinnedRevision: string | null }[];
  };
  const read = async (id: string) => (await m.api<{ server: Detail }>(`/api/servers/${id}`)).body.server;
  const shape = (s: Detail) => ({
    intervalMs: s.intervalMs,
    timeoutMs: s.timeoutMs,
    detectionIntervalMs: s.detectionIntervalMs,
    regions: s.regions,
    tests: s.tests.map((t) => [t.mode, t.pinnedRevision]).sort(),
  });

  it('GET → POST: a server read back is created again as it was, intervalMs and all', async () => {
    const made = await m.api<{ server: Detail }>('/api/servers', {
      method: 'POST',
      json: {
        name: 'round',
        url: m.sim.target('modern').url,
        regions: ['eu-west'],
        interval: '30s',
        timeout: '5s',
        detection: { interval: '15m' },
      },
    });
    expect(made.status).toBe(201);
    const original = await read(made.body.server.id);
    expect(shape(original)).toMatchObject({ intervalMs: 30_000, timeoutMs: 5_000, detectionIntervalMs: 900_000 });
    const copy = await m.api<{ server: Detail; error?: string }>('/api/servers', {
      method: 'POST',
      json: { ...original, name: 'round-copy' },
    });
    expect(copy.body.error).toBeUndefined();
    expect(copy.status).toBe(201);
    expect(copy.body.server.id).not.toBe(original.id);
    expect(shape(await read(copy.body.server.id))).toEqual(shape(original));
    // Milliseconds alone, as GET shows them.
    const ms = await m.api<{ server: Detail }>('/api/servers', {
      method: 'POST',
      json: { name: 'round-ms', url: m.sim.target('modern').url, intervalMs: 20_000, timeoutMs: 2_000 },
    });
    expect(ms.status).toBe(201);
    expect(ms.body.server).toMatchObject({ intervalMs: 20_000, timeoutMs: 2_000, detectionIntervalMs: null });
  });

  it('GET → PATCH: the same body changes nothing, masked headers keep their values, a new intervalMs is taken', async () => {
    const made = await m.api<{ server: Detail }>('/api/servers', {
      method: 'POST',
      json: { name: 'patched', url: m.sim.target('modern').url, headers: { Authorization: 'Bearer kept-1234' } },
    });
    const id = made.body.server.id;
    const body = await read(id);
    expect(body.headers).toEqual({ Authorization: '••••••' });
    const same = await m.api<{ error?: string }>(`/api/servers/${id}`, { method: 'PATCH', json: body });
    expect(same.body.error).toBeUndefined();
    expect(same.status).toBe(200);
    expect(shape(await read(id))).toEqual(shape(body));
    expect((await getServer(m.store.db, id))!.headers).toEqual({ Authorization: 'Bearer kept-1234' });

    const faster = await m.api(`/api/servers/${id}`, { method: 'PATCH', json: { ...body, intervalMs: 20_000 } });
    expect(faster.status).toBe(200);
    expect((await read(id)).intervalMs).toBe(20_000);

    const both = await m.api<{ error: string }>(`/api/servers/${id}`, {
      method: 'PATCH',
      json: { interval: '30s', intervalMs: 20_000 },
    });
    expect(both).toMatchObject({ status: 400, body: { error: 'interval and intervalMs disagree: give one of them' } });
    const tests = await m.api<{ error: string }>(`/api/servers/${id}`, {
      method: 'PATCH',
      json: { ...body, tests: [...body.tests, { revision: '2026-07-28' }] },
    });
    expect(tests.status).toBe(400);
    expect(tests.body.error).toMatch(/^tests: add one with POST \/api\/servers\/:id\/tests/);
    // A copy cannot carry a credential GET never showed.
    const copy = await m.api<{ error: string }>('/api/servers', { method: 'POST', json: { ...body, name: 'copy' } });
    expect(copy).toMatchObject({
      status: 400,
      body: { error: 'headers.Authorization: •••••• stands for a stored credential: give the value itself' },
    });
    // Nor a stored one to another origin.
    const moved = await m.api<{ error: string }>(`/api/servers/${id}`, {
      method: 'PATCH',
      json: { url: 'http://127.0.0.2:9/mcp', headers: { Authorization: '••••••' } },
    });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toMatch(/^headers\.Authorization: enter its value again/);
  });

  it('a pin refused on its first save "does not speak" it; one the server spoke before "no longer speaks" it', async () => {
    const made = await m.api<{ server: Detail }>('/api/servers', {
      method: 'POST',
      json: { name: 'speaker', url: m.sim.target('modern').url },
    });
    const id = made.body.server.id;
    const first = await m.api<{ error: string }>(`/api/servers/${id}/tests`, {
      method: 'POST',
      json: { revision: '2024-11-05' },
    });
    expect(first.status).toBe(422);
    expect(first.body.error).toContain('Server does not speak protocol 2024-11-05');
    // The server's history: its newest-supported test spoke 2024-11-05 in a region once.
    const newest = made.body.server.tests.find((t) => t.mode === 'newest')!;
    await m.store.db
      .insert(testStatesTable)
      .values({ testId: newest.id, region: 'eu-west', currentRevision: '2024-11-05' });
    const again = await m.api<{ error: string }>(`/api/servers/${id}/tests`, {
      method: 'POST',
      json: { revision: '2024-11-05' },
    });
    expect(again.status).toBe(422);
    expect(again.body.error).toContain('Server no longer speaks protocol 2024-11-05');
  });
});
