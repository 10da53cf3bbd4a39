// The management API over HTTP: validation errors are 400 with a message, unknown ids 404,
// pinned tests run once before they are saved, nothing is written by a refused request.
import { servers as serversTable } from '@mcp-fleet/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Monitor, startMonitor } from './support';

let m: Monitor;
beforeAll(async () => {
  // No agents: the API alone (pinned tests are still run once, by control itself).
  m = await startMonitor('pglite+memory', [{ name: 'modern' }], { agents: false, interval: '60s' });
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
    expect((await m.api(`/api/servers/${id}`)).status).toBe(404);
    expect((await m.store.db.select().from(serversTable)).some((s) => s.id === id && s.retiredAt)).toBe(true);
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
    expect((await m.api<{ agents: unknown[] }>('/api/agents')).body).toEqual({ agents: [] });
    expect((await m.api('/healthz')).status).toBe(200);
    expect((await m.api('/readyz')).status).toBe(200);
  });
});
