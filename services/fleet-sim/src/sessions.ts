import type { IncomingMessage, ServerResponse } from 'node:http';
import { type RequestBody, sdkBody, sendJsonRpcError, sessionIdOf } from './serve';

/** The shape shared by the 1.x and v2 Streamable HTTP server transports. */
export interface SessionTransport {
  readonly sessionId?: string | undefined;
  onclose?: (() => void) | undefined;
  handleRequest(req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): Promise<void>;
}

/** A transport already connected to its own server instance. */
export interface StreamableSession {
  transport: SessionTransport;
  close(): Promise<void>;
}

/** Builds a fresh server + transport; the transport calls onInitialized when it mints a session id. */
export type OpenSession = (onInitialized: (sessionId: string) => void) => Promise<StreamableSession>;

/** Clients that never DELETE their session must not grow a long-running demo without bound. */
const MAX_SESSIONS = 1000;

/**
 * Stateful Streamable HTTP the way the SDK examples wire it: one transport per session,
 * a fresh one for every request without a session id, 404 for an unknown session id.
 */
export class StreamableSessions {
  readonly #sessions = new Map<string, StreamableSession>();
  readonly #open: OpenSession;

  constructor(open: OpenSession) {
    this.#open = open;
  }

  owns(req: IncomingMessage): boolean {
    const sessionId = sessionIdOf(req);
    return sessionId !== undefined && this.#sessions.has(sessionId);
  }

  get size(): number {
    return this.#sessions.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse, body: RequestBody | undefined): Promise<void> {
    const sessionId = sessionIdOf(req);
    if (sessionId !== undefined) {
      const session = this.#sessions.get(sessionId);
      // Same answer the 1.x transport gives for a session id it did not mint.
      if (session === undefined) return sendJsonRpcError(res, 404, -32001, 'Session not found');
      return session.transport.handleRequest(req, res, sdkBody(body));
    }
    // Without a session id the SDK itself decides: initialize mints a session, anything else
    // gets the transport's own "Server not initialized" answer.
    const session: StreamableSession = await this.#open((minted) => {
      this.#sessions.set(minted, session);
      this.#evictOldest();
      const previous = session.transport.onclose;
      session.transport.onclose = () => {
        previous?.();
        this.#sessions.delete(minted);
      };
    });
    await session.transport.handleRequest(req, res, sdkBody(body));
    if (session.transport.sessionId === undefined) await session.close();
  }

  #evictOldest(): void {
    for (const [sessionId, session] of this.#sessions) {
      if (this.#sessions.size <= MAX_SESSIONS) return;
      this.#sessions.delete(sessionId);
      void session.close().catch(() => {});
    }
  }

  async closeAll(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(sessions.map((session) => session.close()));
  }
}
