// The monitor's MCP resources: the fleet summary, and each server's page as JSON (what on-call
// reads on its dashboard page: state per region, tests, latest detection, consensus, recent runs).
// Read through the same API calls as the tools, so a read token reads them.
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import type { ApiCaller } from './caller';

export const FLEET_SUMMARY_URI = 'mcp-fleet://fleet/summary';
export const SERVER_URI_TEMPLATE = 'mcp-fleet://servers/{id}';

const json = (uri: URL, value: unknown) => ({
  contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }],
});

/** A server's page as one JSON document. */
export async function serverPage(caller: ApiCaller, id: string): Promise<Record<string, unknown>> {
  const enc = encodeURIComponent(id);
  const [{ server }, regions, { runs }] = await Promise.all([
    caller.call<{ server: unknown }>('GET', `/api/servers/${enc}`),
    caller.call('GET', `/api/servers/${enc}/regions`),
    caller.call<{ runs: unknown[] }>('GET', `/api/servers/${enc}/runs?limit=20`),
  ]);
  return { server, regions, runs };
}

export function registerResources(server: McpServer, caller: ApiCaller): void {
  server.registerResource(
    'fleet-summary',
    FLEET_SUMMARY_URI,
    {
      title: 'Fleet summary',
      description:
        'Servers by state, revision and era; failing pinned tests, downgrades and era moves in the last 24 h',
      mimeType: 'application/json',
    },
    async (uri) => json(uri, await caller.call('GET', '/api/fleet/summary?range=24h')),
  );
  server.registerResource(
    'server',
    new ResourceTemplate(SERVER_URI_TEMPLATE, {
      list: async () => {
        const { servers } = await caller.call<{ servers: { id: string; name: string; url: string }[] }>(
          'GET',
          '/api/servers',
        );
        return {
          resources: servers.map((s) => ({
            uri: `mcp-fleet://servers/${s.id}`,
            name: s.name,
            description: `The page of ${s.name} (${s.url})`,
            mimeType: 'application/json',
          })),
        };
      },
    }),
    {
      title: 'Server page',
      description:
        'One server: state per region, tests and their last assertion, latest detection, consensus, recent runs',
      mimeType: 'application/json',
    },
    async (uri, variables) => json(uri, await serverPage(caller, String(variables.id))),
  );
}
