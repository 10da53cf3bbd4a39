// One HTTP request of a probe and what came back, bounded in time and size. Every request a
// probe sends goes through `send`, so every one is timed, capped, counted and recorded.
import { Agent, type Dispatcher, request } from 'undici';
import { DNS_TIMEOUT_CODE, systemDns } from './dns';
import { type JsonRpcMessage, parseJsonRpc } from './jsonrpc';
import { originPool } from './origin-pool';
import { SseReader } from './sse';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';
/** A line written to a stdio server's stdin (its answer read from stdout): stdio/conversation.ts. */
export type PipeMethod = 'STDIN';

/** Why a request got no HTTP answer. */
export type ReachabilityFailure =
  | 'timeout'
  | 'connection_refused'
  | 'connection_reset'
  | 'dns'
  | 'tls'
  | 'malformed_http'
  | 'network'
  /** The probe's policy or floor refused the address or scheme before any dial (target-policy.ts). */
  | 'policy'
  | 'request_budget'
  /** stdio (stdio/child.ts): the command could not be started, ended before answering, or flooded stdout and was killed. */
  | 'spawn_failed'
  | 'exited_early'
  | 'stdout_flood';

export interface Exchange {
  method: HttpMethod | PipeMethod;
  url: string;
  /** The JSON-RPC method this request carried, when it carried one. */
  jsonRpcMethod: string | undefined;
  /** A conformance check's bad request, sent on purpose: its error is expected, not the server's fault (metrics skip it). */
  deliberate?: true;
  startedAt: number;
  millis: number;
  status: number | null;
  contentType: string | null;
  /** The response headers a probe reads; nothing else is kept. */
  headers: {
    location?: string;
    sessionId?: string;
    retryAfter?: string;
    protocolVersion?: string;
  };
  /** The body as text, at most `maxBodyBytes` (the rest is discarded unread). */
  text: string;
  truncated: boolean;
  /** The JSON-RPC response to this request, found in a JSON or an event-stream body. */
  response: JsonRpcMessage | undefined;
  /**
   * With `keepAnswer`: an event-stream answer's own text (its event's data), whole; `response` keeps
   * only its first levels. A surface read, a script's assertions and a replay's comparison ask for it.
   */
  answerText?: string;
  failure: ReachabilityFailure | null;
  /** A human account of the failure (no credentials). */
  error: string | undefined;
  /** stdio: the last bytes the process wrote to stderr by then (its own words; never judged an error by itself). */
  stderr?: string;
}

/** The exchange went over a stdio server's pipes, not HTTP. */
export function onPipe(ex: Exchange): boolean {
  return ex.method === 'STDIN';
}

/** The answer came back the way the transport delivers one: a 2xx over HTTP; any answer line over stdio. */
export function delivered(ex: Exchange): boolean {
  if (ex.failure) return false;
  if (onPipe(ex)) return ex.response !== undefined;
  return ex.status !== null && ex.status >= 200 && ex.status < 300;
}

/** How a reply is named in a sentence: `HTTP 400` (with its type when `withType`), or `stdio`. */
export function via(ex: Exchange, withType = false): string {
  if (onPipe(ex)) return 'stdio';
  const type = withType && ex.contentType ? `, ${ex.contentType.split(';')[0]}` : '';
  return `HTTP ${ex.status ?? 0}${type}`;
}

export interface SendRequest {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  jsonRpcMethod?: string;
  /** A deliberately bad request (a conformance check's negative probe). */
  deliberate?: true;
  /** Close the connection after this answer, so the next request opens a new one. */
  reset?: boolean;
  /** Pick the response with this id out of an event-stream answer. */
  jsonRpcId?: number;
  /** Keep that event-stream answer's whole text as `answerText` (a surface read, a script, a replay read all of it). */
  keepAnswer?: true;
}

export const MAX_BODY_BYTES = 256 * 1024;

/** Keep-alive connections, no redirects followed, tight header limits, bounded DNS lookups (dns.ts), lean pools (origin-pool.ts). */
export const defaultDispatcher: Dispatcher = new Agent({
  factory: originPool,
  keepAliveTimeout: 4_000,
  keepAliveMaxTimeout: 10_000,
  connect: { timeout: 10_000, lookup: systemDns.lookup },
  maxHeaderSize: 64 * 1024,
});

export function emptyExchange(
  req: Pick<SendRequest, 'jsonRpcMethod' | 'deliberate'> & { method: Exchange['method']; url: URL | string },
  failure: ReachabilityFailure,
  error: string,
): Exchange {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? req.url : req.url.href,
    jsonRpcMethod: req.jsonRpcMethod,
    ...(req.deliberate ? { deliberate: true as const } : {}),
    startedAt: Date.now(),
    millis: 0,
    status: null,
    contentType: null,
    headers: {},
    text: '',
    truncated: false,
    response: undefined,
    failure,
    error,
  };
}

export interface SendOptions {
  dispatcher: Dispatcher;
  timeoutMs: number;
  maxBodyBytes?: number;
}

/** A GET that opened (or failed to open) an event stream. The reader is set only on a 2xx event stream. */
export interface StreamExchange {
  exchange: Exchange;
  reader: SseReader | undefined;
}

/**
 * Send one request and read its answer within `timeoutMs`. With `stream: true` a 2xx
 * text/event-stream answer is handed back unread for the caller to consume.
 */
export async function send(req: SendRequest, opts: SendOptions & { stream: true }): Promise<StreamExchange>;
export async function send(req: SendRequest, opts: SendOptions & { stream?: false }): Promise<Exchange>;
export async function send(
  req: SendRequest,
  opts: SendOptions & { stream?: boolean },
): Promise<Exchange | StreamExchange> {
  const startedAt = Date.now();
  const ex = emptyExchange(req, 'timeout', '');
  ex.startedAt = startedAt;
  ex.failure = null;
  ex.error = undefined;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      controller.abort();
    },
    Math.max(1, opts.timeoutMs),
  );
  const finish = () => {
    ex.millis = Date.now() - startedAt;
  };
  try {
    const res = await request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      ...(req.reset ? { reset: true } : {}),
      dispatcher: opts.dispatcher,
      signal: controller.signal,
    });
    ex.status = res.statusCode;
    ex.contentType = headerValue(res.headers['content-type']) ?? null;
    ex.headers = pickHeaders(res.headers);
    const isStream = ex.contentType?.toLowerCase().startsWith('text/event-stream') ?? false;
    if (opts.stream && isStream && res.statusCode >= 200 && res.statusCode < 300) {
      clearTimeout(timer);
      finish();
      return { exchange: ex, reader: new SseReader(res.body) };
    }
    if (isStream && req.jsonRpcId !== undefined) {
      const reader = new SseReader(res.body);
      for (;;) {
        const next = await reader.next(60_000);
        if (typeof next === 'string') {
          if (next === 'overflow') ex.truncated = true;
          break;
        }
        const msg = parseJsonRpc(next.data);
        if (msg && 'id' in msg && msg.id === req.jsonRpcId && ('result' in msg || 'error' in msg)) {
          ex.response = msg;
          if (req.keepAnswer) ex.answerText = next.data;
          break;
        }
      }
      ex.text = reader.preview;
      reader.close();
    } else {
      const { text, truncated } = await readCapped(res.body, opts.maxBodyBytes ?? MAX_BODY_BYTES);
      ex.text = text;
      ex.truncated = truncated;
      const msg = parseJsonRpc(text);
      if (msg && ('result' in msg || 'error' in msg)) ex.response = msg;
    }
    if (timedOut) {
      // The answer began but its body did not finish in time.
      ex.failure = 'timeout';
      ex.error = `the response body did not finish within ${opts.timeoutMs} ms`;
    }
  } catch (err) {
    const [failure, message] = timedOut
      ? (['timeout', `no answer within ${opts.timeoutMs} ms`] as const)
      : classifyError(err);
    ex.failure = failure;
    ex.error = message;
  } finally {
    clearTimeout(timer);
    finish();
  }
  return opts.stream ? { exchange: ex, reader: undefined } : ex;
}

async function readCapped(
  body: AsyncIterable<Uint8Array> & { destroy(): void },
  cap: number,
): Promise<{ text: string; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of body) {
    const room = cap - size;
    // A chunk that only fills the cap is not yet a truncation: the body may end right there.
    if (chunk.byteLength > room) {
      chunks.push(chunk.subarray(0, room));
      size += room;
      truncated = true;
      break;
    }
    chunks.push(chunk);
    size += chunk.byteLength;
  }
  // Whatever is left is discarded without reading it.
  if (truncated) body.destroy();
  return { text: Buffer.concat(chunks, size).toString('utf8'), truncated };
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function pickHeaders(h: Record<string, string | string[] | undefined>): Exchange['headers'] {
  const out: Exchange['headers'] = {};
  const location = headerValue(h.location);
  const sessionId = headerValue(h['mcp-session-id']);
  const retryAfter = headerValue(h['retry-after']);
  const protocolVersion = headerValue(h['mcp-protocol-version']);
  if (location !== undefined) out.location = location;
  if (sessionId !== undefined) out.sessionId = sessionId;
  if (retryAfter !== undefined) out.retryAfter = retryAfter;
  if (protocolVersion !== undefined) out.protocolVersion = protocolVersion;
  return out;
}

const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_NOT_YET_VALID',
  'EPROTO',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/** Map a transport error to a reachability failure and a sentence an operator can act on. */
export function classifyError(err: unknown): [ReachabilityFailure, string] {
  const e = err as {
    code?: string;
    name?: string;
    message?: string;
    cause?: { code?: string; name?: string; message?: string };
  };
  const code = e?.code ?? e?.cause?.code ?? '';
  const detail = e?.cause?.message ?? e?.message ?? String(err);
  // target-policy.ts's PolicyRefusal (by name: it carries no code); its message says which rule refused.
  if (e?.name === 'PolicyRefusal' || e?.cause?.name === 'PolicyRefusal') return ['policy', detail];
  if (code === 'ECONNREFUSED') return ['connection_refused', 'the connection was refused'];
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NODATA')
    return ['dns', `the host name could not be resolved (${code})`];
  // "DNS lookup for <name> did not answer within <n> ms" (dns.ts).
  if (code === DNS_TIMEOUT_CODE) return ['dns', detail];
  if (TLS_CODES.has(code) || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL'))
    return ['tls', `the TLS handshake failed (${code}: ${detail})`];
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE')
    return ['connection_reset', 'the connection was closed before the answer was complete'];
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return ['timeout', 'the server did not answer in time'];
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return ['malformed_http', 'the response headers were too large'];
  // undici 7 raises llhttp's errors as HTTPParserError with no code (it looks the code up by number in a map by name).
  if (
    code.startsWith('HPE_') ||
    code === 'UND_ERR_INFO' ||
    e?.name === 'HTTPParserError' ||
    e?.cause?.name === 'HTTPParserError'
  )
    return ['malformed_http', 'the server did not answer in HTTP'];
  return ['network', `the request failed (${code || detail})`];
}
