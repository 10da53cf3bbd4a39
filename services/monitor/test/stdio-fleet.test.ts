// stdio servers end to end (issue 20), all real: Postgres, NATS JetStream, control, an agent, and
// fleet-sim's stdio server started as a process. A fleet file names a command instead of a URL; its
// run lands in the database like any other; a command the agent's allowlist does not name is a run
// that says so, and is never started (its marker file never appears). Its env values are sealed at
// rest, masked by the API and never logged; hostile server bodies are refused at the API's door.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNatsBus, type NatsBus } from '@mcp-fleet/bus';
import { STDIO_BOUNDS } from '@mcp-fleet/config';
import { parseFleet } from '@mcp-fleet/control';
import { stdioServer } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { getServer, servers } from '@mcp-fleet/store';
import {
  createTestDatabase,
  LOOPBACK_FLOOR,
  parseMetrics,
  seriesValue,
  type TestDatabase,
  testKeyring,
  waitFor,
} from '@mcp-fleet/testkit';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Monitor, startMonitor } from '../src';
import { NATS_URL } from './support';

const SECRET = `sk-live-${randomBytes(12).toString('hex')}`;
const v2 = stdioServer('v2');
const dir = mkdtempSync(join(tmpdir(), 'mcp-fleet-stdio-fleet-'));
const MARKER = join(dir, 'spawned');
const logs: string[] = [];
const capture = (name: string) => createLogger(name, 'debug', { write: (line: string) => logs.push(line) });

/** The fleet file: one allowlisted stdio server (this Node on fleet-sim's script), one that is not. */
const FLEET = `regions: [eu-west]
defaults: { interval: 3s, timeout: 2500ms }
servers:
  - name: stdio-v2
    command: ${JSON.stringify(v2.command)}
    args: ${JSON.stringify(v2.args)}
    env: { API_KEY: "${SECRET}" }
  - name: stdio-refused
    command: /bin/sh
    args: ["-c", "touch ${MARKER}"]
policy: { allow: ["127.0.0.0/8"] }
`;

let db: TestDatabase;
let bus: NatsBus;
let monitor: Monitor;
const namespace = `t${randomBytes(5).toString('hex')}`;

beforeAll(async () => {
  db = await createTestDatabase('mcpfleet_stdio');
  bus = await connectNatsBus({ servers: NATS_URL, namespace, log: createLogger('test', 'silent'), ackWaitMs: 10_000 });
  monitor = await startMonitor({
    log: createLogger('test', 'silent'),
    store: { open: { databaseUrl: db.url, keyring: testKeyring() } },
    bus,
    control: {
      log: capture('control'),
      fleet: parseFleet(FLEET, 'stdio fleet'),
      port: 0,
      tickMs: 50,
      probeFloor: LOOPBACK_FLOOR,
    },
    agents: {
      regions: ['eu-west'],
      metricsPort: null,
      processMetrics: false,
      heartbeatMs: 500,
      probeFloor: LOOPBACK_FLOOR,
      log: capture('agent'),
      // The agent's own allowlist: this Node only (fleet-sim's servers run on it); /bin/sh is not on it.
      stdioCommands: [process.execPath],
    },
  });
}, 60_000);

afterAll(async () => {
  await monitor?.stop().catch(() => undefined);
  if (bus) {
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const jsm = await jetstreamManager(bus.connection);
    for (const stream of [bus.names.jobsStream, bus.names.resultsStream])
      await jsm.streams.delete(stream).catch(() => undefined);
    await bus.close();
  }
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: API answers, read field by field and checked by expect.
type Answer = any;

async function api<T = Answer>(path: string, init: RequestInit & { json?: unknown } = {}) {
  const { json, ...rest } = init;
  const res = await fetch(`${monitor.control.url}${path}`, {
    ...rest,
    headers: json === undefined ? rest.headers : { 'content-type': 'application/json' },
    body: json === undefined ? rest.body : JSON.stringify(json),
  });
  const text = await res.text();
  return { status: res.status, text, body: (text ? JSON.parse(text) : null) as T };
}

/** Until control has recorded the agent's heartbeat naming this command. */
async function agentAllows(command: string): Promise<void> {
  await waitFor(
    `a live agent allowing ${command}`,
    async () =>
      (await api<{ regions: Record<string, string[]> }>('/api/stdio-commands')).body.regions['eu-west']?.includes(
        command,
      ),
    15_000,
  );
}

async function serverId(name: string): Promise<string> {
  const { body } = await api<{ servers: { id: string; name: string }[] }>('/api/servers');
  const s = body.servers.find((x) => x.name === name);
  if (!s) throw new Error(`no server ${name}`);
  return s.id;
}

async function firstRun(name: string) {
  const id = await serverId(name);
  return waitFor(
    `a run of ${name}`,
    async () => (await api<{ runs: Record<string, Answer>[] }>(`/api/servers/${id}/runs`)).body.runs[0],
    45_000,
  );
}

describe('a stdio server in the fleet file', () => {
  it('runs end to end: the allowlisted command is started by the agent and its run lands', async () => {
    const run = await firstRun('stdio-v2');
    expect(run).toMatchObject({ outcome: 'success', negotiated: '2026-07-28', region: 'eu-west' });
    const samples = parseMetrics(await monitor.agents[0]!.registry.metrics());
    expect(seriesValue(samples, 'mcp_handshake_total', { outcome: 'success' })).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('never starts a command the agent does not allow: its run says why, and the marker never appears', async () => {
    const run = await firstRun('stdio-refused');
    expect(run.outcome).toBe('unreachable');
    expect(run.message).toMatch(/"\/bin\/sh" is not on this agent's stdio allowlist \(--stdio-commands/);
    expect(existsSync(MARKER)).toBe(false);
  }, 60_000);

  it('at start, warns only of the commands the agents starting beside control do not allow', () => {
    // The fleet is applied before the agent's first heartbeat: the agent starting in the same
    // process (`mcp-fleet up`) is counted, so its allowed command is not reported as unprobed.
    const warned = logs.filter((line) => line.includes('not probed until an agent allows its command'));
    expect(warned.some((line) => line.includes('fleet applied: stdio-refused:'))).toBe(true);
    expect(warned.filter((line) => line.includes('fleet applied: stdio-v2:'))).toEqual([]);
  });

  it('keeps env values sealed at rest, masked by the API, out of the logs', async () => {
    const [row] = await monitor.store.db.select().from(servers).where(eq(servers.name, 'stdio-v2'));
    expect(row?.url).toBe(`stdio: ${v2.command} ${v2.args.join(' ')}`);
    expect(row?.command?.env.API_KEY).toMatch(/^mcpfleet:v1:/);
    expect(JSON.stringify(row)).not.toContain(SECRET);

    const id = await serverId('stdio-v2');
    const got = await api(`/api/servers/${id}`);
    expect(got.body.server).toMatchObject({ command: v2.command, args: v2.args, env: { API_KEY: '••••••' } });
    expect(got.text).not.toContain(SECRET);
    await firstRun('stdio-v2');
    expect(logs.join('\n')).not.toContain(SECRET);

    // What GET showed goes back as a PATCH unchanged (the masked value keeps the stored one).
    const back = await api(`/api/servers/${id}`, { method: 'PATCH', json: got.body.server });
    expect(back.status, back.text).toBe(200);
    const [after] = await monitor.store.db.select().from(servers).where(eq(servers.name, 'stdio-v2'));
    expect(after?.command?.env.API_KEY).toMatch(/^mcpfleet:v1:/);
    expect((await getServer(monitor.store.db, id))?.command?.env).toEqual({ API_KEY: SECRET });
  }, 60_000);
});

describe("the API's server body", () => {
  const post = (json: unknown) => api('/api/servers', { method: 'POST', json });

  it('takes a stdio server (command instead of url), masks its env, and never probes it itself', async () => {
    await agentAllows(process.execPath);
    const created = await post({
      name: 'api-stdio',
      command: process.execPath,
      args: ['server.js'],
      env: { TOKEN: SECRET },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.server).toMatchObject({
      url: `stdio: ${process.execPath} server.js`,
      env: { TOKEN: '••••••' },
    });
    expect(created.text).not.toContain(SECRET);
    // A pinned test on a stdio server: control does not start it to try the pin first (agents do).
    const pinned = await api(`/api/servers/${created.body.server.id}/tests`, {
      method: 'POST',
      json: { revision: '2025-06-18' },
    });
    expect(pinned.status).toBe(201);
    // Stored while agents run, so it is probed: loopback only, a port nothing listens on.
    const http = await post({ name: 'api-http', url: 'http://127.0.0.1:9/mcp' });
    expect(
      (await api(`/api/servers/${http.body.server.id}`, { method: 'PATCH', json: { command: 'node' } })).status,
    ).toBe(400);
  });

  it('refuses a command no live agent of its regions allows, naming the field and the setting', async () => {
    await agentAllows(process.execPath);
    // The agent's heartbeat says what it starts: its allowlist (this Node), nothing else.
    const listed = await api<{ regions: Record<string, string[]> }>('/api/stdio-commands');
    expect(listed.body.regions['eu-west']).toContain(process.execPath);
    expect(listed.body.regions['eu-west']).not.toContain('/bin/sh');
    for (const command of ['/bin/sh', 'node']) {
      const refused = await post({ name: `refused-${command.length}`, command });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error).toMatch(
        new RegExp(`^command: no live agent of region eu-west allows "${command}" .*--stdio-commands`),
      );
    }
    expect((await api<{ servers: { name: string }[] }>('/api/servers')).body.servers.map((s) => s.name)).not.toContain(
      'refused-7',
    );
    // Changing an accepted one to such a command is refused too.
    const ok = await post({ name: 'api-stdio-patched', command: process.execPath });
    expect(ok.status, ok.text).toBe(201);
    const patched = await api(`/api/servers/${ok.body.server.id}`, { method: 'PATCH', json: { command: '/bin/sh' } });
    expect(patched.status, patched.text).toBe(400);
    expect(patched.body.error).toMatch(/^command: no live agent/);
    // One whose command no agent allows (the file's) may still change anything else, not move regions.
    const refusedId = await serverId('stdio-refused');
    const timing = await api(`/api/servers/${refusedId}`, { method: 'PATCH', json: { interval: '4s' } });
    expect(timing.status, timing.text).toBe(200);
    const moved = await api(`/api/servers/${refusedId}`, { method: 'PATCH', json: { regions: ['eu-west'] } });
    expect(moved.status, moved.text).toBe(400);
    expect(moved.body.error).toMatch(/^command: no live agent of region eu-west allows "\/bin\/sh"/);
  });

  it('applies a fleet file naming such a command, with a warning in its summary (agents may start later)', async () => {
    await agentAllows(process.execPath);
    const plan = await api('/api/fleet?dryRun=1', {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: FLEET,
    });
    expect(plan.status, plan.text).toBe(200);
    expect(plan.body.warnings['stdio-refused']).toEqual([expect.stringMatching(/no live agent .* allows "\/bin\/sh"/)]);
    expect(plan.body.warnings['stdio-v2']).toBeUndefined();
  });

  it('refuses hostile bodies with the field named', async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: 'h1', url: 'https://example.com/mcp', command: 'node' }, /command: give `url` or `command`.*not both/],
      [{ name: 'h2' }, /url: give `url` \(an HTTP server\) or `command`/],
      [{ name: 'h3', command: 'node', env: { PORT: 8080 } }, /env\.PORT: an environment value is a string/],
      [{ name: 'h4', command: 'node', env: { NESTED: { a: 1 } } }, /env\.NESTED: an environment value is a string/],
      [{ name: 'h5', command: 'node', args: ['x'.repeat(STDIO_BOUNDS.argChars + 1)] }, /args\.0: at most 4096/],
      [{ name: 'h6', command: 'node', args: Array.from({ length: 65 }, () => 'a') }, /args: at most 64 arguments/],
      [{ name: 'h7', command: 'node', cwd: '../../etc' }, /cwd: a directory relative to the agent's --stdio-root/],
      [{ name: 'h8', command: 'node', cwd: '/etc' }, /cwd: a directory relative/],
      [{ name: 'h9', command: './server' }, /command: a bare program name/],
      [{ name: 'h10', command: 'node', headers: { Authorization: 'x' } }, /headers: a stdio server takes `env`/],
      [{ name: 'h11', url: 'https://example.com/mcp', env: { A: 'b' } }, /env: `env` goes with `command`/],
      [{ name: 'h12', command: 'node', tests: [{ revision: 'newest', depth: 'surface' }] }, /not surface/],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.text).toMatch(message);
    }
  });
});
