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
    return v as JsonRpcMessage;
  }
  if ('error' in v) {
    const e = v.error as Record<string, unknown> | null;
    if (!e || typeof e !== 'object' || typeof e.code !== 'number') return undefined;
    return {
      jsonrpc: '2.0',
      id: (v.id as number | string | null) ?? null,
      error: { code: e.code, message: typeof e.message === 'string' ? e.message : '', data: e.data },
    };
  }
  if (typeof v.method === 'string') return v as JsonRpcMessage;
  return undefined;
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
