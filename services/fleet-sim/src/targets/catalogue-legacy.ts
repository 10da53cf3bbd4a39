// The legacy twin of `catalogue`: an SDK 1.32 McpServer with the same tools, resource and prompt,
// on stateful Streamable HTTP sessions (the sessions generation). The legacy defect targets stand
// in front of it, so a legacy check that needs a declared resources or prompts capability can fail.
import { randomUUID } from 'node:crypto';
import { McpServer } from 'mcp-sdk-1-32/server/mcp.js';
import { StreamableHTTPServerTransport } from 'mcp-sdk-1-32/server/streamableHttp.js';
import * as z from 'zod';
import { SDK_VERSIONS } from '../sdk-versions';
import { listenHttp, pathOf, sendText } from '../serve';
import { StreamableSessions } from '../sessions';
import { loopbackUrl, type RunningTarget, type TargetContext, type TargetDefinition } from '../target';
import { CATALOGUE_PROMPT, CATALOGUE_RESOURCE_URI } from './catalogue';

function createServer(name: string): McpServer {
  const server = new McpServer({ name, version: SDK_VERSIONS['mcp-sdk-1-32'] });
  server.registerTool(
    'echo',
    { description: 'Echoes the given text.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerResource(
    'readme',
    CATALOGUE_RESOURCE_URI,
    { description: 'What this catalogue is.', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'The fleet-sim catalogue.' }] }),
  );
  server.registerPrompt(
    CATALOGUE_PROMPT,
    { description: 'Asks for a summary of the text.', argsSchema: { text: z.string() } },
    ({ text }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${text}` } }] }),
  );
  return server;
}

export async function startCatalogueLegacy({ name, port, log }: TargetContext): Promise<RunningTarget> {
  const streamable = new StreamableSessions(async (onInitialized) => {
    const server = createServer(name);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: onInitialized,
    });
    await server.connect(transport);
    return { transport, close: () => server.close() };
  });
  const listener = await listenHttp(name, port, log, async (req, res, body) => {
    if (pathOf(req) !== '/mcp') return sendText(res, 404, 'text/plain', 'Not Found');
    await streamable.handle(req, res, body);
  });
  return {
    url: loopbackUrl(listener.port, '/mcp'),
    supports: () => ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'],
    async close() {
      await Promise.all([listener.close(), streamable.closeAll()]);
    },
  };
}

export const catalogueLegacy: TargetDefinition = {
  name: 'catalogue-legacy',
  kind: 'sdk',
  description: 'SDK 1.32 McpServer with tools, a resource and a prompt on stateful Streamable HTTP sessions',
  start: startCatalogueLegacy,
};
