import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Revision, SIM_BEARER_TOKEN, type Sim, startSim, TARGET_NAMES } from '../src/index';
import { SDK_VERSIONS } from '../src/sdk-versions';

const LEGACY_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const MODERN_HEADERS = { ...LEGACY_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' };

function initialize(revision: Revision): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: revision, capabilities: {}, clientInfo: { name: 'fleet-sim-test', version: '0.0.0' } },
  });
}

const DISCOVER = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'server/discover',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});

interface JsonRpcAnswer {
  result?: Record<string, unknown> & { protocolVersion?: string; serverInfo?: { name: string; version: string } };
  error?: { code: number; message: string };
}

/** The JSON-RPC answer of a response, whether sent as JSON or as the first SSE message. */
async function answerOf(response: Response): Promise<JsonRpcAnswer> {
  const text = await response.text();
  if (!response.headers.get('content-type')?.includes('text/event-stream')) return JSON.parse(text);
  const data = text.split('\n').find((line) => line.startsWith('data:'));
  if (data === undefined) throw new Error(`no data in event stream: ${text}`);
  return JSON.parse(data.slice('data:'.length));
}

function postInitialize(url: string, revision: Revision): Promise<Response> {
  return fetch(url, { method: 'POST', headers: LEGACY_HEADERS, body: initialize(revision) });
}

/** Reads an event stream until `until` shows up (or the time runs out), then hangs up. */
async function readStream(url: string, until: string, ms: number): Promise<{ status: number; text: string }> {
  const hangUp = new AbortController();
  const timer = setTimeout(() => hangUp.abort(), ms);
  const response = await fetch(url, { headers: { accept: 'text/event-stream' }, signal: hangUp.signal });
  let text = '';
  try {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    while (!text.includes(until)) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // Aborted by the timer: return what arrived.
  } finally {
    clearTimeout(timer);
    hangUp.abort();
  }
  return { status: response.status, text };
}

describe('fleet-sim', () => {
  let sim: Sim;
  beforeAll(async () => {
    sim = await startSim();
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('starts every target on loopback, in fleet order', () => {
    expect(sim.targets.map((target) => target.name)).toEqual(TARGET_NAMES);
    for (const target of sim.targets) expect(new URL(target.url).hostname).toBe('127.0.0.1');
    expect(sim.target('sessions-2025-11-25').supports).toEqual([
      '2024-11-05',
      '2025-03-26',
      '2025-06-18',
      '2025-11-25',
    ]);
    expect(sim.target('modern').newest).toBe('2026-07-28');
    expect(sim.target('website').newest).toBeNull();
  });

  it('modern answers server/discover with 2026-07-28', async () => {
    const response = await fetch(sim.target('modern').url, { method: 'POST', headers: MODERN_HEADERS, body: DISCOVER });
    expect(response.status).toBe(200);
    const { result } = await answerOf(response);
    expect(result?.supportedVersions).toContain('2026-07-28');
    expect(result?._meta).toMatchObject({ 'io.modelcontextprotocol/serverInfo': { name: 'modern', version: '2.4.0' } });
  });

  it('sessions-2025-03-26 counter-offers 2025-03-26 and mints a session', async () => {
    const response = await postInitialize(sim.target('sessions-2025-03-26').url, '2025-06-18');
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeTruthy();
    const { result } = await answerOf(response);
    expect(result?.protocolVersion).toBe('2025-03-26');
    expect(result?.serverInfo).toEqual({ name: 'sessions-2025-03-26', version: '1.12.3' });
  });

  it('between-generations (SDK 1.10) answers initialize over Streamable HTTP with 2024-11-05 and has no HTTP+SSE endpoint', async () => {
    const { url } = sim.target('between-generations');
    const response = await postInitialize(url, '2025-11-25');
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeTruthy();
    const { result } = await answerOf(response);
    expect(result?.protocolVersion).toBe('2024-11-05');
    expect(result?.serverInfo).toEqual({ name: 'between-generations', version: '1.10.2' });
    const get = await fetch(url, { headers: { accept: 'text/event-stream' } });
    await get.body?.cancel();
    expect(get.status).toBeGreaterThanOrEqual(400);
  });

  it('legacy-sse opens with an endpoint event', async () => {
    const { status, text } = await readStream(sim.target('legacy-sse').url, '\n\n', 2000);
    expect(status).toBe(200);
    expect(text).toMatch(/^event: endpoint\ndata: \/messages\?sessionId=[\w-]+\n\n/);
  });

  it('sessions-2025-11-25 serves HTTP+SSE on a GET without session', async () => {
    const { status, text } = await readStream(sim.target('sessions-2025-11-25').url, '\n\n', 2000);
    expect(status).toBe(200);
    expect(text).toMatch(/event: endpoint\ndata: \/messages\?sessionId=/);
  });

  it('bearer echoes the Authorization header it refuses, and serves the right token', async () => {
    const { url } = sim.target('bearer');
    const refused = await fetch(url, {
      method: 'POST',
      headers: { ...MODERN_HEADERS, authorization: 'Bearer not-the-token' },
      body: DISCOVER,
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await refused.json()).toEqual({ error: 'invalid_token', received: 'Bearer not-the-token' });

    const accepted = await fetch(url, {
      method: 'POST',
      headers: { ...MODERN_HEADERS, authorization: `Bearer ${SIM_BEARER_TOKEN}` },
      body: DISCOVER,
    });
    expect(accepted.status).toBe(200);
  });

  it('odd targets answer before any MCP is spoken', async () => {
    const limited = await postInitialize(sim.target('rate-limited').url, '2025-06-18');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('30');
    const down = await postInitialize(sim.target('unavailable').url, '2025-06-18');
    expect(down.status).toBe(503);
    expect(down.headers.get('content-type')).toMatch(/^text\/html/);
    const site = await fetch(sim.target('website').url);
    expect(site.status).toBe(200);
    expect((await postInitialize(sim.target('website').url, '2025-06-18')).status).toBe(405);
  });

  it('closed refuses the connection', async () => {
    const error = await fetch(sim.target('closed').url).then(
      () => undefined,
      (failure: unknown) => failure as Error & { cause?: { code?: string } },
    );
    expect(error?.cause?.code).toBe('ECONNREFUSED');
  });

  it('silent accepts the connection and never answers', async () => {
    const before = sim.connections('silent');
    await expect(fetch(sim.target('silent').url, { signal: AbortSignal.timeout(300) })).rejects.toThrow();
    expect(sim.connections('silent')).toBeGreaterThan(before);
    expect(sim.requests('silent')).toEqual([]);
  });

  it('sse-no-endpoint streams comments only', async () => {
    const { status, text } = await readStream(sim.target('sse-no-endpoint').url, 'event:', 700);
    expect(status).toBe(200);
    expect(text).toContain(': keepalive');
    expect(text).not.toContain('event:');
  });

  it('only drifters drift', () => {
    expect(() => sim.drift('modern', ['2025-06-18'])).toThrow(/does not drift/);
    expect(() => sim.drift('sessions-2025-11-25', ['2025-06-18'])).toThrow(/does not drift/);
    expect(() => sim.drift('drifter', [])).toThrow();
    expect(() => sim.drift('drifter', ['1999-01-01' as Revision])).toThrow(/unknown protocol revision/);
  });
});

describe('drift', () => {
  it('changes what drifter answers, on the same port', async () => {
    const sim = await startSim({ only: ['drifter'] });
    try {
      const { url } = sim.target('drifter');
      expect(sim.target('drifter').supports).toEqual(['2025-06-18', '2025-11-25']);
      expect((await answerOf(await postInitialize(url, '2025-06-18'))).result?.protocolVersion).toBe('2025-06-18');

      sim.drift('drifter', ['2025-11-25']);
      expect(sim.target('drifter')).toMatchObject({ url, supports: ['2025-11-25'], newest: '2025-11-25' });
      expect((await answerOf(await postInitialize(url, '2025-06-18'))).result?.protocolVersion).toBe('2025-11-25');

      sim.drift('drifter', ['2026-07-28']);
      const rejected = await postInitialize(url, '2025-06-18');
      expect(rejected.status).toBe(400);
      expect((await answerOf(rejected)).error?.code).toBe(-32022);
      const discovered = await fetch(url, { method: 'POST', headers: MODERN_HEADERS, body: DISCOVER });
      expect(discovered.status).toBe(200);
    } finally {
      await sim.close();
    }
  });

  it('lets a session opened before a drift finish where it started', async () => {
    const sim = await startSim({ only: ['drifter-pinned'] });
    try {
      const { url } = sim.target('drifter-pinned');
      const init = await postInitialize(url, '2025-03-26');
      const sessionId = init.headers.get('mcp-session-id')!;
      expect((await answerOf(init)).result?.protocolVersion).toBe('2025-03-26');

      sim.drift('drifter-pinned', ['2026-07-28']);
      const initialized = await fetch(url, {
        method: 'POST',
        headers: { ...LEGACY_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-03-26' },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      expect(initialized.status).toBe(202);
      expect((await postInitialize(url, '2025-03-26')).status).toBe(400);
    } finally {
      await sim.close();
    }
  });

  it('applies a script after its delay', async () => {
    const sim = await startSim({
      only: ['drifter-modern'],
      script: [{ afterMs: 50, target: 'drifter-modern', revisions: ['2025-06-18'] }],
    });
    try {
      expect(sim.target('drifter-modern').newest).toBe('2026-07-28');
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(sim.target('drifter-modern').supports).toEqual(['2025-06-18']);
      const answer = await answerOf(await postInitialize(sim.target('drifter-modern').url, '2025-11-25'));
      expect(answer.result?.protocolVersion).toBe('2025-06-18');
    } finally {
      await sim.close();
    }
  });

  it('rejects a script step for a target that does not drift', async () => {
    await expect(
      startSim({ only: ['modern'], script: [{ afterMs: 10, target: 'modern', revisions: ['2025-06-18'] }] }),
    ).rejects.toThrow(/does not drift/);
  });
});

describe('request records', () => {
  it('count every request a target received, with its MCP details', async () => {
    const sim = await startSim({ only: ['modern', 'sessions-2025-06-18'] });
    try {
      await fetch(sim.target('modern').url, { method: 'POST', headers: MODERN_HEADERS, body: DISCOVER });
      await postInitialize(sim.target('modern').url, '2025-11-25').then((response) => response.text());
      await fetch(sim.target('modern').url).then((response) => response.text());
      await postInitialize(sim.target('sessions-2025-06-18').url, '2025-06-18').then((response) => response.text());

      expect(sim.requests()).toHaveLength(4);
      const [discover, init, get] = sim.requests('modern');
      expect(sim.requests('modern')).toHaveLength(3);
      expect(discover).toMatchObject({
        target: 'modern',
        method: 'POST',
        path: '/mcp',
        mcpMethod: 'server/discover',
        protocolVersionHeader: '2026-07-28',
        jsonRpcMethod: 'server/discover',
        hasAuthorization: false,
      });
      expect(init).toMatchObject({ method: 'POST', jsonRpcMethod: 'initialize' });
      expect(init?.mcpMethod).toBeUndefined();
      expect(get).toMatchObject({ method: 'GET', path: '/mcp' });
      expect(sim.requests('sessions-2025-06-18')).toHaveLength(1);

      sim.resetRequests();
      expect(sim.requests()).toEqual([]);
    } finally {
      await sim.close();
    }
  });

  it('remember only the latest keepRequests, so a long demo does not grow', async () => {
    const sim = await startSim({ only: ['modern'], keepRequests: 10 });
    try {
      for (let i = 0; i < 25; i++)
        await fetch(`${sim.target('modern').url}?n=${i}`).then((response) => response.text());
      const kept = sim.requests('modern');
      // Dropped in batches: between the bound and a tenth over it, the newest last.
      expect(kept.length).toBeGreaterThanOrEqual(10);
      expect(kept.length).toBeLessThanOrEqual(11);
      expect(kept.at(-1)?.at).toBeGreaterThanOrEqual(kept[0]!.at);
      await fetch(sim.target('modern').url, { method: 'POST', headers: MODERN_HEADERS, body: DISCOVER });
      expect(sim.requests('modern').at(-1)).toMatchObject({ jsonRpcMethod: 'server/discover' });
    } finally {
      await sim.close();
    }
  });

  it('record the session of sessions and HTTP+SSE posts', async () => {
    const sim = await startSim({ only: ['sessions-2025-11-25'] });
    try {
      const { url } = sim.target('sessions-2025-11-25');
      const init = await postInitialize(url, '2025-11-25');
      const sessionId = init.headers.get('mcp-session-id');
      await init.text();
      const initialized = await fetch(url, {
        method: 'POST',
        headers: { ...LEGACY_HEADERS, 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      expect(initialized.status).toBe(202);
      const deleted = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId! } });
      expect(deleted.status).toBe(200);
      const [, notified, deletion] = sim.requests();
      expect(notified).toMatchObject({ sessionId, jsonRpcMethod: 'notifications/initialized' });
      expect(deletion).toMatchObject({ method: 'DELETE', sessionId });
    } finally {
      await sim.close();
    }
  });
});

describe('ports and lifecycle', () => {
  it('puts target i on basePort + i', async () => {
    // `closed` binds nothing, so this checks the offset without claiming fixed ports.
    const sim = await startSim({ basePort: 20000, only: ['closed'] });
    expect(sim.target('closed').url).toBe(`http://127.0.0.1:${20000 + TARGET_NAMES.indexOf('closed')}/mcp`);
    await sim.close();
  });

  it('refuses any host but loopback', async () => {
    await expect(startSim({ host: '0.0.0.0' as '127.0.0.1' })).rejects.toThrow(/127\.0\.0\.1/);
  });

  it('close() ends open streams and sockets promptly', async () => {
    const sim = await startSim();
    const hangUp = new AbortController();
    const streams = ['legacy-sse', 'sse-no-endpoint', 'sse-slow-endpoint', 'silent'].map((name) =>
      fetch(sim.target(name).url, { signal: hangUp.signal }).then(
        (response) => response.text(),
        () => '',
      ),
    );
    // A stateful session with its SSE answer, and keep-alive sockets on the others.
    await postInitialize(sim.target('sessions-2025-03-26').url, '2025-03-26').then((response) => response.text());
    await new Promise((resolve) => setTimeout(resolve, 100));

    const started = Date.now();
    await sim.close();
    expect(Date.now() - started).toBeLessThan(1000);
    await Promise.all(streams.map((stream) => stream.catch(() => '')));
    hangUp.abort();
  });

  it('builds each target with the SDK release it names', () => {
    const require = createRequire(import.meta.url);
    for (const [pkg, version] of Object.entries(SDK_VERSIONS)) {
      // Not every package exports its package.json: find it above the resolved entry.
      const entry = require.resolve(pkg === '@modelcontextprotocol/server' ? pkg : `${pkg}/server/index.js`);
      const root = entry.slice(0, entry.lastIndexOf(`/node_modules/${pkg}/`) + `/node_modules/${pkg}`.length);
      expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version).toBe(version);
    }
  });
});
