import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { newestOf, orderRevisions, type Revision, revisionsOf } from '@mcp-fleet/probe';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { openHttpSseSession } from './http-sse-server';
import { pathOf, type RequestBody, sendText, sessionIdOf } from './serve';
import { StreamableSessions } from './sessions';
import { SseSessions } from './sse-sessions';
import { createV2Server, type V2Endpoint, v2Endpoint } from './v2';

/** Revisions that open with POST `initialize` over Streamable HTTP. */
const SESSION_REVISIONS = revisionsOf('sessions');
/** The revision that opens with GET on an event stream. */
const SSE_REVISION = newestOf('HTTP+SSE transport');
/** The revision that opens with `server/discover`. */
const MODERN_REVISION = newestOf('stateless');

/** One way of speaking: a server built for a set of revisions, with the conversations it started. */
interface Personality {
  readonly revisions: Revision[];
  /** Whether the request continues a conversation (session) this personality started. */
  owns(req: IncomingMessage): boolean;
  idle(): boolean;
  handle(req: IncomingMessage, res: ServerResponse, body: RequestBody | undefined): Promise<void>;
  close(): Promise<void>;
}

/**
 * Builds the server a set of revisions calls for, on /mcp:
 * - 2026-07-28 listed: createMcpHandler, serving the listed sessions revisions statelessly
 *   (or rejecting 2025 traffic when none is listed);
 * - otherwise sessions revisions listed: a stateful v2 Streamable HTTP server limited to them,
 *   which answers an unlisted proposal with its newest;
 * - 2024-11-05 listed: additionally GET /mcp opens the HTTP+SSE transport (SDK 1.9, the
 *   newest SDK that speaks only that revision), posting to /messages.
 */
function createPersonality(name: string, revisions: Revision[]): Personality {
  const sessionRevisions = revisions.filter((revision) => SESSION_REVISIONS.includes(revision));
  const sse = revisions.includes(SSE_REVISION) ? new SseSessions() : undefined;
  let endpoint: V2Endpoint | undefined;
  let streamable: StreamableSessions | undefined;
  if (revisions.includes(MODERN_REVISION)) {
    endpoint = v2Endpoint(name, {
      legacy: sessionRevisions.length > 0 ? 'stateless' : 'reject',
      revisions: [...sessionRevisions, MODERN_REVISION],
    });
  } else if (sessionRevisions.length > 0) {
    streamable = new StreamableSessions(async (onInitialized) => {
      const server = createV2Server(name, sessionRevisions);
      const transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: onInitialized,
      });
      await server.connect(transport);
      return { transport, close: () => server.close() };
    });
  }

  return {
    revisions,
    owns: (req) => (sse?.owns(req) ?? false) || (streamable?.owns(req) ?? false),
    idle: () => (sse?.size ?? 0) === 0 && (streamable?.size ?? 0) === 0,
    async handle(req, res, body) {
      const path = pathOf(req);
      if (path === '/messages' && req.method === 'POST' && sse) return sse.post(req, res, body);
      if (path !== '/mcp') return sendText(res, 404, 'text/plain', 'Not Found');
      if (sse && req.method === 'GET' && sessionIdOf(req) === undefined) {
        return sse.open(res, (stream) => openHttpSseSession(name, '/messages', stream));
      }
      if (endpoint) return endpoint.handle(req, res, body);
      if (streamable) return streamable.handle(req, res, body);
      // Only HTTP+SSE is spoken here: /mcp is just the stream.
      sendText(res, 405, 'text/plain', 'Method Not Allowed', { allow: 'GET' });
    },
    async close() {
      await Promise.allSettled([endpoint?.close(), streamable?.closeAll(), sse?.closeAll()]);
    },
  };
}

/**
 * A server whose revisions change at run time on a stable port. A drift applies to new
 * conversations; sessions opened before it finish on the personality that opened them.
 */
export class Drifter {
  readonly #name: string;
  #current: Personality;
  #retired: Personality[] = [];

  constructor(name: string, revisions: readonly Revision[]) {
    this.#name = name;
    this.#current = createPersonality(name, checkedRevisions(revisions));
  }

  get revisions(): Revision[] {
    return [...this.#current.revisions];
  }

  drift(revisions: readonly Revision[]): void {
    const next = createPersonality(this.#name, checkedRevisions(revisions));
    // Personalities retired at an earlier drift have had time to finish in-flight requests.
    const draining = this.#retired.filter((personality) => !personality.idle());
    for (const personality of this.#retired) if (personality.idle()) void personality.close();
    this.#retired = [...draining, this.#current];
    this.#current = next;
  }

  handle(req: IncomingMessage, res: ServerResponse, body: RequestBody | undefined): Promise<void> {
    const owner = this.#retired.find((personality) => personality.owns(req)) ?? this.#current;
    return owner.handle(req, res, body);
  }

  async close(): Promise<void> {
    const all = [this.#current, ...this.#retired];
    this.#retired = [];
    await Promise.allSettled(all.map((personality) => personality.close()));
  }
}

/**
 * What a drifting surface serves (the `surface-drifter` target): 0 the base; 1 an addition (info);
 * 2 a warning; 3 a breaking change. Each stage keeps the ones before it, so each step from one stage
 * to the next is one change of one severity.
 */
export const SURFACE_STAGES = [0, 1, 2, 3] as const;
export type SurfaceStage = (typeof SURFACE_STAGES)[number];

export function isSurfaceStage(value: unknown): value is SurfaceStage {
  return SURFACE_STAGES.includes(value as SurfaceStage);
}

/**
 * A surface that changes at run time: the stage a server factory reads on each request. The SDK's
 * createMcpHandler builds a fresh McpServer per request from its factory, so a new stage is served
 * from the next request on, in every era, with no server to re-register or restart.
 */
export class SurfaceDrift {
  #stage: SurfaceStage;

  constructor(stage: SurfaceStage = 0) {
    this.#stage = checkedStage(stage);
  }

  get stage(): SurfaceStage {
    return this.#stage;
  }

  drift(stage: SurfaceStage): void {
    this.#stage = checkedStage(stage);
  }
}

function checkedStage(stage: SurfaceStage): SurfaceStage {
  // A script read from a file or built at run time is not held to the type.
  if (!isSurfaceStage(stage)) throw new Error(`a surface stage is one of ${SURFACE_STAGES.join(', ')}: ${stage}`);
  return stage;
}

function checkedRevisions(revisions: readonly Revision[]): Revision[] {
  const ordered = orderRevisions(revisions);
  if (ordered.length === 0) throw new Error('a drift needs at least one revision');
  return ordered;
}
