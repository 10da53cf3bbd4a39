import { Server } from 'mcp-sdk-1-17/server/index.js';
import { StreamableHTTPServerTransport } from 'mcp-sdk-1-17/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from 'mcp-sdk-1-17/types.js';
import { callEcho, ECHO_TOOL } from '../echo';
import { SDK_VERSIONS } from '../sdk-versions';
import { listenHttp, pathOf, sdkBody, sendJsonRpcError, sendText } from '../serve';
import { loopbackUrl, type TargetDefinition } from '../target';

export const sessions20250618: TargetDefinition = {
  name: 'sessions-2025-06-18',
  kind: 'sdk',
  description: 'SDK 1.17 stateless Streamable HTTP with JSON responses (a fresh server per request)',
  async start({ name, port, log }) {
    const listener = await listenHttp(name, port, log, async (req, res, body) => {
      if (pathOf(req) !== '/mcp') return sendText(res, 404, 'text/plain', 'Not Found');
      // Stateless: nothing to stream to or delete, as in the SDK's stateless example.
      if (req.method !== 'POST') return sendJsonRpcError(res, 405, -32000, 'Method not allowed.');
      const server = new Server({ name, version: SDK_VERSIONS['mcp-sdk-1-17'] }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [ECHO_TOOL] }));
      server.setRequestHandler(CallToolRequestSchema, async ({ params }) => callEcho(params));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void server.close().catch(() => {}));
      await server.connect(transport);
      await transport.handleRequest(req, res, sdkBody(body));
    });
    return {
      url: loopbackUrl(listener.port, '/mcp'),
      supports: () => ['2025-03-26', '2025-06-18'],
      close: () => listener.close(),
    };
  },
};
