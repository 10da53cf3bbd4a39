// The conversation a conformance run holds open while its checks talk: one per generation, all
// with the same two verbs, `call` (a valid request, as that generation's client sends it) and `raw`
// (a body sent as is, on purpose). Sessions keep their Mcp-Session-Id until `close`; HTTP+SSE keeps
// its stream and reads answers from it; the stateless generation wraps every request in `_meta`
// and the Mcp-* headers. Every request goes through the run's ProbeContext (budget, deadline).
import { CLIENT_INFO } from '../client-info';
import type { ProbeContext } from '../context';
import { delivered, type Exchange } from '../exchange';
import { notificationBody, parseJsonRpc, requestBody, resultOf } from '../jsonrpc';
import { failed, judge, type Opening, opened, serverInfoOf } from '../opening';
import { awaitEndpoint } from '../openings/http-sse';
import { deleteSession, initializeAnswer, openSessions, sessionHeaders } from '../openings/sessions';
import { META } from '../openings/stateless';
import { type Era, type Generation, newestOf, type Revision, revisionInfo } from '../revisions';
import type { SseReader } from '../sse';
import { PipeConnection } from './pipe-connection';
import { capabilitiesOf, modernMeta } from './requests';

export { capabilitiesOf, modernMeta };

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
/** How long an answer on an HTTP+SSE stream may take before the request counts as unanswered. */
const STREAM_ANSWER_MS = 5_000;

export interface CallOptions {
  /** Extra or replacing headers (a header check sends a wrong Mcp-Method). */
  headers?: Record<string, string>;
  /** Stateless only: the `_meta` to send instead of the connection's (a missing-meta check). */
  meta?: Record<string, unknown>;
  /** Close the TCP connection after the answer: the next request opens a new one. */
  reset?: boolean;
  /** A request the server should refuse (metrics do not count its error against the server). */
  deliberate?: boolean;
  /** Keep an event-stream answer's whole text (Exchange.answerText): a surface read, a script and a replay read all of it. */
  whole?: boolean;
}

export interface Connection {
  readonly ctx: ProbeContext;
  readonly revision: Revision;
  readonly era: Era;
  readonly generation: Generation;
  /** The opening's answer (initialize or server/discover). */
  readonly opening: Exchange;
  /** What the server declared it offers. */
  readonly capabilities: Record<string, unknown>;
  call(method: string, params?: Record<string, unknown>, opts?: CallOptions): Promise<Exchange>;
  /** Send `body` as it is (malformed JSON, a missing jsonrpc…), with the connection's headers. */
  raw(body: string, opts?: { headers?: Record<string, string>; id?: number; method?: string }): Promise<Exchange>;
  close(): Promise<void>;
}

export type Connected = { ok: true; connection: Connection; opening: Opening } | { ok: false; opening: Opening };

/** The name a stateless request's Mcp-Name header carries, for the methods that have one. */
export function mcpName(method: string, params: Record<string, unknown> | undefined): string | undefined {
  const value =
    method === 'resources/read'
      ? params?.uri
      : method === 'tools/call' || method === 'prompts/get'
        ? params?.name
        : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** A modern connection: server/discover answered with a result (judged by the checks, not here). */
export async function connectModern(ctx: ProbeContext, revision: Revision): Promise<Connected> {
  if (ctx.command) return PipeConnection.open(ctx, revision);
  const conn = new StatelessConnection(ctx, revision);
  const ex = await conn.call('server/discover');
  const result = resultOf(ex.response);
  if (!delivered(ex) || !result)
    return { ok: false, opening: failed('stateless', revision, ex, judge(ex, 'server/discover'), false) };
  const serverInfo = serverInfoOf(((result._meta ?? {}) as Record<string, unknown>)[META.serverInfo]);
  conn.setOpening(ex, capabilitiesOf(result));
  return { ok: true, connection: conn, opening: opened('stateless', revision, ex, revision, serverInfo) };
}

/**
 * A legacy connection at `revision` (sessions or HTTP+SSE, by its generation), initialized and ready.
 * 2024-11-05 on a server between generations (SDK 1.10.x) has no HTTP+SSE stream to open (an era
 * signal): it is spoken over the sessions opening there (docs/protocol.md#servers-between-generations),
 * so conformance, surface and script runs reach it as handshakes do.
 */
export async function connectLegacy(ctx: ProbeContext, revision: Revision): Promise<Connected> {
  // Over stdio every legacy revision opens with initialize, in a process of its own.
  if (ctx.command) return PipeConnection.open(ctx, revision);
  if (revisionInfo(revision).generation === 'HTTP+SSE transport') {
    const sse = await connectHttpSse(ctx, revision);
    if (sse.ok || !sse.opening.eraSignal) return sse;
    const over = await connectSessions(ctx, revision);
    if (over.ok && over.opening.answered === revision) return over;
    if (over.ok) await over.connection.close();
    return sse;
  }
  return connectSessions(ctx, revision);
}

async function connectSessions(ctx: ProbeContext, revision: Revision): Promise<Connected> {
  const opening = await openSessions(ctx, revision, { complete: false });
  if (!opening.ok || !opening.decisive) return { ok: false, opening };
  const answered = opening.answered ?? revision;
  const conn = new SessionsConnection(ctx, revision, opening.openSession, answered);
  conn.setOpening(opening.decisive, capabilitiesOf(resultOf(opening.decisive.response)));
  await conn.initialized();
  return { ok: true, connection: conn, opening };
}

/** The newest legacy revision the server speaks: sessions first, then the HTTP+SSE transport. */
export async function connectNewestLegacy(ctx: ProbeContext): Promise<Connected> {
  // Over stdio initialize proposes the newest; the server answers with the one it speaks.
  if (ctx.command) return PipeConnection.open(ctx, newestOf('sessions'));
  const sessions = await connectLegacy(ctx, newestOf('sessions'));
  if (sessions.ok) return sessions;
  // A wall (401, 429, 5xx, a refused connection) answers the stream the same way: stop there.
  const ex = sessions.opening.decisive;
  if (ex && (ex.failure || (ex.status !== null && ex.status !== 404 && ex.status !== 405 && ex.status !== 400)))
    return sessions;
  const sse = await connectHttpSse(ctx, newestOf('HTTP+SSE transport'));
  return sse.ok ? sse : sessions;
}

abstract class BaseConnection implements Connection {
  abstract readonly era: Era;
  abstract readonly generation: Generation;
  opening!: Exchange;
  capabilities: Record<string, unknown> = {};

  constructor(
    readonly ctx: ProbeContext,
    readonly revision: Revision,
  ) {}

  setOpening(ex: Exchange, capabilities: Record<string, unknown>): void {
    this.opening = ex;
    this.capabilities = capabilities;
  }

  /** POST a body to the target (the stateless and sessions generations; HTTP+SSE posts to its endpoint). */
  protected post(
    body: string,
    headers: Record<string, string>,
    opts: {
      method?: string | undefined;
      id?: number | undefined;
      reset?: boolean;
      deliberate?: boolean;
      whole?: boolean;
    },
  ): Promise<Exchange> {
    return this.ctx.send({
      method: 'POST',
      url: this.ctx.target,
      headers,
      body,
      ...(opts.method ? { jsonRpcMethod: opts.method } : {}),
      ...(opts.id !== undefined ? { jsonRpcId: opts.id } : {}),
      ...(opts.reset ? { reset: true } : {}),
      ...(opts.deliberate ? { deliberate: true as const } : {}),
      ...(opts.whole ? { keepAnswer: true as const } : {}),
    });
  }

  abstract call(method: string, params?: Record<string, unknown>, opts?: CallOptions): Promise<Exchange>;
  abstract raw(
    body: string,
    opts?: { headers?: Record<string, string>; id?: number; method?: string },
  ): Promise<Exchange>;
  async close(): Promise<void> {}
}

class StatelessConnection extends BaseConnection {
  readonly era = 'modern' as const;
  readonly generation = 'stateless' as const;

  #headers(method: string, name: string | undefined): Record<string, string> {
    const h: Record<string, string> = { ...JSON_HEADERS, 'mcp-protocol-version': this.revision, 'mcp-method': method };
    if (name !== undefined) h['mcp-name'] = name;
    return h;
  }

  async call(method: string, params: Record<string, unknown> = {}, opts: CallOptions = {}): Promise<Exchange> {
    const id = this.ctx.nextId();
    const meta = opts.meta ?? modernMeta(this.revision);
    return this.post(
      requestBody(id, method, { ...params, _meta: meta }),
      { ...this.#headers(method, mcpName(method, params)), ...opts.headers },
      { ...opts, method, id },
    );
  }

  raw(body: string, opts: { headers?: Record<string, string>; id?: number; method?: string } = {}): Promise<Exchange> {
    const headers = { ...this.#headers(opts.method ?? 'tools/list', undefined), ...opts.headers };
    return this.post(body, headers, { method: opts.method, id: opts.id, deliberate: true });
  }
}

class SessionsConnection extends BaseConnection {
  readonly era = 'legacy' as const;
  readonly generation = 'sessions' as const;

  constructor(
    ctx: ProbeContext,
    revision: Revision,
    readonly sessionId: string | undefined,
    readonly answered: string,
  ) {
    super(ctx, revision);
  }

  #headers(): Record<string, string> {
    return { ...JSON_HEADERS, ...sessionHeaders(this.answered, this.sessionId) };
  }

  async initialized(): Promise<void> {
    await this.post(notificationBody('notifications/initialized'), this.#headers(), {
      method: 'notifications/initialized',
    });
  }

  call(method: string, params?: Record<string, unknown>, opts: CallOptions = {}): Promise<Exchange> {
    const id = this.ctx.nextId();
    return this.post(requestBody(id, method, params), { ...this.#headers(), ...opts.headers }, { ...opts, method, id });
  }

  raw(body: string, opts: { headers?: Record<string, string>; id?: number; method?: string } = {}): Promise<Exchange> {
    const headers = { ...this.#headers(), ...opts.headers };
    return this.post(body, headers, { method: opts.method, id: opts.id, deliberate: true });
  }

  override async close(): Promise<void> {
    if (this.sessionId) await deleteSession(this.ctx, this.answered, this.sessionId);
  }
}

/** HTTP+SSE: POSTs go to the endpoint the stream named; answers come back on the stream. */
class HttpSseConnection extends BaseConnection {
  readonly era = 'legacy' as const;
  readonly generation = 'HTTP+SSE transport' as const;

  constructor(
    ctx: ProbeContext,
    revision: Revision,
    readonly endpoint: URL,
    readonly reader: SseReader,
  ) {
    super(ctx, revision);
  }

  async #post(
    body: string,
    method: string | undefined,
    id: number | undefined,
    headers: Record<string, string> = {},
    deliberate = false,
  ): Promise<Exchange> {
    const ex = await this.ctx.send({
      method: 'POST',
      url: this.endpoint,
      headers: { ...JSON_HEADERS, ...headers },
      body,
      ...(method ? { jsonRpcMethod: method } : {}),
      ...(deliberate ? { deliberate: true as const } : {}),
    });
    // A notification (no id, not deliberate) has no answer to wait for.
    if (ex.failure || ex.response || ex.status === null || ex.status >= 300 || (id === undefined && !deliberate))
      return ex;
    // The answer comes on the stream; a deliberately bad body may be answered with id null (a parse error).
    const answer = await this.#awaitAnswer(id ?? null, deliberate);
    if (answer) {
      ex.response = answer.response;
      ex.text = answer.text;
    }
    return ex;
  }

  async #awaitAnswer(id: number | null, orNull: boolean) {
    const until = Math.min(STREAM_ANSWER_MS, Math.max(0, this.ctx.remainingMs()));
    const end = Date.now() + until;
    for (;;) {
      const left = end - Date.now();
      if (left <= 0) return undefined;
      const next = await this.reader.next(left);
      if (typeof next === 'string') return undefined;
      const msg = parseJsonRpc(next.data);
      if (msg && 'id' in msg && (msg.id === id || (orNull && msg.id === null)) && ('result' in msg || 'error' in msg))
        return { response: msg, text: next.data };
    }
  }

  async initialize(): Promise<{ ex: Exchange; id: number }> {
    const id = this.ctx.nextId();
    const ex = await this.#post(
      requestBody(id, 'initialize', { protocolVersion: this.revision, capabilities: {}, clientInfo: CLIENT_INFO }),
      'initialize',
      id,
    );
    return { ex, id };
  }

  async initialized(): Promise<void> {
    await this.#post(notificationBody('notifications/initialized'), 'notifications/initialized', undefined);
  }

  call(method: string, params?: Record<string, unknown>, opts: CallOptions = {}): Promise<Exchange> {
    const id = this.ctx.nextId();
    return this.#post(requestBody(id, method, params), method, id, opts.headers, opts.deliberate);
  }

  raw(body: string, opts: { headers?: Record<string, string>; id?: number; method?: string } = {}): Promise<Exchange> {
    return this.#post(body, opts.method, opts.id, opts.headers, true);
  }

  override async close(): Promise<void> {
    this.reader.close();
  }
}

async function connectHttpSse(ctx: ProbeContext, revision: Revision): Promise<Connected> {
  const GENERATION = 'HTTP+SSE transport' as const;
  const wait = await awaitEndpoint(ctx);
  if (!wait.ok) return { ok: false, opening: failed(GENERATION, revision, wait.get, wait.failure, wait.eraSignal) };
  const conn = new HttpSseConnection(ctx, revision, wait.endpoint, wait.reader);
  const { ex, id } = await conn.initialize();
  const answer = initializeAnswer(ex, id);
  if ('failure' in answer) {
    await conn.close();
    return { ok: false, opening: failed(GENERATION, revision, ex, answer.failure, false) };
  }
  conn.setOpening(ex, capabilitiesOf(resultOf(ex.response)));
  await conn.initialized();
  return {
    ok: true,
    connection: conn,
    opening: opened(GENERATION, revision, ex, answer.protocolVersion, answer.serverInfo),
  };
}
