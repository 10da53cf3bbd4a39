// The conformance defect targets: for every check of probe's table, a real SDK server with one
// deliberate defect in front of it (proxy.ts), so each check is proven able to fail. Legacy checks
// stand in front of `catalogue-legacy` (SDK 1.32, sessions), 2026-07-28 checks in front of
// `catalogue` (SDK 2.4); the both-era checks use either. Only POSTs are rewritten.
import { randomUUID } from 'node:crypto';
import type { CheckId } from '@mcp-fleet/probe';
import { SDK_VERSIONS } from '../sdk-versions';
import type { RunningTarget, TargetContext, TargetDefinition } from '../target';
import { startCatalogue } from '../targets/catalogue';
import { startCatalogueLegacy } from '../targets/catalogue-legacy';
import { modern } from '../targets/modern';
import { errorOf, isObject, type JsonObject, methodOf, resultOf, rewriteMessages } from './messages';
import { type Defect, type Exchange, forwardHeaders, type Reply, startDefective } from './proxy';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
const PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
/** What the SDKs on either side of the proxy know; any other MCP-Protocol-Version is an unknown one. */
const KNOWN_VERSIONS = new Set(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28']);
/** How long the server_alive_after_bad_input defect keeps answering 503 after bad input. */
export const UNAVAILABLE_AFTER_BAD_INPUT_MS = 5_000;

interface DefectSpec {
  check: CheckId;
  /** Further checks this one defect also fails (each gets its own row in CONFORMANCE_DEFECTS). */
  alsoFails?: CheckId[];
  /** The SDK server behind the proxy. */
  base: (ctx: TargetContext) => Promise<RunningTarget>;
  baseName: string;
  /** One line: what is wrong. */
  defect: string;
  /** Built once per started target (named `target`), so a defect may keep state (a counter, a clock). */
  make: (target: string) => Defect;
}

/** Forwards the request; when it was `method`, `rewrite` edits each answer message in place. */
function onAnswer(method: string | ((name: string | undefined) => boolean), rewrite: (message: JsonObject) => void) {
  const matches = typeof method === 'string' ? (name: string | undefined) => name === method : method;
  return (): Defect =>
    async ({ body, forward }) => {
      const reply = await forward();
      return matches(methodOf(body.json)) ? rewriteMessages(reply, rewrite) : reply;
    };
}

/** The result's `rewrite` applied only when the answer is a result (errors pass untouched). */
function onResult(method: string | ((name: string | undefined) => boolean), rewrite: (result: JsonObject) => void) {
  return onAnswer(method, (message) => {
    const result = resultOf(message);
    if (result !== undefined) rewrite(result);
  });
}

/** Turns the answer message into a JSON-RPC error. */
function intoError(message: JsonObject, code: number, text: string): void {
  delete message.result;
  message.error = { code, message: text };
}

function metaOf(result: JsonObject): JsonObject | undefined {
  return isObject(result._meta) ? result._meta : undefined;
}

function paramsOf(json: unknown): JsonObject | undefined {
  return isObject(json) && isObject(json.params) ? json.params : undefined;
}

function header(exchange: Exchange, name: string): string | undefined {
  const value = exchange.req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const LEGACY = { base: startCatalogueLegacy, baseName: 'catalogue-legacy' };
const MODERN = { base: startCatalogue, baseName: 'catalogue' };

const SPECS: DefectSpec[] = [
  // ─── legacy (SDK 1.32 sessions) ───────────────────────────────────────────────────────────
  {
    check: 'server_info_present',
    ...LEGACY,
    defect: 'initialize result has no serverInfo',
    make: onResult('initialize', (result) => {
      delete result.serverInfo;
    }),
  },
  {
    check: 'list_tools_succeeds',
    alsoFails: ['list_changed_consistent'],
    ...LEGACY,
    defect: 'tools is declared but tools/list answers -32603 Internal error',
    make: onAnswer('tools/list', (message) => intoError(message, -32603, 'Internal error')),
  },
  {
    check: 'invalid_tool_returns_error',
    ...LEGACY,
    defect: 'tools/call of an unknown tool answers a plain result (isError dropped)',
    make: onResult('tools/call', (result) => {
      delete result.isError;
    }),
  },
  {
    check: 'list_resources_succeeds',
    alsoFails: ['list_changed_consistent'],
    ...LEGACY,
    defect: 'resources is declared (listChanged: true) but resources/list answers -32601 Method not found',
    make: onAnswer('resources/list', (message) => intoError(message, -32601, 'Method not found')),
  },
  {
    check: 'list_prompts_succeeds',
    ...LEGACY,
    defect: 'prompts is declared but the prompts/list result has no prompts array',
    make: onResult('prompts/list', (result) => {
      delete result.prompts;
    }),
  },
  {
    check: 'ping_succeeds',
    ...LEGACY,
    defect: 'ping answers -32603 Internal error',
    make: onAnswer('ping', (message) => intoError(message, -32603, 'Internal error')),
  },
  {
    check: 'request_before_initialize_rejected',
    ...LEGACY,
    defect: 'a request without a session and before initialize is served (from a session the proxy opened itself)',
    make: () => {
      // The lenient server: requests without a session id go to one hidden, initialized session.
      let hidden: Promise<string | undefined> | undefined;
      return async ({ req, body, forward }) => {
        const method = methodOf(body.json);
        if (req.headers['mcp-session-id'] !== undefined || method === 'initialize') return forward();
        hidden ??= openSession(forward).catch(() => undefined);
        const sessionId = await hidden;
        // No session to lend (the SDK refused, or evicted it): ask again next time, answer as the SDK does.
        if (sessionId === undefined) hidden = undefined;
        if (sessionId === undefined) return forward();
        const reply = await forward({ headers: { ...forwardHeaders(req.headers), 'mcp-session-id': sessionId } });
        if (reply.status === 404) hidden = undefined;
        const { 'mcp-session-id': _, ...headers } = reply.headers;
        return { ...reply, headers };
      };
    },
  },
  {
    check: 'method_not_found',
    ...LEGACY,
    defect: 'an unknown method answers -32603 Internal error instead of -32601',
    make: onAnswer(
      (name) => name !== undefined && !name.startsWith('notifications/'),
      (message) => {
        if (errorOf(message)?.code === -32601) intoError(message, -32603, 'Internal error');
      },
    ),
  },
  // ─── 2026-07-28 (SDK 2.4) ─────────────────────────────────────────────────────────────────
  {
    check: 'discover_succeeds',
    ...MODERN,
    defect: 'server/discover lists only a draft version name, not 2026-07-28',
    make: onResult('server/discover', (result) => {
      result.supportedVersions = ['DRAFT-2026-v1'];
    }),
  },
  {
    check: 'discover_server_info',
    ...MODERN,
    defect: 'server/discover result has no _meta serverInfo',
    make: onResult('server/discover', (result) => {
      delete metaOf(result)?.[SERVER_INFO];
    }),
  },
  {
    check: 'result_type_present',
    ...MODERN,
    defect: 'tools/list result has no resultType',
    make: onResult('tools/list', (result) => {
      delete result.resultType;
    }),
  },
  {
    check: 'cache_hints_present',
    ...MODERN,
    defect: 'resources/list result has no ttlMs and no cacheScope',
    make: onResult('resources/list', (result) => {
      delete result.ttlMs;
      delete result.cacheScope;
    }),
  },
  {
    check: 'result_server_info',
    ...MODERN,
    defect: 'results other than server/discover carry no _meta serverInfo',
    make: onResult(
      (name) => name !== 'server/discover',
      (result) => {
        delete metaOf(result)?.[SERVER_INFO];
      },
    ),
  },
  {
    check: 'tools_list_deterministic',
    ...MODERN,
    defect: 'each tools/list call rotates the order of the tools',
    make: () => {
      let calls = 0;
      return onResult('tools/list', (result) => {
        calls += 1;
        if (!Array.isArray(result.tools) || result.tools.length < 2) return;
        const shift = calls % result.tools.length;
        result.tools = [...result.tools.slice(shift), ...result.tools.slice(0, shift)];
      })();
    },
  },
  {
    check: 'tools_list_stable_across_connections',
    ...MODERN,
    defect: 'each TCP connection sees one more tool of its own (connection-<n>) in tools/list',
    make: () => async (exchange) => {
      const reply = await exchange.forward();
      if (methodOf(exchange.body.json) !== 'tools/list' || paramsOf(exchange.body.json)?.cursor !== undefined) {
        return reply;
      }
      return rewriteMessages(reply, (message) => {
        const result = resultOf(message);
        if (result === undefined || !Array.isArray(result.tools)) return;
        const name = `connection-${exchange.connection}`;
        result.tools = [...result.tools, { name, inputSchema: { type: 'object' } }];
      });
    },
  },
  {
    check: 'cache_scope_consistent_across_pages',
    ...MODERN,
    defect: 'tools/list pages after the first say cacheScope "public", the first "private"',
    make: () => async (exchange) => {
      const reply = await exchange.forward();
      if (methodOf(exchange.body.json) !== 'tools/list' || paramsOf(exchange.body.json)?.cursor === undefined) {
        return reply;
      }
      return rewriteMessages(reply, (message) => {
        const result = resultOf(message);
        if (result !== undefined) result.cacheScope = 'public';
      });
    },
  },
  {
    check: 'resource_not_found_error',
    alsoFails: ['reserved_error_codes'],
    ...MODERN,
    defect: 'resources/read of a missing resource answers the retired -32002 instead of -32602',
    make: onAnswer('resources/read', (message) => {
      const error = errorOf(message);
      if (error?.code === -32602) error.code = -32002;
    }),
  },
  {
    check: 'unknown_tool_protocol_error',
    ...MODERN,
    defect: 'tools/call of an unknown tool answers a result with isError instead of a JSON-RPC error',
    make: (target) =>
      onAnswer('tools/call', (message) => {
        const error = errorOf(message);
        if (error === undefined || !/not found/i.test(String(error.message))) return;
        delete message.error;
        // Dressed as the SDK dresses a tools/call result, so only the error-vs-result rule breaks.
        message.result = {
          content: [{ type: 'text', text: String(error.message) }],
          isError: true,
          resultType: 'complete',
          _meta: { [SERVER_INFO]: { name: target, version: SDK_VERSIONS['@modelcontextprotocol/server'] } },
        };
      })(),
  },
  {
    check: 'unsupported_version_rejected',
    ...MODERN,
    defect: 'an unknown MCP-Protocol-Version is served as 2026-07-28 instead of -32022',
    make: () => async (exchange) => {
      const version = header(exchange, 'mcp-protocol-version');
      if (version === undefined || KNOWN_VERSIONS.has(version)) return exchange.forward();
      const json = structuredClone(exchange.body.json);
      const meta = paramsOf(json)?._meta;
      if (isObject(meta) && PROTOCOL_VERSION in meta) meta[PROTOCOL_VERSION] = '2026-07-28';
      return exchange.forward({
        headers: { ...forwardHeaders(exchange.req.headers), 'mcp-protocol-version': '2026-07-28' },
        text: JSON.stringify(json),
      });
    },
  },
  {
    check: 'missing_meta_rejected',
    ...MODERN,
    defect: 'a request whose _meta lacks clientCapabilities is served (the proxy fills in {})',
    make: () => async (exchange) => {
      const json = structuredClone(exchange.body.json);
      const meta = paramsOf(json)?._meta;
      if (!isObject(meta) || !(PROTOCOL_VERSION in meta) || CLIENT_CAPABILITIES in meta) return exchange.forward();
      meta[CLIENT_CAPABILITIES] = {};
      return exchange.forward({ text: JSON.stringify(json) });
    },
  },
  {
    check: 'header_mismatch_rejected',
    ...MODERN,
    defect: 'an Mcp-Method header that disagrees with the body is overwritten with the body method and served',
    make: () => async (exchange) => {
      const method = methodOf(exchange.body.json);
      const named = header(exchange, 'mcp-method');
      if (method === undefined || named === undefined || named === method) return exchange.forward();
      return exchange.forward({ headers: { ...forwardHeaders(exchange.req.headers), 'mcp-method': method } });
    },
  },
  {
    check: 'unknown_method_not_found',
    ...MODERN,
    defect: 'an unknown method gets its -32601 with HTTP 200 instead of 404',
    make:
      () =>
      async ({ forward }) => {
        const reply = await forward();
        return reply.status === 404 ? { ...reply, status: 200 } : reply;
      },
  },
  {
    check: 'no_session_id',
    ...MODERN,
    defect: 'every answer carries a freshly minted Mcp-Session-Id header',
    make:
      () =>
      async ({ forward }) => {
        const reply = await forward();
        return { ...reply, headers: { ...reply.headers, 'mcp-session-id': randomUUID() } };
      },
  },
  {
    check: 'reserved_error_codes',
    ...MODERN,
    defect: 'tools/call of an unknown tool answers the undefined reserved code -32050 instead of -32602',
    make: onAnswer('tools/call', (message) => {
      const error = errorOf(message);
      if (error?.code === -32602 && /not found/i.test(String(error.message))) error.code = -32050;
    }),
  },
  // ─── both eras ────────────────────────────────────────────────────────────────────────────
  {
    check: 'undeclared_capability_not_found',
    base: modern.start,
    baseName: 'modern',
    defect:
      'resources and prompts are not declared, yet resources/list and prompts/list answer empty lists, not -32601',
    make: () => async (exchange) => {
      const method = methodOf(exchange.body.json);
      const field = method === 'resources/list' ? 'resources' : method === 'prompts/list' ? 'prompts' : undefined;
      if (field === undefined) return exchange.forward();
      // Asked as tools/list, so the result (resultType, cache hints, serverInfo) is the SDK's own.
      const json = structuredClone(exchange.body.json) as JsonObject;
      json.method = 'tools/list';
      const headers = forwardHeaders(exchange.req.headers);
      if (headers['mcp-method'] !== undefined) headers['mcp-method'] = 'tools/list';
      const reply = await exchange.forward({ headers, text: JSON.stringify(json) });
      return rewriteMessages(reply, (message) => {
        const result = resultOf(message);
        if (result === undefined) return;
        delete result.tools;
        delete result.nextCursor;
        result[field] = [];
      });
    },
  },
  {
    check: 'list_changed_consistent',
    ...MODERN,
    defect: 'capabilities.tools.listChanged is the string "yes", not a boolean',
    make: onResult(
      (name) => name === 'server/discover' || name === 'initialize',
      (result) => {
        const capabilities = isObject(result.capabilities) ? result.capabilities : undefined;
        if (isObject(capabilities?.tools)) capabilities.tools.listChanged = 'yes';
      },
    ),
  },
  {
    check: 'malformed_json_parse_error',
    ...MODERN,
    defect: 'malformed JSON gets HTTP 500 with an HTML page instead of -32700',
    make:
      () =>
      async ({ body, forward }) =>
        body.json === undefined
          ? {
              status: 500,
              headers: { 'content-type': 'text/html' },
              text: '<html><body>Internal Server Error</body></html>',
            }
          : forward(),
  },
  {
    check: 'missing_jsonrpc_invalid_request',
    ...MODERN,
    defect: 'a request without "jsonrpc" is served as if it had "jsonrpc": "2.0"',
    make:
      () =>
      async ({ body, forward }) => {
        if (!isObject(body.json) || 'jsonrpc' in body.json) return forward();
        return forward({ text: JSON.stringify({ jsonrpc: '2.0', ...body.json }) });
      },
  },
  {
    check: 'invalid_params_error',
    ...MODERN,
    defect: 'tools/call without a name answers -32603 Internal error instead of -32602',
    make:
      () =>
      async ({ body, forward }) => {
        const reply = await forward();
        if (methodOf(body.json) !== 'tools/call' || typeof paramsOf(body.json)?.name === 'string') return reply;
        return rewriteMessages(reply, (message) => {
          if (errorOf(message)?.code === -32602) intoError(message, -32603, 'Internal error');
        });
      },
  },
  {
    check: 'notification_with_id_answered',
    ...LEGACY,
    defect: 'a notification sent with an id gets HTTP 202 with no body',
    make:
      () =>
      async ({ body, forward }) => {
        const json = body.json;
        if (isObject(json) && 'id' in json && methodOf(json)?.startsWith('notifications/')) {
          return { status: 202, headers: {}, text: '' };
        }
        return forward();
      },
  },
  {
    check: 'server_alive_after_bad_input',
    ...MODERN,
    defect: `after bad input (not JSON, or no "jsonrpc") every request gets HTTP 503 for ${UNAVAILABLE_AFTER_BAD_INPUT_MS / 1000} s`,
    make: () => {
      let unavailableUntil = 0;
      return async ({ body, forward }) => {
        if (Date.now() < unavailableUntil) {
          return {
            status: 503,
            headers: { 'content-type': 'text/plain', 'retry-after': String(UNAVAILABLE_AFTER_BAD_INPUT_MS / 1000) },
            text: 'Service Unavailable',
          };
        }
        const bad = body.json === undefined || (isObject(body.json) && !('jsonrpc' in body.json));
        if (bad) unavailableUntil = Date.now() + UNAVAILABLE_AFTER_BAD_INPUT_MS;
        return forward();
      };
    },
  },
];

/** Opens (initialize + initialized) the session a lenient server hands out to session-less requests. */
async function openSession(forward: Exchange['forward']): Promise<string | undefined> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init: Reply = await forward({
    headers,
    text: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'lenient-proxy', version: '0' } },
    }),
  });
  const sessionId = init.headers['mcp-session-id'];
  if (sessionId === undefined) return undefined;
  await forward({
    headers: { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
    text: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return sessionId;
}

/** `defect-<check id>`: the target whose one defect fails that check. */
export function defectTargetName(check: CheckId): string {
  return `defect-${check}`;
}

export const DEFECT_TARGETS: readonly TargetDefinition[] = SPECS.map((spec) => ({
  name: defectTargetName(spec.check),
  kind: 'sdk',
  description: `${spec.baseName} with one defect: ${spec.defect}`,
  start: (ctx: TargetContext) => startDefective(ctx, spec.base, spec.make(ctx.name)),
}));

/** For every check, a target that fails it and why: a test iterates the checks against this. */
export const CONFORMANCE_DEFECTS: readonly { target: string; check: CheckId; defect: string }[] = SPECS.flatMap(
  (spec) =>
    [spec.check, ...(spec.alsoFails ?? [])].map((check) => ({
      target: defectTargetName(spec.check),
      check,
      defect: spec.defect,
    })),
);
