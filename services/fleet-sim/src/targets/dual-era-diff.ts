// A server that speaks both eras but does not serve the same thing in each (seed 000, "Cross-era
// checks"): the SDK's factory is told which era it builds for, and this one builds two surfaces
// that differ in exactly two places — `export_csv` exists only for legacy clients, and `lookup`
// takes an extra required `region` for modern ones. Everything else (echo, the resource, the
// prompt, the capabilities) is the same, so cross-era checks name exactly those two tools.
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SDK_VERSIONS } from '../sdk-versions';
import type { RunningTarget, TargetContext, TargetDefinition } from '../target';
import { serveV2, v2Endpoint } from '../v2';

/** The tool only legacy clients see. */
export const DUAL_ERA_LEGACY_ONLY_TOOL = 'export_csv';
/** The tool whose input schema differs: modern clients must also send `region`. */
export const DUAL_ERA_CHANGED_TOOL = 'lookup';
export const DUAL_ERA_RESOURCE_URI = 'mcp-fleet://dual-era/readme';

type Era = 'legacy' | 'modern';

export function createDualEraServer(name: string, era: Era): McpServer {
  const server = new McpServer({ name, version: SDK_VERSIONS['@modelcontextprotocol/server'] });
  server.registerTool(
    'echo',
    { description: 'Echoes the given text.', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  const lookup = era === 'modern' ? z.object({ id: z.string(), region: z.string() }) : z.object({ id: z.string() });
  server.registerTool(
    DUAL_ERA_CHANGED_TOOL,
    { description: 'Looks an order up by id.', inputSchema: lookup, annotations: { readOnlyHint: true } },
    async (args) => ({ content: [{ type: 'text', text: `order ${(args as { id: string }).id}` }] }),
  );
  if (era === 'legacy') {
    server.registerTool(
      DUAL_ERA_LEGACY_ONLY_TOOL,
      { description: 'Exports the orders as CSV.', inputSchema: z.object({}), annotations: { readOnlyHint: true } },
      async () => ({ content: [{ type: 'text', text: 'id\n' }] }),
    );
  }
  server.registerResource(
    'readme',
    DUAL_ERA_RESOURCE_URI,
    { description: 'What this server is.', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'A dual-era server.' }] }),
  );
  server.registerPrompt(
    'summarize',
    { description: 'Asks for a summary of the text.', argsSchema: { text: z.string() } },
    ({ text }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${text}` } }] }),
  );
  return server;
}

async function start(ctx: TargetContext): Promise<RunningTarget> {
  const { name } = ctx;
  const endpoint = v2Endpoint(name, { legacy: 'stateless', create: ({ era }) => createDualEraServer(name, era) });
  return serveV2(ctx, endpoint, () => ['2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28']);
}

export const dualEraDiff: TargetDefinition = {
  name: 'dual-era-diff',
  kind: 'sdk',
  description:
    'SDK 2.4 createMcpHandler serving two surfaces: export_csv only for legacy, lookup needs region for modern',
  start,
};
