import type { IncomingMessage, ServerResponse } from 'node:http';
import { queryParam, type RequestBody, sdkBody, sendText } from './serve';

/** The shape shared by the 1.9 and 1.32 HTTP+SSE server transports. */
export interface SseTransport {
  readonly sessionId: string;
  handlePostMessage(req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): Promise<void>;
}

/** A transport already connected to its own server instance. */
export interface SseSession {
  transport: SseTransport;
  close(): Promise<void>;
}

/**
 * The deprecated HTTP+SSE transport (2024-11-05): GET opens a stream whose `endpoint` event
 * names where to POST (`<endpoint>?sessionId=…`). A session lives as long as its stream.
 */
export class SseSessions {
  readonly #sessions = new Map<string, SseSession>();

  /** Serves a GET: `open` must build the transport on `res` and connect it (which sends `endpoint`). */
  async open(res: ServerResponse, open: (res: ServerResponse) => Promise<SseSession>): Promise<void> {
    const session = await open(res);
    const { sessionId } = session.transport;
    this.#sessions.set(sessionId, session);
    res.on('close', () => {
      this.#sessions.delete(sessionId);
      void session.close().catch(() => {});
    });
  }

  owns(req: IncomingMessage): boolean {
    const sessionId = queryParam(req, 'sessionId');
    return sessionId !== undefined && this.#sessions.has(sessionId);
  }

  get size(): number {
    return this.#sessions.size;
  }

  async post(req: IncomingMessage, res: ServerResponse, body: RequestBody | undefined): Promise<void> {
    const session = this.#sessions.get(queryParam(req, 'sessionId') ?? '');
    // Status and text of the SDK's own HTTP+SSE example server.
    if (session === undefined) return sendText(res, 400, 'text/plain', 'No transport found for sessionId');
    await session.transport.handlePostMessage(req, res, sdkBody(body));
  }

  async closeAll(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(sessions.map((session) => session.close()));
  }
}
