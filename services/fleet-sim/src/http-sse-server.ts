import type { ServerResponse } from 'node:http';
import { Server } from 'mcp-sdk-1-9/server/index.js';
import { SSEServerTransport } from 'mcp-sdk-1-9/server/sse.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from 'mcp-sdk-1-9/types.js';
import { callEcho, ECHO_TOOL } from './echo';
import { SDK_VERSIONS } from './sdk-versions';
import type { SseSession } from './sse-sessions';

/**
 * An SDK 1.9 server (2024-11-05, the HTTP+SSE transport) on the stream `res`; connecting
 * sends the `endpoint` event `<endpoint>?sessionId=…`.
 */
export async function openHttpSseSession(name: string, endpoint: string, res: ServerResponse): Promise<SseSession> {
  const server = new Server({ name, version: SDK_VERSIONS['mcp-sdk-1-9'] }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [ECHO_TOOL] }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => callEcho(params));
  const transport = new SSEServerTransport(endpoint, res);
  await server.connect(transport);
  return { transport, close: () => server.close() };
}
