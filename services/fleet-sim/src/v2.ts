import type { IncomingMessage, ServerResponse } from 'node:http';
import { type NodeIncomingMessageLike, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { Revision } from './revisions';
import { newestFirst } from './revisions';
import { SDK_VERSIONS } from './sdk-versions';
import { listenHttp, pathOf, type RequestBody, sendText } from './serve';
import { loopbackUrl, type RunningTarget, type TargetContext } from './target';

/** A v2 McpServer with the echo tool; `revisions` restricts what it negotiates. */
export function createV2Server(name: string, revisions?: readonly Revision[]): McpServer {
  const server = new McpServer(
    { name, version: SDK_VERSIONS['@modelcontextprotocol/server'] },
    // Newest first: for an unlisted initialize proposal the SDK counter-offers the first legacy entry.
    revisions === undefined ? {} : { supportedProtocolVersions: newestFirst(revisions) },
  );
  server.registerTool(
    'echo',
    // Read-only, and says so: a scripted check may call it without allowWrites.
    {
      description: 'Echoes the given text.',
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

export interface V2Endpoint {
  handle(req: IncomingMessage, res: ServerResponse, body: RequestBody | undefined): Promise<void>;
  close(): Promise<void>;
}

/** createMcpHandler served on node:http: the 2026-07-28 entry, optionally serving 2025 statelessly. */
export function v2Endpoint(
  name: string,
  options: {
    legacy: 'stateless' | 'reject';
    revisions?: readonly Revision[];
    /** Builds the server for one request; the SDK says which era it serves. */
    create?: (ctx: { era: 'legacy' | 'modern' }) => McpServer;
  },
): V2Endpoint {
  const create = options.create ?? (() => createV2Server(name, options.revisions));
  const handler = createMcpHandler(create, { legacy: options.legacy });
  const node = toNodeHandler(handler);
  return {
    handle: (req, res, body) => node(body === undefined ? req : replay(req, body), res),
    close: () => handler.close(),
  };
}

/**
 * The request with its already-read body served again as a stream, so the handler parses the
 * exact bytes (a `parsedBody` would be re-serialized, hiding malformed JSON from it).
 */
function replay(req: IncomingMessage, body: RequestBody): NodeIncomingMessageLike {
  return {
    method: req.method,
    url: req.url,
    headers: req.headers,
    async *[Symbol.asyncIterator]() {
      yield Buffer.from(body.text, 'utf8');
    },
  };
}

/** A v2 endpoint served at /mcp on the target's port (404 elsewhere), closed with the listener. */
export async function serveV2(
  { name, port, log }: TargetContext,
  endpoint: V2Endpoint,
  supports: () => Revision[],
): Promise<RunningTarget> {
  const listener = await listenHttp(name, port, log, async (req, res, body) => {
    if (pathOf(req) !== '/mcp') return sendText(res, 404, 'text/plain', 'Not Found');
    await endpoint.handle(req, res, body);
  });
  return {
    url: loopbackUrl(listener.port, '/mcp'),
    supports,
    async close() {
      await Promise.all([listener.close(), endpoint.close()]);
    },
  };
}
