// The clean conformance baseline: an SDK 2.4 McpServer that declares tools, resources and prompts,
// speaks 2026-07-28 and (statelessly) the 2025 revisions, and pages its tools/list. McpServer has no
// pagination of its own (its tools/list handler returns every tool at once), so the one hand-written
// part is a tools/list handler on the SDK's own Server that pages the same tools: what a server
// author with a longer catalogue writes. Every other answer is the SDK's own.
import { McpServer, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { ECHO_TOOL } from '../echo';
import { SDK_VERSIONS } from '../sdk-versions';
import type { RunningTarget, TargetContext, TargetDefinition } from '../target';
import { serveV2, v2Endpoint } from '../v2';

/** Small on purpose: the catalogue's five tools come in three pages. */
export const CATALOGUE_PAGE_SIZE = 2;
export const CATALOGUE_RESOURCE_URI = 'mcp-fleet://catalogue/readme';
export const CATALOGUE_PROMPT = 'summarize';

const TEXT = z.object({ text: z.string() });
const TOOLS: { name: string; description: string; run: (text: string) => string }[] = [
  { name: 'echo', description: 'Echoes the given text.', run: (text) => text },
  { name: 'upper', description: 'The text in upper case.', run: (text) => text.toUpperCase() },
  { name: 'lower', description: 'The text in lower case.', run: (text) => text.toLowerCase() },
  { name: 'reverse', description: 'The text backwards.', run: (text) => [...text].reverse().join('') },
  { name: 'length', description: 'How many characters the text has.', run: (text) => String([...text].length) },
];
export const CATALOGUE_TOOL_NAMES: readonly string[] = TOOLS.map((tool) => tool.name);

/** The listed form of every tool: the same JSON schema the shared echo tool lists for `{ text }`. */
const LISTED = TOOLS.map(({ name, description }) => ({ name, description, inputSchema: ECHO_TOOL.inputSchema }));

/** A cursor is the offset of the page's first tool; anything else is a client's invalid params. */
function offsetOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const offset = /^tools:(\d{1,4})$/.exec(cursor)?.[1];
  if (offset === undefined || Number(offset) >= LISTED.length) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
  }
  return Number(offset);
}

export function createCatalogueServer(name: string): McpServer {
  const server = new McpServer({ name, version: SDK_VERSIONS['@modelcontextprotocol/server'] });
  for (const tool of TOOLS) {
    server.registerTool(tool.name, { description: tool.description, inputSchema: TEXT }, async ({ text }) => ({
      content: [{ type: 'text', text: tool.run(text) }],
    }));
  }
  // Replaces McpServer's unpaged tools/list (registered by the first registerTool) with a paged one.
  server.server.setRequestHandler('tools/list', async (request) => {
    const offset = offsetOf(request.params?.cursor);
    const next = offset + CATALOGUE_PAGE_SIZE;
    return {
      tools: LISTED.slice(offset, next),
      ...(next < LISTED.length ? { nextCursor: `tools:${next}` } : {}),
    };
  });
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

export async function startCatalogue(ctx: TargetContext): Promise<RunningTarget> {
  const { name } = ctx;
  const endpoint = v2Endpoint(name, { legacy: 'stateless', create: () => createCatalogueServer(name) });
  return serveV2(ctx, endpoint, () => ['2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28']);
}

export const catalogue: TargetDefinition = {
  name: 'catalogue',
  kind: 'sdk',
  description:
    'SDK 2.4 McpServer with tools (paged tools/list), a resource and a prompt; 2026-07-28 plus stateless 2025',
  start: startCatalogue,
};
