// The conformance defect targets on the wire: for each, raw requests to 127.0.0.1 show its one
// defect (and, where it helps, the clean SDK baseline behind it answering correctly), and the
// table covers every check of probe's CONFORMANCE_CHECKS.
import { Agent, request } from 'node:http';
import { CONFORMANCE_CHECKS } from '@mcp-fleet/probe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CATALOGUE_PAGE_SIZE,
  CATALOGUE_RESOURCE_URI,
  CATALOGUE_TOOL_NAMES,
  CONFORMANCE_DEFECTS,
  DEFECT_TARGET_NAMES,
  defectTargetName,
  type Sim,
  startSim,
  TARGET_NAMES,
} from '../src/index';

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field and checked by expect.
type Json = Record<string, any>;
interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The JSON-RPC message (JSON body or first SSE data line); undefined when there is none. */
  message: Json | undefined;
}

const BASE_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'fleet-sim-test', version: '0.0.0' },
};

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers: { ...BASE_HEADERS, ...headers }, body });
  const text = await response.text();
  let message: Json | undefined;
  try {
    const data = response.headers.get('content-type')?.includes('text/event-stream')
      ? text
          .split('\n')
          .find((line) => line.startsWith('data:'))
          ?.slice(5)
      : text;
    message = data === undefined || data === '' ? undefined : JSON.parse(data);
  } catch {
    message = undefined;
  }
  return { status: response.status, headers: response.headers, text, message };
}

let nextId = 1;
/** A 2026-07-28 request: the headers and _meta a modern client sends. */
function modern(url: string, method: string, params: Json = {}, extra: Record<string, string> = {}): Promise<Answer> {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  const headers = {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
    ...extra,
  };
  const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: META } });
  return post(url, body, headers);
}

/** Opens a legacy session (initialize + initialized) and returns a function sending requests in it. */
async function legacySession(url: string) {
  const init = await post(
    url,
    JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fleet-sim-test', version: '0' } },
    }),
  );
  const sessionId = init.headers.get('mcp-session-id');
  if (sessionId === null) throw new Error(`no session from ${url}: ${init.status} ${init.text}`);
  const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
  await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  return {
    init,
    request: (method: string, params: Json = {}) =>
      post(url, JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }), headers),
    raw: (body: string) => post(url, body, headers),
  };
}

/** tools/list over the connection `agent` keeps open. */
function toolNamesOver(agent: Agent, url: string): Promise<string[]> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } });
  const headers = { ...BASE_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve(JSON.parse(text).result.tools.map((tool: Json) => tool.name)));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const NO_SUCH_RESOURCE = 'mcp-fleet://conformance/no-such-resource';
const NO_SUCH_TOOL = 'mcp_fleet_no_such_tool';

describe('conformance defect targets', () => {
  let sim: Sim;
  const url = (name: string) => sim.target(name).url;
  const defect = (check: string) => url(defectTargetName(check as never));
  beforeAll(async () => {
    sim = await startSim({
      only: ['sessions-2025-03-26', 'modern', 'catalogue', 'catalogue-legacy', ...DEFECT_TARGET_NAMES],
    });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('covers every check of CONFORMANCE_CHECKS with a fleet target', () => {
    const covered = new Set(CONFORMANCE_DEFECTS.map((row) => row.check));
    // The stdio transport's own rules have hostile stdio servers instead (src/stdio.ts).
    const http = CONFORMANCE_CHECKS.filter((c) => !('stdio' in c));
    for (const check of http) expect(covered, check.id).toContain(check.id);
    for (const row of CONFORMANCE_DEFECTS) {
      expect(TARGET_NAMES).toContain(row.target);
      expect(row.defect).not.toMatch(/\n/);
    }
    for (const check of http) expect(DEFECT_TARGET_NAMES).toContain(`defect-${check.id}`);
  });

  it('keeps the defect targets together after the baselines; later targets are appended (earlier ones keep their ports)', () => {
    const first = TARGET_NAMES.indexOf(DEFECT_TARGET_NAMES[0]!);
    expect(TARGET_NAMES.slice(first, first + DEFECT_TARGET_NAMES.length)).toEqual(DEFECT_TARGET_NAMES);
    expect(TARGET_NAMES.indexOf('catalogue')).toBeLessThan(first);
    // Targets added since the defects (issue 16's surfaces, issue 17's server between generations) come after them, so no defect's port moved.
    expect(TARGET_NAMES.slice(first + DEFECT_TARGET_NAMES.length)).toEqual([
      'dual-era-diff',
      'hostile-surface',
      'surface-drifter',
      'between-generations',
      'geo',
    ]);
  });

  it('the proxy passes event streams (GET) and session ends (DELETE) through to the SDK server', async () => {
    const target = defect('ping_succeeds');
    const session = await legacySession(target);
    const sessionId = session.init.headers.get('mcp-session-id')!;
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    const hangUp = new AbortController();
    const stream = await fetch(target, { headers: { ...headers, accept: 'text/event-stream' }, signal: hangUp.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    hangUp.abort();
    const end = await fetch(target, { method: 'DELETE', headers });
    expect(end.status).toBe(200);
    // The session is gone behind the proxy: a request in it gets the 404 of an unknown session.
    expect((await session.request('tools/list')).status).toBe(404);
  });

  describe('the clean catalogue', () => {
    it('pages tools/list, every page private with cache hints, resultType and serverInfo', async () => {
      const names: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const { status, message } = await modern(url('catalogue'), 'tools/list', cursor ? { cursor } : {});
        expect(status).toBe(200);
        const result = message?.result;
        expect(result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
        expect(result._meta['io.modelcontextprotocol/serverInfo']).toEqual({ name: 'catalogue', version: '2.4.0' });
        expect(result.tools.length).toBeLessThanOrEqual(CATALOGUE_PAGE_SIZE);
        names.push(...result.tools.map((tool: Json) => tool.name));
        cursor = result.nextCursor;
        pages += 1;
      } while (cursor !== undefined && pages < 10);
      expect(pages).toBeGreaterThanOrEqual(2);
      expect(names).toEqual(CATALOGUE_TOOL_NAMES);
    });

    it('declares tools, resources and prompts and serves each', async () => {
      const discover = await modern(url('catalogue'), 'server/discover');
      expect(discover.message?.result.capabilities).toEqual({
        tools: { listChanged: true },
        resources: { listChanged: true },
        prompts: { listChanged: true },
      });
      const read = await modern(url('catalogue'), 'resources/read', { uri: CATALOGUE_RESOURCE_URI });
      expect(read.message?.result.contents[0].uri).toBe(CATALOGUE_RESOURCE_URI);
      const prompts = await modern(url('catalogue'), 'prompts/list');
      expect(prompts.message?.result.prompts.map((p: Json) => p.name)).toEqual(['summarize']);
      const call = await modern(url('catalogue'), 'tools/call', { name: 'reverse', arguments: { text: 'abc' } });
      expect(call.message?.result.content).toEqual([{ type: 'text', text: 'cba' }]);
    });

    it('refuses a cursor it did not hand out with -32602', async () => {
      const { message } = await modern(url('catalogue'), 'tools/list', { cursor: 'tools:999' });
      expect(message?.error.code).toBe(-32602);
    });

    it('catalogue-legacy declares all three capabilities in a session', async () => {
      const { init } = await legacySession(url('catalogue-legacy'));
      expect(init.message?.result.capabilities).toMatchObject({ tools: {}, resources: {}, prompts: {} });
      expect(init.message?.result.serverInfo).toEqual({ name: 'catalogue-legacy', version: '1.32.2' });
    });
  });

  it('the low-level 1.x targets turn an unknown tool away instead of echoing it', async () => {
    const session = await legacySession(url('sessions-2025-03-26'));
    const { message } = await session.request('tools/call', { name: NO_SUCH_TOOL, arguments: { text: 'x' } });
    expect(message?.error.code).toBe(-32602);
    const echoed = await session.request('tools/call', { name: 'echo', arguments: { text: 'x' } });
    expect(echoed.message?.result).toEqual({ content: [{ type: 'text', text: 'x' }] });
  });

  // Where the official SDKs themselves break a rule: recorded, not bent (see the fleet-sim note).
  describe('what the clean SDK servers really answer', () => {
    it('SDK 1.32 answers a request without "jsonrpc" with -32700, not -32600', async () => {
      const session = await legacySession(url('catalogue-legacy'));
      const { message } = await session.raw(JSON.stringify({ id: 7, method: 'tools/list' }));
      expect(message?.error.code).toBe(-32700);
    });

    it('SDK 1.32 answers tools/call without a name with -32603, not -32602', async () => {
      const session = await legacySession(url('catalogue-legacy'));
      const { message } = await session.request('tools/call', { arguments: {} });
      expect(message?.error.code).toBe(-32603);
    });

    it('SDK 2.4 serves a 2025 request before initialize (stateless legacy) with a result', async () => {
      const { message } = await post(
        url('catalogue'),
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
        { 'mcp-protocol-version': '2025-11-25' },
      );
      expect(message?.result.tools).toBeInstanceOf(Array);
    });
  });

  describe('legacy defects (SDK 1.32 sessions)', () => {
    it('server_info_present: initialize has no serverInfo', async () => {
      const { init } = await legacySession(defect('server_info_present'));
      expect(init.message?.result.protocolVersion).toBe('2025-11-25');
      expect(init.message?.result).not.toHaveProperty('serverInfo');
    });

    it('list_tools_succeeds: tools declared, tools/list an error', async () => {
      const session = await legacySession(defect('list_tools_succeeds'));
      expect(session.init.message?.result.capabilities.tools).toBeDefined();
      const { message } = await session.request('tools/list');
      expect(message?.error.code).toBe(-32603);
    });

    it('invalid_tool_returns_error: an unknown tool gets a plain result', async () => {
      const session = await legacySession(defect('invalid_tool_returns_error'));
      const { message } = await session.request('tools/call', { name: NO_SUCH_TOOL, arguments: {} });
      expect(message?.error).toBeUndefined();
      expect(message?.result).toBeDefined();
      expect(message?.result).not.toHaveProperty('isError');
      const clean = await (await legacySession(url('catalogue-legacy'))).request('tools/call', {
        name: NO_SUCH_TOOL,
        arguments: {},
      });
      expect(clean.message?.result.isError).toBe(true);
    });

    it('list_resources_succeeds: resources declared with listChanged, resources/list is -32601', async () => {
      const session = await legacySession(defect('list_resources_succeeds'));
      expect(session.init.message?.result.capabilities.resources).toEqual({ listChanged: true });
      const { message } = await session.request('resources/list');
      expect(message?.error.code).toBe(-32601);
    });

    it('list_prompts_succeeds: prompts/list has no prompts array', async () => {
      const session = await legacySession(defect('list_prompts_succeeds'));
      expect(session.init.message?.result.capabilities.prompts).toBeDefined();
      const { message } = await session.request('prompts/list');
      expect(message?.result).toBeDefined();
      expect(message?.result).not.toHaveProperty('prompts');
    });

    it('ping_succeeds: ping is an error', async () => {
      const { message } = await (await legacySession(defect('ping_succeeds'))).request('ping');
      expect(message?.error.code).toBe(-32603);
    });

    it('request_before_initialize_rejected: a session-less tools/list gets a result, with no session id', async () => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} });
      const headers = { 'mcp-protocol-version': '2025-11-25' };
      const answer = await post(defect('request_before_initialize_rejected'), body, headers);
      expect(answer.status).toBe(200);
      expect(answer.message?.result.tools.map((t: Json) => t.name)).toEqual(['echo']);
      expect(answer.headers.get('mcp-session-id')).toBeNull();
      // The SDK server behind it refuses the same request.
      const clean = await post(url('catalogue-legacy'), body, headers);
      expect(clean.status).toBe(400);
      expect(clean.message?.error).toBeDefined();
    });

    it('method_not_found: an unknown method is -32603', async () => {
      const { message } = await (await legacySession(defect('method_not_found'))).request('mcp_fleet/no_such_method');
      expect(message?.error.code).toBe(-32603);
    });

    it('notification_with_id_answered: a notification with an id gets a bodiless 202', async () => {
      const session = await legacySession(defect('notification_with_id_answered'));
      const answer = await session.raw(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'notifications/initialized' }));
      expect(answer.status).toBe(202);
      expect(answer.text).toBe('');
      // The session still works for a real request.
      expect((await session.request('tools/list')).message?.result.tools).toBeInstanceOf(Array);
    });
  });

  describe('2026-07-28 defects (SDK 2.4)', () => {
    it('discover_succeeds: supportedVersions lacks 2026-07-28', async () => {
      const { message } = await modern(defect('discover_succeeds'), 'server/discover');
      expect(message?.result.supportedVersions).not.toContain('2026-07-28');
    });

    it('discover_server_info: discover has no serverInfo, other results do', async () => {
      const discover = await modern(defect('discover_server_info'), 'server/discover');
      expect(discover.message?.result._meta).not.toHaveProperty(['io.modelcontextprotocol/serverInfo']);
      const list = await modern(defect('discover_server_info'), 'tools/list');
      expect(list.message?.result._meta).toHaveProperty(['io.modelcontextprotocol/serverInfo']);
    });

    it('result_type_present: tools/list has no resultType', async () => {
      const { message } = await modern(defect('result_type_present'), 'tools/list');
      expect(message?.result.tools).toBeInstanceOf(Array);
      expect(message?.result).not.toHaveProperty('resultType');
    });

    it('cache_hints_present: resources/list has no ttlMs or cacheScope', async () => {
      const { message } = await modern(defect('cache_hints_present'), 'resources/list');
      expect(message?.result.resources).toBeInstanceOf(Array);
      expect(message?.result).not.toHaveProperty('ttlMs');
      expect(message?.result).not.toHaveProperty('cacheScope');
    });

    it('result_server_info: tools/list has no serverInfo, discover does', async () => {
      const list = await modern(defect('result_server_info'), 'tools/list');
      expect(list.message?.result._meta ?? {}).not.toHaveProperty(['io.modelcontextprotocol/serverInfo']);
      const discover = await modern(defect('result_server_info'), 'server/discover');
      expect(discover.message?.result._meta).toHaveProperty(['io.modelcontextprotocol/serverInfo']);
    });

    it('tools_list_deterministic: two tools/list calls give different orders', async () => {
      const names = async () =>
        (await modern(defect('tools_list_deterministic'), 'tools/list')).message?.result.tools.map((t: Json) => t.name);
      const first = await names();
      const second = await names();
      expect(second).not.toEqual(first);
      expect([...second].sort()).toEqual([...first].sort());
    });

    it('tools_list_stable_across_connections: a new TCP connection sees another tool set', async () => {
      // fetch's pool picks connections itself; one keep-alive Agent with one socket each pins them.
      const target = defect('tools_list_stable_across_connections');
      const one = new Agent({ keepAlive: true, maxSockets: 1 });
      const two = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const a = await toolNamesOver(one, target);
        const again = await toolNamesOver(one, target);
        const b = await toolNamesOver(two, target);
        expect(again).toEqual(a);
        expect(new Set(b)).not.toEqual(new Set(a));
      } finally {
        one.destroy();
        two.destroy();
      }
    });

    it('cache_scope_consistent_across_pages: page 2 says public, page 1 private', async () => {
      const first = await modern(defect('cache_scope_consistent_across_pages'), 'tools/list');
      expect(first.message?.result.cacheScope).toBe('private');
      const cursor = first.message?.result.nextCursor;
      expect(cursor).toBeTypeOf('string');
      const second = await modern(defect('cache_scope_consistent_across_pages'), 'tools/list', { cursor });
      expect(second.message?.result.cacheScope).toBe('public');
    });

    it('resource_not_found_error: a missing resource is -32002 (clean: -32602)', async () => {
      const { message } = await modern(defect('resource_not_found_error'), 'resources/read', { uri: NO_SUCH_RESOURCE });
      expect(message?.error.code).toBe(-32002);
      const clean = await modern(url('catalogue'), 'resources/read', { uri: NO_SUCH_RESOURCE });
      expect(clean.message?.error.code).toBe(-32602);
    });

    it('unknown_tool_protocol_error: an unknown tool is a result with isError (clean: -32602)', async () => {
      const params = { name: NO_SUCH_TOOL, arguments: {} };
      const { message } = await modern(defect('unknown_tool_protocol_error'), 'tools/call', params);
      expect(message?.error).toBeUndefined();
      expect(message?.result.isError).toBe(true);
      const clean = await modern(url('catalogue'), 'tools/call', params);
      expect(clean.message?.error.code).toBe(-32602);
    });

    it('unsupported_version_rejected: version 2099-01-01 gets a result (clean: 400 -32022)', async () => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      });
      const headers = { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' };
      const answer = await post(defect('unsupported_version_rejected'), body, headers);
      expect(answer.status).toBe(200);
      expect(answer.message?.result.tools).toBeInstanceOf(Array);
      const clean = await post(url('catalogue'), body, headers);
      expect(clean.status).toBe(400);
      expect(clean.message?.error.code).toBe(-32022);
    });

    it('missing_meta_rejected: _meta without clientCapabilities gets a result (clean: 400 -32602)', async () => {
      const { 'io.modelcontextprotocol/clientCapabilities': _, ...meta } = META;
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } });
      const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
      const answer = await post(defect('missing_meta_rejected'), body, headers);
      expect(answer.status).toBe(200);
      expect(answer.message?.result.tools).toBeInstanceOf(Array);
      const clean = await post(url('catalogue'), body, headers);
      expect(clean.status).toBe(400);
      expect(clean.message?.error.code).toBe(-32602);
    });

    it('header_mismatch_rejected: Mcp-Method prompts/list on a tools/list body is served (clean: 400 -32020)', async () => {
      const answer = await modern(
        defect('header_mismatch_rejected'),
        'tools/list',
        {},
        { 'mcp-method': 'prompts/list' },
      );
      expect(answer.status).toBe(200);
      expect(answer.message?.result.tools).toBeInstanceOf(Array);
      const clean = await modern(url('catalogue'), 'tools/list', {}, { 'mcp-method': 'prompts/list' });
      expect(clean.status).toBe(400);
      expect(clean.message?.error.code).toBe(-32020);
    });

    it('unknown_method_not_found: an unknown method is -32601 with HTTP 200 (clean: 404)', async () => {
      const answer = await modern(defect('unknown_method_not_found'), 'mcp_fleet/no_such_method');
      expect(answer.status).toBe(200);
      expect(answer.message?.error.code).toBe(-32601);
      const clean = await modern(url('catalogue'), 'mcp_fleet/no_such_method');
      expect(clean.status).toBe(404);
    });

    it('no_session_id: answers carry a minted Mcp-Session-Id (clean: none)', async () => {
      const answer = await modern(defect('no_session_id'), 'server/discover');
      expect(answer.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
      const clean = await modern(url('catalogue'), 'server/discover');
      expect(clean.headers.get('mcp-session-id')).toBeNull();
    });

    it('reserved_error_codes: an unknown tool gets the undefined code -32050', async () => {
      const { message } = await modern(defect('reserved_error_codes'), 'tools/call', {
        name: NO_SUCH_TOOL,
        arguments: {},
      });
      expect(message?.error.code).toBe(-32050);
    });
  });

  describe('both-era defects', () => {
    it('undeclared_capability_not_found: resources and prompts undeclared, their lists empty (clean modern: 404 -32601)', async () => {
      const discover = await modern(defect('undeclared_capability_not_found'), 'server/discover');
      expect(discover.message?.result.capabilities).toEqual({ tools: { listChanged: true } });
      const answer = await modern(defect('undeclared_capability_not_found'), 'prompts/list');
      expect(answer.message?.result).toMatchObject({ prompts: [], resultType: 'complete' });
      expect(answer.message?.result).not.toHaveProperty('tools');
      const resources = await modern(defect('undeclared_capability_not_found'), 'resources/list');
      expect(resources.message?.result).toMatchObject({ resources: [], resultType: 'complete' });
      const clean = await modern(url('modern'), 'prompts/list');
      expect(clean.status).toBe(404);
      expect(clean.message?.error.code).toBe(-32601);
    });

    it('list_changed_consistent: tools.listChanged is the string "yes", on discover and initialize', async () => {
      const discover = await modern(defect('list_changed_consistent'), 'server/discover');
      expect(discover.message?.result.capabilities.tools.listChanged).toBe('yes');
      const init = await post(
        defect('list_changed_consistent'),
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
        }),
      );
      expect(init.message?.result.capabilities.tools.listChanged).toBe('yes');
    });

    it('malformed_json_parse_error: malformed JSON gets 500 HTML (clean: -32700)', async () => {
      const body = '{"jsonrpc":"2.0","id":1,"method":';
      const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
      const answer = await post(defect('malformed_json_parse_error'), body, headers);
      expect(answer.status).toBe(500);
      expect(answer.headers.get('content-type')).toBe('text/html');
      const clean = await post(url('catalogue'), body, headers);
      expect(clean.message?.error.code).toBe(-32700);
    });

    it('missing_jsonrpc_invalid_request: a request without jsonrpc is served (clean: -32600)', async () => {
      const body = JSON.stringify({ id: 5, method: 'tools/list', params: { _meta: META } });
      const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
      const answer = await post(defect('missing_jsonrpc_invalid_request'), body, headers);
      expect(answer.message?.result.tools).toBeInstanceOf(Array);
      const clean = await post(url('catalogue'), body, headers);
      expect(clean.message?.error.code).toBe(-32600);
    });

    it('invalid_params_error: tools/call without a name is -32603 (clean: -32602)', async () => {
      const { message } = await modern(defect('invalid_params_error'), 'tools/call', { arguments: {} });
      expect(message?.error.code).toBe(-32603);
      const clean = await modern(url('catalogue'), 'tools/call', { arguments: {} });
      expect(clean.message?.error.code).toBe(-32602);
    });

    it('server_alive_after_bad_input: after malformed JSON a valid request gets 503', async () => {
      const target = defect('server_alive_after_bad_input');
      expect((await modern(target, 'server/discover')).status).toBe(200);
      await post(target, '{"jsonrpc":', { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
      const after = await modern(target, 'server/discover');
      expect(after.status).toBe(503);
      expect(after.headers.get('retry-after')).toBeTruthy();
    });
  });
});
