// The 2025 revisions served with sessions, as those revisions describe them: `initialize` mints a
// session (Mcp-Session-Id), every later request carries it, DELETE ends it, and a request with no
// session before `initialize` is refused ("Server not initialized"). The SDK's stateless legacy
// fallback answers a bare tools/list as if initialized, which legacy clients never rely on and the
// conformance check warns about (request_before_initialize_rejected): the monitor's own server is
// to be the best-behaved in its fleet, so control keeps legacy sessions itself.
//
// A session belongs to the principal that opened it (a token's digest, or the client's address with
// auth off): another caller presenting its id is told it does not exist, so a leaked session id is
// no way around a token's scope. Sessions are bounded in number and in idle time.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { AuthInfo, McpServer } from '@modelcontextprotocol/server';

const MAX_SESSIONS = 1000;
const IDLE_MS = 30 * 60_000;

interface Session {
  principal: string;
  transport: NodeStreamableHTTPServerTransport;
  server: McpServer;
  seen: number;
}

export class LegacySessions {
  readonly #sessions = new Map<string, Session>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Serve one legacy request. `body` is the POST body as read (parsed JSON, or the text when it is
   * no JSON, so the transport answers -32700); `open` builds the caller's server for a new session.
   */
  async handle(
    req: IncomingMessage & { auth?: AuthInfo },
    res: ServerResponse,
    body: unknown,
    principal: string,
    open: () => McpServer,
  ): Promise<void> {
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId !== undefined) {
      const session = this.#sessions.get(sessionId);
      if (!session || session.principal !== principal) return notFound(res);
      session.seen = this.#now();
      return session.transport.handleRequest(req, res, body);
    }
    // No session: the transport decides — initialize mints one, anything else is refused.
    const server = open();
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (minted) => {
        this.#sessions.set(minted, { principal, transport, server, seen: this.#now() });
        this.#sweep();
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.#sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    if (transport.sessionId === undefined) await server.close();
  }

  /** Idle sessions go, then the oldest while there are too many. */
  #sweep(): void {
    const now = this.#now();
    for (const [id, s] of this.#sessions) {
      if (now - s.seen > IDLE_MS || this.#sessions.size > MAX_SESSIONS) {
        this.#sessions.delete(id);
        void s.server.close().catch(() => {});
      }
    }
  }

  async closeAll(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(sessions.map((s) => s.server.close()));
  }
}

/** What the SDK's own transport answers for a session it did not mint. */
function notFound(res: ServerResponse): void {
  res
    .writeHead(404, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
}
