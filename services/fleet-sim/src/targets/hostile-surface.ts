// A server that opens honestly in both eras (initialize for 2025-11-25, server/discover for
// 2026-07-28) and then lists hostile surfaces, for the surface reader: hand-written, because no SDK
// would send these. On /mcp: tools that are not objects, listed twice, named with NUL and lone
// surrogates, described at 100 000 characters, with schemas nested 200 deep and `__proto__` keys, and
// a cursor that loops; resources/list with an array for a result, templates with an error, prompts
// with a string for a list, and capabilities with a 5 000-character value. On /big: an honest but
// large surface (600 tools with schemas, in pages of 100) that does not fit one snapshot.
import { listenHttp, pathOf, type RequestBody, sendJson, sendText } from '../serve';
import { loopbackUrl, type RunningTarget, type TargetContext, type TargetDefinition } from '../target';

export const HOSTILE_SURFACE_BIG_TOOLS = 600;
const BIG_PAGE = 100;

function idOf(body: RequestBody | undefined): number | string | null {
  const id = (body?.json as { id?: unknown } | undefined)?.id;
  return typeof id === 'number' || typeof id === 'string' ? id : null;
}

function paramsOf(body: RequestBody | undefined): Record<string, unknown> {
  const params = (body?.json as { params?: unknown } | undefined)?.params;
  return typeof params === 'object' && params !== null ? (params as Record<string, unknown>) : {};
}

function opening(method: string, capabilities: Record<string, unknown>): Record<string, unknown> {
  const serverInfo = { name: 'hostile-surface', version: '0.0.0' };
  if (method === 'server/discover') {
    return {
      supportedVersions: ['2026-07-28'],
      capabilities,
      _meta: { 'io.modelcontextprotocol/serverInfo': serverInfo },
    };
  }
  return { protocolVersion: '2025-11-25', capabilities, serverInfo };
}

function nested(depth: number): unknown {
  let schema: unknown = { type: 'string' };
  for (let i = 0; i < depth; i++) schema = { type: 'object', properties: { n: schema } };
  return schema;
}

/** The hostile answers, by method; the JSON text is written by hand where JSON.stringify would not write it. */
function hostile(method: string): { result?: unknown; error?: unknown; raw?: string } {
  switch (method) {
    case 'tools/list': {
      // `__proto__` as a JSON key: JSON.stringify of an object literal would not write it.
      const proto =
        '{"name":"proto","inputSchema":{"type":"object","__proto__":{"polluted":true},"properties":{"__proto__":{"type":"string"}}}}';
      const tools = [
        42,
        null,
        'a string',
        { name: 'dup', description: 'first', inputSchema: { type: 'object' } },
        { name: 'dup', description: 'second', inputSchema: { type: 'object' } },
        { name: 'nul\u0000name', description: 'lone \ud800 surrogate', inputSchema: { type: 'object' } },
        { name: 'x'.repeat(10_000), inputSchema: {} },
        { name: 'wordy', description: 'w'.repeat(100_000), inputSchema: { type: 'object' } },
        { name: 'deep', inputSchema: nested(200) },
        { name: 7, inputSchema: {} },
      ];
      const page = JSON.stringify({ tools, nextCursor: 'again' });
      // The same cursor every time: a reader that follows it never ends.
      return { raw: `${page.slice(0, page.indexOf('[') + 1)}${proto},${page.slice(page.indexOf('[') + 1)}` };
    }
    case 'resources/list':
      return { raw: '[]' };
    case 'resources/templates/list':
      return { error: { code: -32603, message: 'internal error' } };
    case 'prompts/list':
      return { result: { prompts: 'none today' } };
    default:
      return { error: { code: -32601, message: 'Method not found' } };
  }
}

function bigTools(params: Record<string, unknown>): unknown {
  const offset = typeof params.cursor === 'string' ? Number(params.cursor) || 0 : 0;
  const tools = [];
  for (let i = offset; i < Math.min(offset + BIG_PAGE, HOSTILE_SURFACE_BIG_TOOLS); i++) {
    const name = `tool_${String(i).padStart(4, '0')}`;
    tools.push({
      name,
      description: `Tool number ${i}: ${'does a useful thing with its arguments. '.repeat(3)}`,
      inputSchema: {
        type: 'object',
        properties: {
          id: { type: 'string', description: 'The id of the thing.' },
          count: { type: 'integer', minimum: 1, maximum: 100 },
          mode: { type: 'string', enum: ['fast', 'safe', 'thorough'] },
        },
        required: ['id'],
      },
      annotations: { readOnlyHint: i % 2 === 0 },
    });
  }
  const next = offset + BIG_PAGE;
  return { tools, ...(next < HOSTILE_SURFACE_BIG_TOOLS ? { nextCursor: String(next) } : {}) };
}

async function start({ name, port, log }: TargetContext): Promise<RunningTarget> {
  const listener = await listenHttp(name, port, log, async (req, res, body) => {
    const path = pathOf(req);
    if (path !== '/mcp' && path !== '/big') return sendText(res, 404, 'text/plain', 'Not Found');
    if (req.method === 'DELETE') return sendText(res, 405, 'text/plain', 'Method Not Allowed');
    if (req.method !== 'POST') return sendText(res, 405, 'text/plain', 'Method Not Allowed', { allow: 'POST' });
    const method = (body?.json as { method?: unknown } | undefined)?.method;
    if (typeof method !== 'string')
      return sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    if (method.startsWith('notifications/')) return sendText(res, 202, 'text/plain', '');
    const id = idOf(body);
    const headers = { 'mcp-protocol-version': method === 'server/discover' ? '2026-07-28' : '2025-11-25' };
    if (method === 'initialize' || method === 'server/discover') {
      const capabilities =
        path === '/big'
          ? { tools: {} }
          : { tools: { listChanged: true }, resources: {}, prompts: {}, huge: { text: 'h'.repeat(5000) } };
      return sendJson(res, 200, { jsonrpc: '2.0', id, result: opening(method, capabilities) }, headers);
    }
    if (path === '/big') {
      if (method === 'tools/list') return sendJson(res, 200, { jsonrpc: '2.0', id, result: bigTools(paramsOf(body)) });
      return sendJson(res, 200, { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
    }
    const answer = hostile(method);
    if (answer.raw !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${answer.raw}}`);
    }
    return sendJson(res, 200, { jsonrpc: '2.0', id, ...answer });
  });
  return {
    url: loopbackUrl(listener.port, '/mcp'),
    supports: () => ['2025-11-25', '2026-07-28'],
    close: () => listener.close(),
  };
}

export const hostileSurface: TargetDefinition = {
  name: 'hostile-surface',
  kind: 'odd',
  description:
    'Opens honestly in both eras, then lists hostile surfaces (duplicates, NUL, 100k descriptions, deep schemas, a looping cursor); /big lists 600 tools',
  start,
};
