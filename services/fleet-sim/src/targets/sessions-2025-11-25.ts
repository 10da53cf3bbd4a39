import { randomUUID } from 'node:crypto';
import { McpServer } from 'mcp-sdk-1-32/server/mcp.js';
import { SSEServerTransport } from 'mcp-sdk-1-32/server/sse.js';
import { StreamableHTTPServerTransport } from 'mcp-sdk-1-32/server/streamableHttp.js';
import * as z from 'zod';
import { SDK_VERSIONS } from '../sdk-versions';
import { listenHttp, pathOf, sendText, sessionIdOf } from '../serve';
import { StreamableSessions } from '../sessions';
import { SseSessions } from '../sse-sessions';
import { loopbackUrl, type TargetDefinition } from '../target';

function createServer(name: string): McpServer {
  const server = new McpServer({ name, version: SDK_VERSIONS['mcp-sdk-1-32'] });
  server.registerTool(
    'echo',
    { description: 'Echoes the given text.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

/**
 * The SDK's backwards-compatible server: Streamable HTTP sessions on /mcp, and a GET /mcp
 * without a session id opens the old HTTP+SSE transport, posting to /messages.
 */
export const sessions20251125: TargetDefinition = {
  name: 'sessions-2025-11-25',
  kind: 'sdk',
  description: 'SDK 1.32 stateful Streamable HTTP on /mcp, plus HTTP+SSE (GET /mcp without session → /messages)',
  async start({ name, port, log }) {
    const streamable = new StreamableSessions(async (onInitialized) => {
      const server = createServer(name);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: onInitialized,
      });
      await server.connect(transport);
      return { transport, close: () => server.close() };
    });
    const sse = new SseSessions();
    const listener = await listenHttp(name, port, log, async (req, res, body) => {
      const path = pathOf(req);
      if (path === '/messages' && req.method === 'POST') return sse.post(req, res, body);
      if (path !== '/mcp') return sendText(res, 404, 'text/plain', 'Not Found');
      if (req.method === 'GET' && sessionIdOf(req) === undefined) {
        return sse.open(res, async (stream) => {
          const server = createServer(name);
          const transport = new SSEServerTransport('/messages', stream);
          await server.connect(transport);
          return { transport, close: () => server.close() };
        });
      }
      await streamable.handle(req, res, body);
    });
    return {
      url: loopbackUrl(listener.port, '/mcp'),
      supports: () => ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'],
      async close() {
        await Promise.all([listener.close(), streamable.closeAll(), sse.closeAll()]);
      },
    };
  },
};
