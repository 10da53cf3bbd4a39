import type { IncomingMessage } from 'node:http';

/** One HTTP request as a target saw it, counted on the server side. */
export interface RequestRecord {
  target: string;
  method: string;
  /** URL path without the query string. */
  path: string;
  /** Milliseconds since the epoch when the request arrived. */
  at: number;
  /** The `Mcp-Method` header (2026-07-28 requests carry it). */
  mcpMethod?: string;
  protocolVersionHeader?: string;
  /** The `Mcp-Session-Id` header, or the `sessionId` query parameter of an HTTP+SSE POST. */
  sessionId?: string;
  /** The JSON-RPC method of a POST body; a batch lists its methods joined by `,`. */
  jsonRpcMethod?: string;
  hasAuthorization: boolean;
  /** The caller's address as the server saw it (an IPv4-mapped address as IPv4): which agent, or which source address, asked. */
  remoteAddress?: string;
}

/** How many requests a sim remembers unless told otherwise: far more than a test sends. */
export const KEEP_REQUESTS = 10_000;

/**
 * Requests and TCP connections of every target in one sim. Only the latest `keep` requests are
 * remembered: the demo runs for days under `mcp-fleet up`, and an unbounded log would grow by
 * tens of MB an hour in the monitor's own process.
 */
export class RequestLog {
  #records: RequestRecord[] = [];
  #connections = new Map<string, number>();
  readonly #keep: number;

  constructor(keep = KEEP_REQUESTS) {
    if (!Number.isInteger(keep) || keep < 0) throw new TypeError('keep is a whole number of requests');
    this.#keep = keep;
  }

  /** Records a request on arrival; the returned record is completed once its body is read. */
  record(target: string, req: IncomingMessage): RequestRecord {
    const url = new URL(req.url ?? '/', 'http://sim.invalid');
    const record: RequestRecord = {
      target,
      method: req.method ?? 'GET',
      path: url.pathname,
      at: Date.now(),
      hasAuthorization: req.headers.authorization !== undefined,
    };
    const mcpMethod = header(req, 'mcp-method');
    const protocolVersionHeader = header(req, 'mcp-protocol-version');
    const sessionId = header(req, 'mcp-session-id') ?? url.searchParams.get('sessionId') ?? undefined;
    if (mcpMethod !== undefined) record.mcpMethod = mcpMethod;
    if (protocolVersionHeader !== undefined) record.protocolVersionHeader = protocolVersionHeader;
    if (sessionId !== undefined) record.sessionId = sessionId;
    const remote = req.socket?.remoteAddress;
    if (remote !== undefined) record.remoteAddress = remote.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
    this.#records.push(record);
    // Dropped in batches (a tenth over the bound), so each request costs O(1) on average.
    if (this.#records.length > this.#keep + Math.ceil(this.#keep / 10))
      this.#records.splice(0, this.#records.length - this.#keep);
    return record;
  }

  countConnection(target: string): void {
    this.#connections.set(target, (this.#connections.get(target) ?? 0) + 1);
  }

  requests(target?: string): RequestRecord[] {
    return this.#records.filter((record) => target === undefined || record.target === target);
  }

  connections(target: string): number {
    return this.#connections.get(target) ?? 0;
  }

  reset(): void {
    this.#records = [];
    this.#connections.clear();
  }
}

/** The JSON-RPC method(s) named by a parsed POST body, if any. */
export function jsonRpcMethodOf(body: unknown): string | undefined {
  const messages = Array.isArray(body) ? body : [body];
  const methods = messages
    .map((message) => (isObject(message) && typeof message.method === 'string' ? message.method : undefined))
    .filter((method) => method !== undefined);
  return methods.length > 0 ? methods.join(',') : undefined;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
