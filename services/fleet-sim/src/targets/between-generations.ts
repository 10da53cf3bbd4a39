import { randomUUID } from 'node:crypto';
import { Server } from 'mcp-sdk-1-10/server/index.js';
import { StreamableHTTPServerTransport } from 'mcp-sdk-1-10/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from 'mcp-sdk-1-10/types.js';
import { callEcho, ECHO_TOOL } from '../echo';
import { SDK_VERSIONS } from '../sdk-versions';
import { listenHttp, pathOf, sendText } from '../serve';
import { StreamableSessions } from '../sessions';
import { loopbackUrl, type TargetDefinition } from '../target';

/**
 * A server between generations, as SDK 1.10 built them: Streamable HTTP (the sessions opening, POST
 * `initialize`, Mcp-Session-Id) already, but 2024-11-05 still its newest revision, and no HTTP+SSE
 * endpoint. It answers every proposal with 2024-11-05; a GET without a session is refused.
 */
export const betweenGenerations: TargetDefinition = {
  name: 'between-generations',
  kind: 'sdk',
  description:
    'SDK 1.10 stateful Streamable HTTP (session ids) with no HTTP+SSE endpoint; answers any proposal with 2024-11-05',
  async start({ name, port, log }) {
    const sessions = new StreamableSessions(async (onInitialized) => {
      const server = new Server({ name, version: SDK_VERSIONS['mcp-sdk-1-10'] }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [ECHO_TOOL] }));
      server.setRequestHandler(CallToolRequestSchema, async ({ params }) => callEcho(params));
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: onInitialized,
      });
      await server.connect(transport);
      return { transport, close: () => server.close() };
    });
    const listener = await listenHttp(name, port, log, async (req, res, body) => {
      if (pathOf(req) !== '/mcp') return sendText(res, 404, 'text/plain', 'Not Found');
      await sessions.handle(req, res, body);
    });
    return {
      url: loopbackUrl(listener.port, '/mcp'),
      supports: () => ['2024-11-05'],
      async close() {
        await Promise.all([listener.close(), sessions.closeAll()]);
      },
    };
  },
};
