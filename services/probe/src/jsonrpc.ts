// The JSON-RPC 2.0 envelope as a probe sees it: build requests, recognise answers.

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcMessage =
  | { jsonrpc: '2.0'; id: number | string | null; result: Record<string, unknown> }
  | { jsonrpc: '2.0'; id: number | string | null; error: JsonRpcError }
  | { jsonrpc: '2.0'; id?: number | string; method: string; params?: unknown };

/** Parse one JSON-RPC message, or undefined when the text is not one (bad JSON, a batch, another shape). */
export function parseJsonRpc(text: string): JsonRpcMessage | undefined {
  if (!text || text.length === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (v.jsonrpc !== '2.0') return undefined;
  if ('result' in v) {
    if (!v.result || typeof v.result !== 'object' || Array.isArray(v.result)) return undefined;
    const answer: { jsonrpc: '2.0'; id?: number | string | null; result: Record<string, unknown> } = {
      jsonrpc: '2.0',
      result: kept(v.result) as Record<string, unknown>,
    };
    // An answer without an id stays without one (a missing id is not a mismatched one).
    if ('id' in v) answer.id = v.id as number | string | null;
    return answer as JsonRpcMessage;
  }
  if ('error' in v) {
    const e = v.error as Record<string, unknown> | null;
    if (!e || typeof e !== 'object' || typeof e.code !== 'number') return undefined;
    return {
      jsonrpc: '2.0',
      id: (v.id as number | string | null) ?? null,
      error: { code: e.code, message: typeof e.message === 'string' ? e.message : '', data: kept(e.data) },
    };
  }
  if (typeof v.method === 'string') return v as JsonRpcMessage;
  return undefined;
}

/** How deep and how wide a probe keeps a result or error data: it reads nothing beyond (`_meta.<key>.name` is 3 deep). */
const KEPT_DEPTH = 4;
const KEPT_ITEMS = 64;

/**
 * The part of a parsed value a probe can read: at most KEPT_DEPTH levels and KEPT_ITEMS entries per
 * level (deeper objects become null). 256 KiB of JSON can parse into megabytes of objects (nested or
 * wide arrays), and an exchange keeps its answer for the rest of the probe: it must keep only this.
 */
function kept(value: unknown, depth = KEPT_DEPTH): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth === 0) return null;
  if (Array.isArray(value)) return value.slice(0, KEPT_ITEMS).map((item) => kept(item, depth - 1));
  const entries: [string, unknown][] = [];
  for (const key in value) {
    if (entries.length === KEPT_ITEMS) break;
    if (Object.hasOwn(value, key)) entries.push([key, kept((value as Record<string, unknown>)[key], depth - 1)]);
  }
  // fromEntries defines properties, so a `__proto__` key stays data.
  return Object.fromEntries(entries);
}

export function resultOf(msg: JsonRpcMessage | undefined): Record<string, unknown> | undefined {
  return msg && 'result' in msg ? msg.result : undefined;
}

export function errorOf(msg: JsonRpcMessage | undefined): JsonRpcError | undefined {
  return msg && 'error' in msg ? msg.error : undefined;
}

export function requestBody(id: number, method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

export function notificationBody(method: string, params?: unknown): string {
  return JSON.stringify(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
}

/** JSON-RPC error codes a 2026-07-28 server uses to turn a request away without leaving MCP. */
export const ERA_ERROR_CODES = new Set([-32020, -32021, -32022, -32601]);
export const METHOD_NOT_FOUND = -32601;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;
