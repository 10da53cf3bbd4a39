// Planted credentials never come back out. Servers carry unique secrets in their headers: one
// against fleet-sim's `bearer` target with a wrong token (its 401 echoes the Authorization header),
// one with the right token and a second secret header, and three against a hostile mirror that
// reflects every header it is sent into everything a probe records (error bodies and messages,
// serverInfo, the protocol version it answers, a session id, Retry-After). Control and two agents
// run in-process with every log line and span captured; then every log, span, /metrics text, API
// answer and database column is searched, and the servers' stored headers must be ciphertext.
// The jobs on the bus do carry the credentials in plaintext: agents need them (use TLS to NATS).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Agent, startAgent } from '@mcp-fleet/agent';
import { CredentialsUnreadableError, isSealed, Keyring, SecretKeyError, sealedBy, useKeyring } from '@mcp-fleet/auth';
import { type Bus, createMemoryBus, type Job } from '@mcp-fleet/bus';
import { SIM_BEARER_TOKEN, type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { maskUrl } from '@mcp-fleet/probe';
import {
  agents as agentsTable,
  createServer as createFleetServer,
  detections,
  eraMoves,
  openStore,
  runs,
  type Store,
  servers,
  testStates,
  tests as testsTable,
} from '@mcp-fleet/store';
import { waitFor } from '@mcp-fleet/testkit';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Control, parseFleet, startControl } from '../src';
import { LOOPBACK_FLOOR } from './support';

const plant = (what: string) => `planted-${what}-${randomBytes(10).toString('hex')}`;
/** A wrong bearer token: the `bearer` target's 401 echoes it. */
const WRONG_TOKEN = plant('wrong');
/** A second header beside the right token. */
const API_KEY = plant('apikey');
/** The mirror's credentials: it reflects them everywhere. */
const MIRROR_KEY = plant('mirror');
const MIRROR_TOKEN = plant('mirrortoken');
/** Given through the API: a server created, then patched, and a detection asked for. */
const API_CREATED = plant('created');
const API_PATCHED = plant('patched');
const API_DETECT = plant('detect');
/** A URL's credentials: user name, password and a query token (the mirror echoes the token). */
const URL_USER = plant('urluser');
const URL_PASS = plant('urlpass');
const URL_TOKEN = plant('urltoken');
const SECRETS = [
  URL_USER,
  URL_PASS,
  URL_TOKEN,
  WRONG_TOKEN,
  API_KEY,
  MIRROR_KEY,
  MIRROR_TOKEN,
  API_CREATED,
  API_PATCHED,
  API_DETECT,
  SIM_BEARER_TOKEN,
];
const REGIONS = ['eu-west', 'us-east'];

/** Each planted secret a text contains, with what surrounds it (to tell where it leaked). */
function leaked(text: string): string[] {
  // A secret's first part counts too (all but its last 12 hex digits): a preview cut inside it.
  // So does its base64, which the mirror echoes too (its first 24 characters: 18 bytes that line up).
  const forms = (s: string) => [s.slice(0, -12), Buffer.from(s).toString('base64').slice(0, 24)];
  return SECRETS.filter((s) => forms(s).some((f) => text.includes(f))).map((s) => {
    const at = Math.max(...forms(s).map((f) => text.indexOf(f)));
    return `${s} in …${text.slice(Math.max(0, at - 120), at + s.length + 20)}…`;
  });
}

/**
 * A hostile server: it answers with whatever credentials it was sent, in every place a probe
 * looks. `/mcp` serves 2026-07-28 with the credential as serverInfo and fails everything else
 * with it in the error; `/odd` answers with the credential as its protocol version and session
 * id; `/limited` rate-limits with it in Retry-After. Error bodies and messages place it across
 * the 200th character, where previews are cut.
 */
async function startMirror(): Promise<{
  url: (path: string) => string;
  received: string[];
  close: () => Promise<void>;
}> {
  const received: string[] = [];
  const server: HttpServer = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push(req.url ?? '');
      // The header's key, or a URL's query token: what it was sent is what it echoes.
      const key = String(
        req.headers['x-api-key'] ?? new URL(req.url ?? '/', 'http://x').searchParams.get('token') ?? '',
      );
      const auth = String(req.headers.authorization ?? '');
      const b64 = (v: string) => Buffer.from(v).toString('base64');
      const echo = {
        received: req.headers,
        auth,
        key,
        raw: `${auth} ${key}`,
        encoded: { key: b64(key), token: b64(auth.replace(/^Bearer /, '')), url: encodeURIComponent(key) },
      };
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      let rpc: { id?: unknown; method?: string } = {};
      try {
        rpc = JSON.parse(body || '{}');
      } catch {}
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(value));
      };
      // The credential straddles the 200 characters a body preview keeps.
      const straddling = (status: number, headers: Record<string, string>) => {
        const head = '{"error":"';
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(`${head}${'x'.repeat(200 - head.length - key.length + 4)}${key}", "echo": ${JSON.stringify(echo)}}`);
      };
      if (path === '/limited') return straddling(429, { 'retry-after': key, 'www-authenticate': auth });
      if (req.method !== 'POST') return straddling(401, { 'www-authenticate': `Bearer error="${auth}"` });
      if (path === '/odd') {
        const session = { 'mcp-session-id': key };
        if (rpc.method === 'server/discover')
          return json(200, { jsonrpc: '2.0', id: rpc.id, result: { supportedVersions: [key] } }, session);
        if (rpc.method === 'initialize')
          return json(
            200,
            {
              jsonrpc: '2.0',
              id: rpc.id,
              result: { protocolVersion: key, capabilities: {}, serverInfo: { name: auth, version: key } },
            },
            session,
          );
        if (rpc.id === undefined) return void res.writeHead(202).end();
        return json(400, { jsonrpc: '2.0', id: rpc.id, error: { code: -32600, message: `no ${auth}` } }, session);
      }
      if (rpc.method === 'server/discover')
        return json(200, {
          jsonrpc: '2.0',
          id: rpc.id,
          result: {
            supportedVersions: ['2026-07-28'],
            capabilities: {},
            _meta: {
              'io.modelcontextprotocol/serverInfo': {
                name: `mirror ${auth}`,
                version: key,
                title: `${key} ${echo.encoded.token}`,
              },
            },
          },
        });
      // The error message has the credential where its 200-character cut falls, too.
      return json(400, {
        jsonrpc: '2.0',
        id: rpc.id ?? null,
        error: {
          code: -32602,
          message: `${'x'.repeat(200 - key.length + 4)}${key} ${auth} ${echo.encoded.key}`,
          data: echo,
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The mirror's `/mcp` with credentials in its URL only: a user name, a password and a query token. */
function mirrorUrlWithCredentials(mirror: (path: string) => string): string {
  return mirror(`/mcp?token=${URL_TOKEN}`).replace('http://', `http://${URL_USER}:${URL_PASS}@`);
}

function fleetYaml(sim: Sim, mirror: (path: string) => string): string {
  const bearer = sim.target('bearer').url;
  const mirrorHeaders = `{ X-Api-Key: "${MIRROR_KEY}", Authorization: "Bearer ${MIRROR_TOKEN}" }`;
  return `
regions: [${REGIONS.join(', ')}]
defaults: { interval: 2s, timeout: 1500ms }
servers:
  - name: bearer-wrong
    url: ${bearer}
    headers: { Authorization: "Bearer ${WRONG_TOKEN}" }
    tests: [{ revision: newest }, { revision: "2025-06-18" }]
    detection: { interval: 2s }
  - name: bearer-right
    url: ${bearer}
    headers: { Authorization: "Bearer ${SIM_BEARER_TOKEN}", X-Api-Key: "${API_KEY}" }
    tests: [{ revision: newest }, { revision: "2025-11-25" }]
    detection: { interval: 2s }
  - name: mirror
    url: ${mirror('/mcp')}
    headers: ${mirrorHeaders}
    tests: [{ revision: newest }, { revision: "2025-11-25" }]
    detection: { interval: 2s }
  - name: mirror-odd
    url: ${mirror('/odd')}
    headers: ${mirrorHeaders}
    tests: [{ revision: newest }, { revision: "2025-06-18" }]
    detection: { interval: 2s }
  - name: mirror-limited
    url: ${mirror('/limited')}
    headers: ${mirrorHeaders}
    tests: [{ revision: newest }]
    detection: { interval: 2s }
  - name: mirror-url
    url: ${mirrorUrlWithCredentials(mirror)}
    tests: [{ revision: newest }, { revision: "2025-11-25" }]
    detection: { interval: 2s }
policy: { allow: ["127.0.0.0/8"] }
`;
}

let dir: string;
let store: Store;
let bus: Bus;
let sim: Sim;
let mirror: Awaited<ReturnType<typeof startMirror>>;
let control: Control;
let agents: Agent[] = [];
let stopped = false;
const lines: string[] = [];
const jobs: Job[] = [];
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
/** Every API answer, as text. */
const answers: { what: string; text: string }[] = [];

async function api(path: string, init: { method?: string; json?: unknown } = {}) {
  const res = await fetch(`${control.url}${path}`, {
    method: init.method ?? 'GET',
    headers: init.json === undefined ? {} : { 'content-type': 'application/json' },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await res.text();
  answers.push({ what: `${init.method ?? 'GET'} ${path} (${res.status})`, text });
  return { status: res.status, text, body: (text ? JSON.parse(text) : null) as never };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-secrets-'));
  // Every line any part logs, at every level.
  const sink = { write: (line: string) => void lines.push(line) };
  const log = createLogger('test', 'trace', sink);
  store = await openStore({ dataDir: join(dir, 'pgdata'), log: (m) => log.info(m) });
  await store.migrate();
  bus = createMemoryBus({ log, ackWaitMs: 5_000 });
  // The jobs control publishes: they carry the credentials, which agents need.
  const publishJob = bus.publishJob.bind(bus);
  bus.publishJob = (job) => {
    jobs.push(job);
    return publishJob(job);
  };
  sim = await startSim({ only: ['bearer'] });
  mirror = await startMirror();
  control = await startControl({
    store,
    bus,
    log,
    fleet: parseFleet(fleetYaml(sim, mirror.url), 'secrets fleet'),
    port: 0,
    tickMs: 50,
    probeFloor: LOOPBACK_FLOOR,
  });
  agents = await Promise.all(
    REGIONS.map((region) =>
      startAgent({
        bus,
        region,
        log,
        tracerProvider: provider,
        metricsPort: 0,
        heartbeatMs: 500,
        processMetrics: false,
        probeFloor: LOOPBACK_FLOOR,
      }),
    ),
  );
}, 60_000);

afterAll(async () => {
  if (!stopped) {
    await Promise.allSettled(agents.map((a) => a.stop()));
    await control?.stop().catch(() => undefined);
    await store?.close();
  }
  await bus?.close();
  await sim?.close();
  await mirror?.close();
  await provider.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('planted credentials', () => {
  it('are used: every server is probed from both regions, with its credentials', async () => {
    const names = ['bearer-wrong', 'bearer-right', 'mirror', 'mirror-odd', 'mirror-limited', 'mirror-url'];
    await waitFor(
      'runs and detections of every server in both regions',
      async () => {
        const rows = await store.db.select().from(runs);
        const dets = await store.db.select().from(detections);
        const all = await store.db.select().from(servers);
        const id = (n: string) => all.find((s) => s.name === n)?.id;
        return names.every((n) =>
          REGIONS.every(
            (r) =>
              rows.filter((x) => x.serverId === id(n) && x.region === r).length >= 2 &&
              dets.some((d) => d.serverId === id(n) && d.region === r),
          ),
        );
      },
      40_000,
    );
    const rows = await store.db.select().from(runs);
    const all = await store.db.select().from(servers);
    const outcomes = (name: string) =>
      new Set(rows.filter((r) => r.serverId === all.find((s) => s.name === name)!.id).map((r) => r.outcome));
    // The wrong token is refused (and echoed back by the target), the right one is accepted.
    expect(outcomes('bearer-wrong')).toContain('auth_required');
    const refusal = rows.find(
      (r) => r.serverId === all.find((s) => s.name === 'bearer-wrong')!.id && r.outcome === 'auth_required',
    );
    // The 401 echoed the token; what was kept of it says so.
    const evidence = refusal!.evidence as { status: number; bodyPreview: string };
    expect(evidence.status).toBe(401);
    expect(evidence.bodyPreview).toContain('"received":"[redacted]"');
    expect(outcomes('bearer-right')).toContain('success');
    // The jobs carried the credentials to the agents, in plaintext: they need them.
    const sent = JSON.stringify(jobs);
    for (const s of [WRONG_TOKEN, API_KEY, MIRROR_KEY, MIRROR_TOKEN, SIM_BEARER_TOKEN, URL_PASS, URL_TOKEN])
      expect(sent).toContain(s);
    // The probe sent the URL's query as given; the mirror echoed the token into everything it answered.
    expect(mirror.received).toContain(`/mcp?token=${URL_TOKEN}`);
  });

  it('are not in any API answer', async () => {
    const list = await api('/api/servers');
    expect(list.status).toBe(200);
    const ids = (list.body as { servers: { id: string; name: string }[] }).servers;
    for (const { id } of ids) {
      const one = await api(`/api/servers/${id}`);
      expect(one.status).toBe(200);
      // Names only, values masked.
      const headers = (one.body as { server: { headers: Record<string, string> } }).server.headers;
      expect(Object.values(headers).every((v) => v === '••••••')).toBe(true);
      await api(`/api/servers/${id}/runs?limit=500`);
      await api(`/api/servers/${id}/detection`);
      const tests = await api(`/api/servers/${id}/tests`);
      for (const t of (tests.body as { tests: { id: string }[] }).tests) await api(`/api/tests/${t.id}`);
    }
    await api('/api/era-moves?range=1h&limit=500');
    await api('/api/fleet/summary?range=1h');
    await api('/api/agents');
    // Credentials sent to the API: a detection, a pinned test that fails (its refusal quotes the run),
    // a server created and patched.
    for (const url of [sim.target('bearer').url, mirror.url('/mcp'), mirror.url('/odd'), mirror.url('/limited')]) {
      const detect = await api('/api/detect', {
        method: 'POST',
        json: { url, headers: { Authorization: `Bearer ${API_DETECT}`, 'X-Api-Key': API_DETECT } },
      });
      expect(detect.status).toBe(200);
      // The same credential in the URL's query instead, which the mirror echoes just as well.
      const inUrl = await api('/api/detect', { method: 'POST', json: { url: `${url}?token=${API_DETECT}` } });
      expect(inUrl.status).toBe(200);
    }
    const refused = await api('/api/servers', {
      method: 'POST',
      json: {
        name: 'refused',
        url: sim.target('bearer').url,
        headers: { Authorization: `Bearer ${API_CREATED}` },
        tests: [{ revision: '2025-06-18' }],
      },
    });
    expect(refused.status).toBe(422);
    const created = await api('/api/servers', {
      method: 'POST',
      json: {
        name: 'via-api',
        url: mirror.url('/mcp'),
        headers: { Authorization: `Bearer ${API_CREATED}`, 'X-Api-Key': API_CREATED },
        // The fleet's pace, not the API's 60 s default: its first slot could otherwise fall past the wait below.
        interval: '2s',
        timeout: '1500ms',
        tests: [{ revision: 'newest' }, { revision: '2026-07-28' }],
      },
    });
    expect(created.status).toBe(201);
    const id = (created.body as { server: { id: string } }).server.id;
    const patched = await api(`/api/servers/${id}`, {
      method: 'PATCH',
      json: { headers: { Authorization: `Bearer ${API_PATCHED}`, 'X-Api-Key': API_PATCHED } },
    });
    expect(patched.status).toBe(200);
    await waitFor(
      'the API-created server to run',
      async () => (await store.db.select().from(runs)).some((r) => r.serverId === id),
      20_000,
    );
    await api(`/api/servers/${id}/runs?limit=500`);
    await api('/api/servers');

    const found = answers.flatMap((a) => leaked(a.text).map((s) => `${a.what}: ${s}`));
    expect(found).toEqual([]);
  });

  it('are not in the database, except sealed in servers.headers and servers.url_sealed', async () => {
    // The raw column: names readable, every value sealed.
    const stored = await store.db.select({ name: servers.name, headers: servers.headers }).from(servers);
    expect(stored.length).toBeGreaterThanOrEqual(6);
    for (const s of stored) for (const v of Object.values(s.headers)) expect(isSealed(v), s.name).toBe(true);
    // A URL with credentials: masked where it is shown, sealed whole beside it.
    const withUrl = (await store.db.select().from(servers)).find((s) => s.name === 'mirror-url');
    expect(withUrl!.url).toBe(maskUrl(mirrorUrlWithCredentials(mirror.url)));
    expect(withUrl!.url).toMatch(/^http:\/\/••••••:••••••@127\.0\.0\.1:\d+\/mcp\?token=••••••$/);
    expect(isSealed(withUrl!.urlSealed!)).toBe(true);
    const tables = {
      servers: await store.db.select().from(servers),
      runs: await store.db.select().from(runs),
      detections: await store.db.select().from(detections),
      testStates: await store.db.select().from(testStates),
      eraMoves: await store.db.select().from(eraMoves),
      tests: await store.db.select().from(testsTable),
      agents: await store.db.select().from(agentsTable),
    };
    expect(tables.runs.length).toBeGreaterThan(20);
    // The mirror's answers were recorded (evidence, messages, serverInfo) — with the secrets redacted.
    expect(JSON.stringify(tables.runs)).toContain('[redacted]');
    const found = Object.entries(tables).flatMap(([table, rows]) =>
      leaked(JSON.stringify(rows)).map((s) => `${table}: ${s}`),
    );
    expect(found).toEqual([]);
  });

  it('are not in /metrics, spans or logs', async () => {
    const metrics = [await (await fetch(`${control.url}/metrics`)).text()];
    for (const a of agents) metrics.push(await (await fetch(a.metricsUrl!)).text());
    expect(metrics.every((m) => m.includes('mcp_'))).toBe(true);
    expect(metrics.flatMap(leaked)).toEqual([]);

    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(50);
    const spanText = spans.map((s) =>
      JSON.stringify({
        name: s.name,
        attributes: s.attributes,
        events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })),
        status: s.status,
        links: s.links.map((l) => l.attributes),
        resource: s.resource.attributes,
      }),
    );
    const spanLeaks = spanText.flatMap(leaked);
    expect(spanLeaks).toEqual([]);

    expect(lines.length).toBeGreaterThan(10);
    const logLeaks = lines.flatMap(leaked);
    expect(logLeaks).toEqual([]);
  });

  it('are not in the database files on disk', async () => {
    stopped = true;
    await Promise.allSettled(agents.map((a) => a.stop()));
    await control.stop();
    await store.close();
    const files: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d)) {
        const p = join(d, e);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(join(dir, 'pgdata'));
    expect(files.length).toBeGreaterThan(10);
    const found: string[] = [];
    for (const f of files) {
      const bytes = readFileSync(f);
      for (const s of SECRETS) if (bytes.includes(s)) found.push(`${s} in ${f}`);
    }
    expect(found).toEqual([]);
  });
});

describe('control and the secret key', () => {
  const sink = { write: (line: string) => void keyLines.push(line) };
  const keyLines: string[] = [];
  const keyLog = createLogger('test', 'info', sink);
  let keyDir: string;
  let keyStore: Store;
  let keyBus: Bus;
  const oldKey = randomBytes(32);
  const start = () =>
    startControl({ store: keyStore, bus: keyBus, log: keyLog, fleet: null, regions: REGIONS, port: 0 });

  beforeAll(async () => {
    keyDir = mkdtempSync(join(tmpdir(), 'mcpfleet-keys-'));
    keyStore = await openStore({ dataDir: join(keyDir, 'pgdata'), keyring: new Keyring(oldKey) });
    await keyStore.migrate();
    keyBus = createMemoryBus({ log: keyLog });
    await createFleetServer(keyStore.db, {
      name: 'keyed',
      url: 'https://keyed.example.com/mcp',
      headers: { Authorization: `Bearer ${API_CREATED}` },
      intervalMs: 60_000,
      timeoutMs: 10_000,
    });
  });
  afterAll(async () => {
    useKeyring(keyStore?.keyring ?? null);
    await keyBus?.close();
    await keyStore?.close();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  });

  it('refuses to start without a key while credentials are stored, and names what to set', async () => {
    useKeyring(null);
    await expect(start()).rejects.toThrow(SecretKeyError);
    await expect(start()).rejects.toThrow(
      /1 stored server\(s\) have credentials \("keyed"\) and MCP_FLEET_SECRET_KEY is not set: set it \(32 random bytes/,
    );
  });

  it('refuses to start with a key that does not open them, and starts with the old key as previous, re-sealing', async () => {
    const newKey = randomBytes(32);
    useKeyring(new Keyring(newKey));
    await expect(start()).rejects.toThrow(CredentialsUnreadableError);
    await expect(start()).rejects.toThrow(/MCP_FLEET_SECRET_KEY_PREVIOUS/);
    // MCP_FLEET_SECRET_KEY=new, MCP_FLEET_SECRET_KEY_PREVIOUS=old.
    const rotated = new Keyring(newKey, { previous: [oldKey] });
    useKeyring(rotated);
    const control = await start();
    await control.stop();
    expect(keyLines.some((l) => l.includes('stored credentials sealed under the current key'))).toBe(true);
    const [row] = await keyStore.db.select({ headers: servers.headers }).from(servers);
    expect(sealedBy(row!.headers.Authorization!)).toBe(rotated.id);
    // Now the new key alone unseals everything.
    useKeyring(new Keyring(newKey));
    await (await start()).stop();
  });

  it('answers 503 naming the key to a request that would store credentials without one', async () => {
    useKeyring(null);
    await keyStore.db.update(servers).set({ headers: {} });
    const control = await start();
    try {
      const res = await fetch(`${control.url}/api/servers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'no-key',
          url: 'https://no-key.example.com/mcp',
          headers: { Authorization: `Bearer ${API_CREATED}` },
        }),
      });
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(text).toMatch(/needs MCP_FLEET_SECRET_KEY/);
      expect(text).not.toContain(API_CREATED);
      // Credentials in the URL alone are refused the same way.
      const inUrl = await fetch(`${control.url}/api/servers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'no-key-url', url: `https://no-key.example.com/mcp?token=${API_CREATED}` }),
      });
      expect(inUrl.status).toBe(503);
      const urlText = await inUrl.text();
      expect(urlText).toMatch(
        /storing a URL with credentials \(a user name, password or query values\) needs MCP_FLEET_SECRET_KEY/,
      );
      expect(urlText).not.toContain(API_CREATED);
    } finally {
      await control.stop();
    }
  });
});
