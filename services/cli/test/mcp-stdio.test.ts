// `mcp-fleet mcp` as a desktop client runs it: a child process on stdio, started by the official
// SDKs' own stdio transports (v2 in both eras, v1.32), against a real control with API tokens on
// and a simulated fleet behind it. The token's scope decides the tools listed; the tools answer
// with structured content; stdout carries JSON-RPC and nothing else; and a start that cannot work
// (control down, a refused token, something else at the URL) is one line on stderr and exit 2.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemoryBus } from '@mcp-fleet/bus';
import { ApiAuth, type Control, parseFleet, startControl } from '@mcp-fleet/control';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { openStore, type Store } from '@mcp-fleet/store';
import { freePort, LOOPBACK_FLOOR } from '@mcp-fleet/testkit';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as Client1 } from 'mcp-sdk-1-32/client/index.js';
import { StdioClientTransport as StdioClientTransport1 } from 'mcp-sdk-1-32/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));
const ADMIN = 'admin-token-for-the-mcp-stdio-test-0123456789';
const READ = 'read-token-for-the-mcp-stdio-test-0123456789ab';
const READ_ONLY_TOOLS = ['get_fleet_summary', 'get_server', 'list_era_moves', 'list_servers'];
const WRITES = ['create_api_test', 'update_api_test', 'delete_api_test'];
const ALL_TOOLS = [
  ...READ_ONLY_TOOLS,
  'create_api_test',
  'delete_api_test',
  'detect_mcp_protocol',
  'run_check',
  'update_api_test',
].sort();

let dir: string;
let store: Store;
let bus: ReturnType<typeof createMemoryBus>;
let control: Control;
let sim: Sim;
const log = createLogger('test', 'silent');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-mcp-stdio-'));
  store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  bus = createMemoryBus({ log });
  sim = await startSim({ only: ['modern', 'sessions-2025-11-25'] });
  const fleet = parseFleet(
    [
      'regions: [eu-west]',
      'servers:',
      `  - { name: modern, url: "${sim.target('modern').url}", tests: [{ revision: newest }] }`,
      `  - { name: sessions, url: "${sim.target('sessions-2025-11-25').url}", tests: [{ revision: newest }] }`,
      'policy: { allow: ["127.0.0.0/8"] }',
      '',
    ].join('\n'),
    'mcp stdio test',
  );
  const auth = new ApiAuth({
    tokens: [
      { scope: 'admin', token: ADMIN },
      { scope: 'read', token: READ },
    ],
  });
  control = await startControl({ store, bus, log, fleet, port: 0, auth, probeFloor: LOOPBACK_FLOOR });
});

afterAll(async () => {
  await control?.stop();
  await bus?.close();
  await store?.close();
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The child's environment as a desktop client's config gives it. */
function env(extra: Record<string, string>): Record<string, string> {
  return { ...getDefaultEnvironment(), LOG_LEVEL: 'info', MCP_FLEET_API_URL: control.url, ...extra };
}

type Era = 'v2 2026-07-28' | 'v2 2025-11-25' | 'v2 auto' | 'v1.32';

interface Session {
  listTools(): Promise<{
    tools: { name: string; outputSchema?: unknown; annotations?: Record<string, unknown> }[];
  }>;
  callTool(p: { name: string; arguments?: Record<string, unknown> }): Promise<{
    structuredContent?: unknown;
    isError?: boolean;
    content?: unknown;
  }>;
  protocol(): string | undefined;
  close(): Promise<void>;
  /** What went wrong on the wire (a line on stdout that was not JSON-RPC is one). */
  errors: Error[];
  stderr: () => string;
}

/** An official SDK client that starts `mcp-fleet mcp` itself, as a desktop client does. */
async function connect(era: Era, token: string): Promise<Session> {
  const params = {
    command: process.execPath,
    args: [BIN, 'mcp'],
    env: env({ MCP_FLEET_API_TOKEN: token }),
    stderr: 'pipe' as const,
  };
  const errors: Error[] = [];
  let stderr = '';
  const info = { name: 'mcp-stdio-test', version: '0.0.0' };
  if (era === 'v1.32') {
    const transport = new StdioClientTransport1(params);
    transport.stderr?.on('data', (d) => (stderr += d));
    const client = new Client1(info);
    client.onerror = (err) => errors.push(err);
    await client.connect(transport);
    return {
      listTools: () => client.listTools() as ReturnType<Session['listTools']>,
      callTool: (p) => client.callTool(p) as ReturnType<Session['callTool']>,
      // v1 does not say what it negotiated; it offers 2025-11-25 and older.
      protocol: () => undefined,
      close: () => client.close(),
      errors,
      stderr: () => stderr,
    };
  }
  const transport = new StdioClientTransport(params);
  transport.stderr?.on('data', (d) => (stderr += d));
  // Pinned to the modern era; held to 2025-11-25 (initialize); or auto, which probes on a sibling process first.
  const client =
    era === 'v2 2026-07-28'
      ? new Client(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
      : era === 'v2 auto'
        ? new Client(info, { versionNegotiation: { mode: 'auto' } })
        : new Client(info, { supportedProtocolVersions: ['2025-11-25'] });
  client.onerror = (err) => errors.push(err);
  await client.connect(transport);
  return {
    listTools: () => client.listTools(),
    callTool: (p) => client.callTool(p) as ReturnType<Session['callTool']>,
    protocol: () => client.getNegotiatedProtocolVersion(),
    close: () => client.close(),
    errors,
    stderr: () => stderr,
  };
}

describe.each<Era>(['v2 2026-07-28', 'v2 2025-11-25', 'v2 auto', 'v1.32'])(
  'mcp-fleet mcp over stdio (%s client)',
  (era) => {
    it('lists all nine tools to an admin token, each with an output schema and annotations, and answers with structured content', async () => {
      const session = await connect(era, ADMIN);
      try {
        if (era !== 'v1.32') expect(session.protocol()).toBe(era === 'v2 auto' ? '2026-07-28' : era.slice(3));
        const { tools } = await session.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS);
        for (const tool of tools) {
          expect(tool.outputSchema, tool.name).toBeDefined();
          expect(tool.annotations, tool.name).toBeDefined();
          for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const)
            expect(typeof tool.annotations?.[hint], `${tool.name} ${hint}`).toBe('boolean');
          // The fleet's writes are not read-only; what a read token sees sends no traffic anywhere.
          if (WRITES.includes(tool.name)) expect(tool.annotations?.readOnlyHint, tool.name).toBe(false);
          if (READ_ONLY_TOOLS.includes(tool.name))
            expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: true, openWorldHint: false });
        }
        const servers = await session.callTool({ name: 'list_servers', arguments: {} });
        expect(servers.isError ?? false).toBe(false);
        expect(servers.structuredContent).toBeTypeOf('object');
        const names = JSON.stringify(servers.structuredContent);
        expect(names).toContain('"modern"');
        expect(names).toContain('"sessions"');
        const summary = await session.callTool({ name: 'get_fleet_summary', arguments: {} });
        expect(summary.isError ?? false).toBe(false);
        expect(summary.structuredContent).toBeTypeOf('object');
        expect(session.errors).toEqual([]);
      } finally {
        await session.close();
      }
    });

    it('lists only the read-only tools to a read token', async () => {
      const session = await connect(era, READ);
      try {
        const { tools } = await session.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(READ_ONLY_TOOLS);
        expect(session.errors).toEqual([]);
      } finally {
        await session.close();
      }
      // Logs went to stderr (the client read stdout as JSON-RPC and found nothing else there).
      expect(session.stderr()).toContain('serving the monitor over stdio');
    });
  },
);

/** Runs `mcp-fleet mcp` with stdin closed, as a start that must fail does. */
function runMcp(
  extraEnv: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, 'mcp', ...args],
      { env: env(extraEnv) as NodeJS.ProcessEnv, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

describe('mcp-fleet mcp: the detection tools', () => {
  it('are bounded per token on the pipe too: an agent in a loop is refused, told when to try again', async () => {
    const session = await connect('v2 2026-07-28', ADMIN);
    try {
      const mcpUrl = sim.target('modern').url;
      const answers = [];
      for (let i = 0; i < 6; i += 1)
        answers.push(await session.callTool({ name: 'detect_mcp_protocol', arguments: { mcpUrl } }));
      // The burst (5) is admitted: control detected the server, with a structured answer.
      expect(answers[0]?.isError ?? false).toBe(false);
      expect(answers[0]?.structuredContent).toMatchObject({ outcome: 'DETECTED' });
      const refused = answers.filter((a) => a.isError);
      expect(refused).toHaveLength(1);
      expect(JSON.stringify(refused[0]?.content)).toMatch(/rate limited: detect_mcp_protocol .*try again in \d+ s/);
    } finally {
      await session.close();
    }
  });
});

describe('mcp-fleet mcp: nothing but JSON-RPC on stdout', () => {
  it('answers a raw 2025 conversation line by line, and exits 0 when stdin closes', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp'], {
      env: env({ MCP_FLEET_API_TOKEN: ADMIN }) as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const lines = () => stdout.split('\n').filter((l) => l !== '');
    const answered = (n: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer ${n}: ${stdout}\n${stderr}`)), 30_000);
        const check = () => {
          if (lines().length >= n) {
            clearTimeout(timer);
            child.stdout.off('data', check);
            resolve();
          }
        };
        child.stdout.on('data', check);
        check();
      });
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    await answered(1);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_servers', arguments: {} } });
    await answered(3);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.stdin.end();
    expect(await exited).toBe(0);
    const messages = lines().map((l) => JSON.parse(l) as { jsonrpc: string; id?: number; result?: unknown });
    expect(messages.every((m) => m.jsonrpc === '2.0')).toBe(true);
    expect(messages.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(messages[0]?.result).toMatchObject({ protocolVersion: '2025-11-25' });
    expect(stderr).toContain('serving the monitor over stdio');
  });
});

describe('mcp-fleet mcp: its arguments', () => {
  it('--help prints its usage on stdout (nothing is served) and exits 0', async () => {
    const r = await runMcp({}, '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage:\n {2}mcp-fleet mcp \[--api-url url\] \[--token-file file\]/);
    expect(r.stderr).toBe('');
  });

  it.each([
    [['extra'], 'unexpected argument: extra'],
    [['--api-url', 'ftp://127.0.0.1/'], '--api-url must be http:// or https://, not ftp:'],
    [['--api-url', 'not a url'], '--api-url is not a URL: "not a url"'],
    [['--timeout', '0'], '--timeout takes a whole number from 1 to 600000, got 0'],
  ])('%j is a usage error, exit 2', async (args, message) => {
    const r = await runMcp({ MCP_FLEET_API_TOKEN: ADMIN }, ...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`mcp-fleet mcp: ${message}\nsee mcp-fleet mcp --help\n`);
  });
});

describe('mcp-fleet mcp: a start that cannot work is one line on stderr and exit 2', () => {
  it('control down', async () => {
    const port = await freePort();
    const r = await runMcp({ MCP_FLEET_API_URL: `http://127.0.0.1:${port}`, MCP_FLEET_API_TOKEN: ADMIN });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`mcp-fleet mcp: cannot reach control's API at http://127.0.0.1:${port} (ECONNREFUSED)`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a token control does not know, never echoed', async () => {
    const wrong = 'not-a-token-of-this-control-0123456789abcdef';
    const r = await runMcp({ MCP_FLEET_API_TOKEN: wrong });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`control's API at ${control.url} refused the token (the bearer token is not valid)`);
    expect(r.stderr).not.toContain(wrong);
  });

  it('no token at all, with control asking for one', async () => {
    const r = await runMcp({});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`control's API at ${control.url} needs a token`);
  });

  it('a token that could not be one (a header injection) is refused before anything is sent', async () => {
    const r = await runMcp({ MCP_FLEET_API_TOKEN: `${ADMIN}\r\nX-Evil: 1` });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('MCP_FLEET_API_TOKEN may only hold printable ASCII without spaces or commas');
    expect(r.stderr).not.toContain(ADMIN);
  });

  it('credentials in the URL are refused (the token has its own variable)', async () => {
    const r = await runMcp({ MCP_FLEET_API_URL: control.url.replace('http://', `http://u:${ADMIN}@`) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('MCP_FLEET_API_URL must not hold credentials');
    expect(r.stderr).not.toContain(ADMIN);
  });

  it('something that is not a control at the URL: no scope, nothing served, its bytes not sent to the terminal', async () => {
    const impostor: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>\u001b[31mhello\u001b[0m</html>');
    });
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    const { port } = impostor.address() as { port: number };
    try {
      const r = await runMcp({ MCP_FLEET_API_URL: `http://127.0.0.1:${port}`, MCP_FLEET_API_TOKEN: ADMIN });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('is MCP_FLEET_API_URL (or --api-url) an mcp-fleet control?');
      expect(r.stderr).not.toContain('\u001b');
    } finally {
      impostor.close();
    }
  });

  it('--token-file reads the token from a file, as MCP_FLEET_API_TOKEN_FILE does', async () => {
    const file = join(dir, 'token');
    writeFileSync(file, `${READ}\n`, { mode: 0o600 });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--token-file', file],
      env: env({}),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'mcp-stdio-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(READ_ONLY_TOOLS);
    } finally {
      await client.close();
    }
    const missing = await runMcp({}, '--token-file', join(dir, 'nope'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`cannot read --token-file ${join(dir, 'nope')}: ENOENT`);
  });
});
