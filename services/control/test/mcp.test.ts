// The monitor over MCP, spoken to by the official clients: SDK 2.x in both eras (2026-07-28 and a
// 2025 sessions revision) and SDK 1.x (legacy), against a real control (PGlite, memory bus) and
// fleet-sim's real MCP servers. Tools are listed with their schemas and hints, each is called, a
// read token sees only the read-only tools, the detection tools are rate limited, and /mcp keeps
// the API's rules against other sites' pages.
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as Client1 } from 'mcp-sdk-1-32/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from 'mcp-sdk-1-32/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Control, MONITOR_TOOLS } from '../src';
import { ADMIN, type ControlFixture, controlFixture, READ } from './fixture';

const READ_ONLY_TOOLS = ['get_fleet_summary', 'get_server', 'list_era_moves', 'list_servers'];

let fixture: ControlFixture;
let control: Control;
let sim: Sim;

beforeAll(async () => {
  fixture = await controlFixture('mcp', { control: { mcpDetectionLimits: { burst: 100, perMinute: 100 } } });
  control = fixture.control;
  sim = await startSim({ only: ['modern', 'sessions-2025-11-25'] });
}, 60_000);

afterAll(async () => {
  await fixture?.close();
  await sim?.close();
});

type Era = '2026-07-28' | '2025-11-25';

/** An SDK 2.x client held to one era: pinned to 2026-07-28, or offering only a 2025 revision. */
async function connect2(era: Era, token: string, url = `${control.url}/mcp`): Promise<Client> {
  const info = { name: 'mcp-fleet-test', version: '0.0.0' };
  const client =
    era === '2026-07-28'
      ? new Client(info, { versionNegotiation: { mode: { pin: era } } })
      : new Client(info, { supportedProtocolVersions: [era] });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  expect(client.getNegotiatedProtocolVersion()).toBe(era);
  return client;
}

async function connect1(token: string): Promise<Client1> {
  const client = new Client1({ name: 'mcp-fleet-test-v1', version: '0.0.0' });
  await client.connect(
    new Transport1(new URL(`${control.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: unknown[] };
const text = (r: ToolResult) => (r.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');

describe('tools over both eras and both SDK generations', () => {
  it.each(['2026-07-28', '2025-11-25'] as const)(
    'SDK 2.x in %s lists every tool with its schemas and hints',
    async (era) => {
      const client = await connect2(era, ADMIN);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(MONITOR_TOOLS.map((t) => t.name).sort());
      for (const tool of tools) {
        expect(tool.outputSchema?.type, tool.name).toBe('object');
        expect(tool.inputSchema.type).toBe('object');
        expect(typeof tool.annotations?.readOnlyHint, tool.name).toBe('boolean');
        expect(typeof tool.annotations?.destructiveHint, tool.name).toBe('boolean');
      }
      const hint = (name: string) => tools.find((t) => t.name === name)!.annotations!;
      expect(hint('detect_mcp_protocol')).toMatchObject({ readOnlyHint: true, openWorldHint: true });
      expect(hint('run_check')).toMatchObject({ readOnlyHint: true });
      expect(hint('delete_api_test')).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      expect(hint('create_api_test')).toMatchObject({ readOnlyHint: false, destructiveHint: false });
      expect(tools.filter((t) => t.annotations?.destructiveHint).map((t) => t.name)).toEqual(['delete_api_test']);
      await client.close();
    },
  );

  it('SDK 1.x (legacy) lists the same tools and reads structured output', async () => {
    const client = await connect1(ADMIN);
    expect(client.getServerVersion()?.name).toBe('mcp-fleet');
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(MONITOR_TOOLS.length);
    const summary = (await client.callTool({ name: 'get_fleet_summary', arguments: {} })) as ToolResult;
    expect(summary.isError).toBeFalsy();
    expect(summary.structuredContent).toBeTypeOf('object');
    const detection = (await client.callTool({
      name: 'detect_mcp_protocol',
      arguments: { mcpUrl: sim.target('modern').url },
    })) as ToolResult;
    expect(detection.structuredContent).toMatchObject({ outcome: 'DETECTED', newestSupported: '2026-07-28' });
    await client.close();
  });

  it('a read token sees the read-only tools only, and cannot call the others', async () => {
    for (const era of ['2026-07-28', '2025-11-25'] as const) {
      const client = await connect2(era, READ);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(READ_ONLY_TOOLS);
      // Not listed, so not there: the call is a protocol error, and nothing is created.
      await expect(
        client.callTool({
          name: 'create_api_test',
          arguments: { type: 'MCP', name: 'x', mcpUrl: sim.target('modern').url },
        }),
      ).rejects.toThrow(/create_api_test not found/);
      await client.close();
    }
    const v1 = await connect1(READ);
    expect((await v1.listTools()).tools.map((t) => t.name).sort()).toEqual(READ_ONLY_TOOLS);
    await v1.close();
  });

  it('GET /api/whoami names the scope a token carries (what `mcp-fleet mcp` lists tools by)', async () => {
    const whoami = (token?: string) =>
      fetch(`${control.url}/api/whoami`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    expect(await (await whoami(ADMIN)).json()).toEqual({ scope: 'admin', authEnabled: true });
    expect(await (await whoami(READ)).json()).toEqual({ scope: 'read', authEnabled: true });
    expect((await whoami()).status).toBe(401);
    expect((await whoami('nope-0123456789abcdef0123456789')).status).toBe(401);
  });

  it('no token or a wrong one is refused before any MCP is spoken', async () => {
    const none = await fetch(`${control.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    await expect(connect2('2026-07-28', 'wrong-token-0123456789abcdef0123')).rejects.toThrow();
  });
});

describe('each tool against fleet-sim', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect2('2026-07-28', ADMIN);
  });
  afterAll(() => client?.close());
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;

  it('detect_mcp_protocol answers the detection object', async () => {
    const r = await call('detect_mcp_protocol', { mcpUrl: sim.target('sessions-2025-11-25').url });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ outcome: 'DETECTED', newestSupported: '2025-11-25' });
    const revisions = r.structuredContent!.revisions as { revision: string; supported: boolean; sentence: string }[];
    expect(revisions).toHaveLength(5);
    expect(revisions.find((x) => x.revision === '2026-07-28')?.supported).toBe(false);
  });

  it('detect_mcp_protocol obeys the target policy: an address outside it is refused, not probed', async () => {
    const r = await call('detect_mcp_protocol', { mcpUrl: 'http://10.0.0.1:9/mcp' });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/polic|not allowed|refus/i);
  });

  it('create_api_test, pinned: runs first and is refused with the reason when it fails', async () => {
    const refused = await call('create_api_test', {
      type: 'MCP',
      name: 'orders',
      mcpUrl: sim.target('sessions-2025-11-25').url,
      mcpTier: 'HANDSHAKE',
      mcpProtocolRevision: '2026-07-28',
    });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('did not pass');
    const listed = await call('list_servers', {});
    expect((listed.structuredContent!.servers as { name: string }[]).map((s) => s.name)).not.toContain('orders');
  });

  let pinnedId = '';
  it('create_api_test: a pin that passes, then a second test on the same server, and a conformance test', async () => {
    const url = sim.target('sessions-2025-11-25').url;
    const first = await call('create_api_test', {
      type: 'MCP',
      name: 'orders',
      mcpUrl: url,
      mcpTier: 'HANDSHAKE',
      mcpProtocolRevision: '2025-11-25',
      interval: '5m',
    });
    expect(first.isError, text(first)).toBeFalsy();
    expect(first.structuredContent).toMatchObject({
      createdServer: true,
      test: { serverName: 'orders', mcpUrl: url, mcpTier: 'HANDSHAKE', mcpProtocolRevision: '2025-11-25' },
    });
    pinnedId = (first.structuredContent!.test as { id: string }).id;

    const newest = await call('create_api_test', { type: 'MCP', name: 'orders', mcpUrl: url });
    expect(newest.structuredContent).toMatchObject({
      createdServer: false,
      test: { mcpProtocolRevision: 'NEWEST_SUPPORTED', mcpTier: 'HANDSHAKE' },
    });
    const other = await call('create_api_test', { type: 'MCP', name: 'orders', mcpUrl: sim.target('modern').url });
    expect(other.isError).toBe(true);
    expect(text(other)).toContain('already watches');

    const conformance = await call('create_api_test', {
      type: 'MCP',
      name: 'modern',
      mcpUrl: sim.target('modern').url,
      mcpTier: 'CONFORMANCE',
    });
    expect(conformance.structuredContent).toMatchObject({ test: { mcpTier: 'CONFORMANCE' } });
  });

  it('list_servers filters; get_server reads one by name or id', async () => {
    const all = await call('list_servers', {});
    expect(all.structuredContent!.total).toBe(2);
    const page = await call('list_servers', { limit: 1, offset: 1 });
    expect(page.structuredContent).toMatchObject({ total: 2, offset: 1 });
    expect((page.structuredContent!.servers as { name: string }[]).map((s) => s.name)).toEqual(['orders']);
    expect((await call('list_servers', { limit: 0 })).isError).toBe(true);
    const found = await call('list_servers', { filter: { search: 'ORD' } });
    expect((found.structuredContent!.servers as { name: string }[]).map((s) => s.name)).toEqual(['orders']);
    const byName = await call('get_server', { name: 'orders' });
    expect(byName.isError, text(byName)).toBeFalsy();
    const server = byName.structuredContent!.server as { id: string; tests: unknown[] };
    expect(server.tests).toHaveLength(2);
    const byId = await call('get_server', { id: server.id });
    expect((byId.structuredContent!.server as { name: string }).name).toBe('orders');
    expect((await call('get_server', { name: 'nobody' })).isError).toBe(true);
    expect((await call('get_server', {})).isError).toBe(true);
  });

  it('update_api_test: an interval in place; another revision replaces the test after its first run passes', async () => {
    const interval = await call('update_api_test', { id: pinnedId, interval: '10m' });
    expect(interval.structuredContent).toMatchObject({ replaced: null, test: { id: pinnedId, intervalMs: 600_000 } });

    const refused = await call('update_api_test', { id: pinnedId, mcpProtocolRevision: '2026-07-28' });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('did not pass');

    const moved = await call('update_api_test', { id: pinnedId, mcpProtocolRevision: '2025-06-18' });
    expect(moved.isError, text(moved)).toBeFalsy();
    expect(moved.structuredContent).toMatchObject({ replaced: pinnedId, test: { mcpProtocolRevision: '2025-06-18' } });
    pinnedId = (moved.structuredContent!.test as { id: string }).id;
  });

  it('list_era_moves and get_fleet_summary answer structured', async () => {
    const moves = await call('list_era_moves', { range: '7d', kind: 'downgrade' });
    expect(moves.isError, text(moves)).toBeFalsy();
    expect(Array.isArray(moves.structuredContent!.moves)).toBe(true);
    expect((await call('list_era_moves', { range: '2y' })).isError).toBe(true);
    const summary = await call('get_fleet_summary', { range: '24h' });
    expect(summary.isError, text(summary)).toBeFalsy();
  });

  it('run_check runs a conformance check on the modern server', async () => {
    const r = await call('run_check', { mcpUrl: sim.target('modern').url, protocol: '2026-07-28' });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ pass: true, protocol: { negotiated: '2026-07-28' } });
  });

  it('delete_api_test stops a test, and retires the server with its last one', async () => {
    const { server } = (await call('get_server', { name: 'orders' })).structuredContent as {
      server: { tests: { id: string }[] };
    };
    const [a, b] = server.tests;
    const first = await call('delete_api_test', { id: a!.id });
    expect(first.structuredContent).toEqual({ deleted: a!.id, serverRetired: false });
    const last = await call('delete_api_test', { id: b!.id });
    expect(last.structuredContent).toEqual({ deleted: b!.id, serverRetired: true });
    expect((await call('delete_api_test', { id: b!.id })).isError).toBe(true);
  });
});

describe('resources and the prompt', () => {
  it('lists and reads the fleet summary and a server page, and walks through a server', async () => {
    const client = await connect2('2025-11-25', READ);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain('mcp-fleet://fleet/summary');
    const page = resources.find((r) => r.name === 'modern');
    expect(page?.uri).toMatch(/^mcp-fleet:\/\/servers\/[0-9a-f-]{36}$/);
    const read = await client.readResource({ uri: page!.uri });
    const body = JSON.parse((read.contents[0] as { text: string }).text);
    expect(body.server.name).toBe('modern');
    expect(body).toHaveProperty('runs');
    const summary = await client.readResource({ uri: 'mcp-fleet://fleet/summary' });
    expect(JSON.parse((summary.contents[0] as { text: string }).text)).toBeTypeOf('object');

    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['investigate_era_move']);
    const prompt = await client.getPrompt({ name: 'investigate_era_move', arguments: { server: 'modern' } });
    const said = (prompt.messages[0]!.content as { text: string }).text;
    expect(said).toContain('"modern"');
    expect(said).toContain('detect_mcp_protocol');
    await client.close();
  });
});

describe('limits and the rules of the API', () => {
  it('rate limits the detection tools per caller', async () => {
    const limited = await fixture.start({ mcpDetectionLimits: { burst: 2, perMinute: 1 } });
    try {
      const client = await connect2('2026-07-28', ADMIN, `${limited.url}/mcp`);
      const detect = () =>
        client.callTool({
          name: 'detect_mcp_protocol',
          arguments: { mcpUrl: sim.target('modern').url },
        }) as Promise<ToolResult>;
      const before = sim.requests('modern').length;
      expect((await detect()).isError).toBeFalsy();
      expect((await detect()).isError).toBeFalsy();
      const third = await detect();
      expect(third.isError).toBe(true);
      expect(text(third)).toMatch(/rate limited.*try again in \d+ s/);
      const sent = sim.requests('modern').length - before;
      // The refused one sent nothing; the read tools stay open.
      expect((await detect()).isError).toBe(true);
      expect(sim.requests('modern').length - before).toBe(sent);
      expect((await client.callTool({ name: 'list_servers', arguments: {} })).isError).toBeFalsy();
      await client.close();
      const metrics = await (await fetch(`${limited.url}/metrics`)).text();
      expect(metrics).toContain('mcp_fleet_tool_calls_total{tool="detect_mcp_protocol",outcome="ok"} 2');
      expect(metrics).toContain('mcp_fleet_tool_calls_total{tool="detect_mcp_protocol",outcome="rate_limited"} 2');
      expect(metrics).toContain('mcp_fleet_tool_calls_total{tool="list_servers",outcome="ok"} 1');
    } finally {
      await limited.stop();
    }
  });

  it('legacy sessions: refused before initialize, and a session id is no use to another token', async () => {
    const post = (token: string, body: unknown, session?: string) =>
      fetch(`${control.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
        },
        body: JSON.stringify(body),
      });
    const early = await post(ADMIN, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    expect(early.status).toBe(400);
    expect(await early.text()).toContain('not initialized');

    const init = await post(ADMIN, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    });
    const session = init.headers.get('mcp-session-id');
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    await init.text();
    const stolen = await post(READ, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, session!);
    expect(stolen.status).toBe(404);
    const own = await post(ADMIN, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, session!);
    expect(own.status).toBe(200);
    expect(await own.text()).toContain('create_api_test');
  });

  it("refuses another site's page and a rebound Host, as the REST API does", async () => {
    const init = (headers: Record<string, string>) => ({
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${ADMIN}`,
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    const crossSite = await fetch(
      `${control.url}/mcp`,
      init({ origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }),
    );
    expect(crossSite.status).toBe(403);

    // Auth off (one machine): only Host names that cannot be rebound are served.
    const open = await fixture.start({ auth: undefined });
    try {
      const { request } = await import('node:http');
      const status = await new Promise<number>((resolve, reject) => {
        const u = new URL(`${open.url}/mcp`);
        const req = request(
          {
            host: u.hostname,
            port: u.port,
            path: '/mcp',
            method: 'POST',
            headers: { host: 'rebound.example', 'content-type': 'application/json' },
          },
          (res) => resolve(res.statusCode ?? 0),
        );
        req.on('error', reject);
        req.end('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}');
      });
      expect(status).toBe(403);
    } finally {
      await open.stop();
    }
  });
});
