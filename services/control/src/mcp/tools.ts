// The monitor's MCP tools. Names and argument names are the hosted monitor's (seed 001:
// detect_mcp_protocol {mcpUrl, mcpCredentialId}, create_api_test / update_api_test with mcpTier and
// mcpProtocolRevision, omitted = NEWEST_SUPPORTED). Each tool is a few calls to the REST API through
// an ApiCaller, so the API's validation, target policy, pin-first rule and scopes hold here too; a
// tool adds only the mapping between the hosted monitor's words and ours.
//
// Trust boundary: a tool's arguments come from an agent (a model, possibly steered by what it read)
// and are hostile: the SDK validates them against inputSchema, and the API validates them again.
// An "API test" is one of our tests: a server (by name, at mcpUrl) and one test on it.
import { REVISIONS } from '@mcp-fleet/probe';
import { z } from 'zod';
import type { Scope } from '../auth';
import type { ApiCaller } from './caller';

const REVISION_NAMES = REVISIONS.map((r) => r.revision) as [string, ...string[]];
const RANGE_NAMES = ['1h', '24h', '7d', '30d'] as const;

/** What a tool needs of the caller: read tools list, admin tools change the fleet or make control probe. */
export interface MonitorTool {
  name: string;
  title: string;
  description: string;
  needs: Scope;
  /** The REST route a detection tool stands on is rate limited per caller (rate-limit.ts). */
  limited: boolean;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  inputSchema: z.ZodObject;
  outputSchema: z.ZodObject;
  run(caller: ApiCaller, args: never): Promise<Record<string, unknown>>;
}

// ---- output shapes: the fields a client may rely on; the rest passes through (looseObject) ----

const revisionEntry = z.looseObject({
  revision: z.string(),
  generation: z.string(),
  supported: z.boolean(),
  note: z.string(),
  sentence: z.string(),
});
const detectionOut = z.looseObject({
  outcome: z.enum(['DETECTED', 'NONE', 'RATE_LIMITED']),
  retryAfterHeader: z.string().nullable(),
  newestSupported: z.string().nullable(),
  serverInfo: z.unknown(),
  requests: z.number(),
  revisions: z.array(revisionEntry),
});
const serverItem = z.looseObject({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  health: z.string(),
  tests: z.array(z.unknown()),
  byRegion: z.array(z.unknown()),
});
const apiTest = z.object({
  id: z.string(),
  serverId: z.string(),
  serverName: z.string(),
  mcpUrl: z.string(),
  mcpTier: z.enum(['HANDSHAKE', 'CONFORMANCE']),
  mcpProtocolRevision: z.string(),
  intervalMs: z.number().nullable(),
  regions: z.array(z.string()).nullable(),
  mcpCredentialId: z.string().nullable(),
});
const checkOut = z.looseObject({
  target: z.string(),
  protocol: z.looseObject({ requested: z.string(), negotiated: z.string().nullable(), era: z.string().nullable() }),
  pass: z.boolean(),
  checks: z.array(
    z.looseObject({ id: z.string(), level: z.string(), status: z.enum(['pass', 'fail', 'skip']), message: z.string() }),
  ),
});

// ---- input pieces ----

const mcpUrl = z.string().max(2048).describe('The MCP endpoint, http:// or https://');
const credentialId = z
  .string()
  .uuid()
  .describe('A stored credential (GET /api/credentials): its headers are sent, only to its own origin');
const revisionArg = z
  .enum(['NEWEST_SUPPORTED', ...REVISION_NAMES])
  .describe('A dated revision pins the test; NEWEST_SUPPORTED (the default) follows the server');
const tierArg = z
  .enum(['HANDSHAKE', 'CONFORMANCE'])
  .describe('HANDSHAKE: the opening; CONFORMANCE: the MUST/SHOULD checks');
const intervalArg = z.string().max(16).describe('How often it runs, e.g. 60s, 5m, 1h');
const regionsArg = z.array(z.string().max(64)).min(1).max(32).describe('Regions that run it (default: every region)');

// ---- the API's answers as the tools read them ----

interface ServerDetail {
  id: string;
  name: string;
  url: string;
  regions: string[] | null;
  credentialId?: string | null;
  tests: { id: string; mode: string; pinnedRevision: string | null; depth: string; intervalMs?: number | null }[];
  [k: string]: unknown;
}
interface TestRow {
  id: string;
  serverId: string;
  mode: string;
  pinnedRevision: string | null;
  depth: string;
  intervalMs: number | null;
}

const enc = encodeURIComponent;

async function listServers(caller: ApiCaller): Promise<ServerDetail[]> {
  return (await caller.call<{ servers: ServerDetail[] }>('GET', '/api/servers')).servers;
}

/** A server by id, or a live one by name; null when neither names one. */
async function findServer(caller: ApiCaller, idOrName: { id?: string; name?: string }): Promise<ServerDetail | null> {
  if (idOrName.id) {
    try {
      return (await caller.call<{ server: ServerDetail }>('GET', `/api/servers/${enc(idOrName.id)}`)).server;
    } catch (err) {
      if ((err as { status?: number }).status === 404) return null;
      throw err;
    }
  }
  const found = (await listServers(caller)).find((s) => s.name === idOrName.name);
  return found ? (await caller.call<{ server: ServerDetail }>('GET', `/api/servers/${found.id}`)).server : null;
}

function revisionBody(rev: string | undefined): string {
  return rev === undefined || rev === 'NEWEST_SUPPORTED' ? 'newest' : rev;
}
function depthBody(tier: 'HANDSHAKE' | 'CONFORMANCE'): string {
  return tier === 'CONFORMANCE' ? 'conformance' : 'handshake';
}

/** Our test in the hosted monitor's words. */
function asApiTest(test: TestRow, server: ServerDetail): z.output<typeof apiTest> {
  if (test.depth !== 'handshake' && test.depth !== 'conformance')
    throw new ToolError(`test ${test.id} is a ${test.depth} test: only HANDSHAKE and CONFORMANCE tests are API tests`);
  return {
    id: test.id,
    serverId: server.id,
    serverName: server.name,
    mcpUrl: server.url,
    mcpTier: test.depth === 'conformance' ? 'CONFORMANCE' : 'HANDSHAKE',
    mcpProtocolRevision: test.mode === 'pinned' && test.pinnedRevision ? test.pinnedRevision : 'NEWEST_SUPPORTED',
    intervalMs: test.intervalMs ?? null,
    regions: server.regions ?? null,
    mcpCredentialId: server.credentialId ?? null,
  };
}

/** A refusal a tool explains itself (the API's own refusals are ApiCallError). */
export class ToolError extends Error {
  override name = 'ToolError';
}

async function testOf(caller: ApiCaller, id: string): Promise<{ test: TestRow; server: ServerDetail }> {
  const { test } = await caller.call<{ test: TestRow & { retiredAt: string | null } }>('GET', `/api/tests/${enc(id)}`);
  if (test.retiredAt) throw new ToolError(`test ${id} was deleted`);
  const server = await findServer(caller, { id: test.serverId });
  if (!server) throw new ToolError(`test ${id}: its server is gone`);
  return { test, server };
}

// ---- the tools ----

const detect_mcp_protocol: MonitorTool = {
  name: 'detect_mcp_protocol',
  title: 'Detect MCP protocol',
  description:
    'Which of the five MCP protocol revisions a URL accepts, each probed on its own (at most 8 requests, 20 s). ' +
    'Not a run: nothing is saved. Outcome DETECTED, NONE (a normal answer, with evidence per revision) or RATE_LIMITED.',
  needs: 'admin',
  limited: true,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  inputSchema: z.object({ mcpUrl, mcpCredentialId: credentialId.optional() }),
  outputSchema: detectionOut,
  run: async (caller, args: { mcpUrl: string; mcpCredentialId?: string }) =>
    caller.call('POST', '/api/detect', {
      url: args.mcpUrl,
      ...(args.mcpCredentialId ? { credentialId: args.mcpCredentialId } : {}),
    }),
};

const serverFilter = z.object({
  search: z.string().max(200).optional().describe('Part of the name or URL'),
  revision: z.string().max(32).optional().describe('Speaks this revision in some region'),
  era: z.enum(['legacy', 'modern']).optional(),
  region: z.string().max(64).optional(),
  health: z.enum(['failing', 'degraded', 'up', 'not_run']).optional(),
});

const ERA_OF = new Map(REVISIONS.map((r) => [r.revision as string, r.era as string]));

const list_servers: MonitorTool = {
  name: 'list_servers',
  title: 'List servers',
  description:
    'Every live server: its revision and state per region, its tests and how they stand. Filter by name or URL, revision, era, region or health.',
  needs: 'read',
  limited: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.object({ filter: serverFilter.optional() }),
  outputSchema: z.object({ servers: z.array(serverItem), total: z.number() }),
  run: async (caller, args: { filter?: z.output<typeof serverFilter> }) => {
    const f = args.filter ?? {};
    const all = await listServers(caller);
    const servers = all.filter((s) => {
      const regions = (s.byRegion ?? []) as { region: string; currentRevision: string | null }[];
      const inRegions = f.region ? regions.filter((r) => r.region === f.region) : regions;
      const health = s.health;
      return (
        (!f.search || `${s.name} ${s.url}`.toLowerCase().includes(f.search.toLowerCase())) &&
        (!f.region || inRegions.length > 0) &&
        (!f.revision || inRegions.some((r) => r.currentRevision === f.revision)) &&
        (!f.era || inRegions.some((r) => r.currentRevision && ERA_OF.get(r.currentRevision) === f.era)) &&
        (!f.health || health === f.health)
      );
    });
    return { servers, total: servers.length };
  },
};

const get_server: MonitorTool = {
  name: 'get_server',
  title: 'Get a server',
  description:
    'One server (by id, or by name): what it speaks and its state per region, its tests with their last assertion, its latest detection, and the regions’ consensus.',
  needs: 'read',
  limited: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.object({ id: z.string().max(64).optional(), name: z.string().max(200).optional() }),
  outputSchema: z.object({ server: serverItem, regions: z.unknown() }),
  run: async (caller, args: { id?: string; name?: string }) => {
    if (!args.id === !args.name) throw new ToolError('give the server’s id or its name (one of them)');
    const server = await findServer(caller, args);
    if (!server) throw new ToolError(`no server ${args.id ?? JSON.stringify(args.name)}`);
    const regions = await caller.call('GET', `/api/servers/${server.id}/regions`);
    return { server, regions };
  },
};

interface EraMoveRow {
  downgrade: boolean;
  eraChanged: boolean;
  fromRevision: string | null;
  toRevision: string | null;
  [k: string]: unknown;
}

const list_era_moves: MonitorTool = {
  name: 'list_era_moves',
  title: 'List era moves',
  description:
    'Revision changes across the fleet, newest first: era moves ("now 2026-07-28, was 2025-11-25"), downgrades and upgrades, each with its server, region, run and state (confirmed, flapping…).',
  needs: 'read',
  limited: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.object({
    range: z.enum(RANGE_NAMES).default('24h'),
    region: z.string().max(64).optional(),
    kind: z
      .enum(['all', 'era', 'downgrade', 'upgrade'])
      .default('all')
      .describe('era: the era changed; downgrade / upgrade: to an older / newer revision'),
    server: z.string().max(64).optional().describe('A server id'),
    view: z.enum(['confirmed', 'raw']).default('confirmed').describe('confirmed: as judged across runs and regions'),
  }),
  outputSchema: z.object({ moves: z.array(z.looseObject({ toRevision: z.string().nullable() })) }),
  run: async (caller, args: { range: string; region?: string; kind: string; server?: string; view: string }) => {
    const q = new URLSearchParams({ range: args.range, view: args.view, limit: '500' });
    if (args.region) q.set('region', args.region);
    if (args.server) q.set('server', args.server);
    const { moves } = await caller.call<{ moves: EraMoveRow[] }>('GET', `/api/era-moves?${q}`);
    const kept = moves.filter(
      (m) =>
        args.kind === 'all' ||
        (args.kind === 'era' && m.eraChanged) ||
        (args.kind === 'downgrade' && m.downgrade) ||
        (args.kind === 'upgrade' && !m.downgrade && m.fromRevision !== null && m.toRevision !== null),
    );
    return { moves: kept };
  },
};

const get_fleet_summary: MonitorTool = {
  name: 'get_fleet_summary',
  title: 'Fleet summary',
  description:
    'The fleet in figures: servers by state, by revision and era, failing pinned tests, downgrades and era moves in the range.',
  needs: 'read',
  limited: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.object({ range: z.enum(RANGE_NAMES).default('24h') }),
  outputSchema: z.looseObject({}),
  run: async (caller, args: { range: string }) => caller.call('GET', `/api/fleet/summary?range=${args.range}`),
};

const createArgs = z.object({
  type: z.literal('MCP'),
  name: z.string().min(1).max(200).describe('The server’s name: a test on a server of that name and URL joins it'),
  mcpUrl,
  mcpTier: tierArg.default('HANDSHAKE'),
  mcpProtocolRevision: revisionArg.optional(),
  regions: regionsArg.optional(),
  interval: intervalArg.optional(),
  mcpCredentialId: credentialId.optional(),
});

const create_api_test: MonitorTool = {
  name: 'create_api_test',
  title: 'Create an MCP test',
  description:
    'Watch an MCP server: one test at HANDSHAKE or CONFORMANCE depth, on the newest revision it supports or pinned to one. ' +
    'A pinned test runs once first and is refused, with the reason, if it fails today. ' +
    'A test whose name is a server already watched at the same URL joins that server.',
  needs: 'admin',
  limited: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  inputSchema: createArgs,
  outputSchema: z.object({ test: apiTest, createdServer: z.boolean() }),
  run: async (caller, args: z.output<typeof createArgs>) => {
    const test = {
      revision: revisionBody(args.mcpProtocolRevision),
      depth: depthBody(args.mcpTier),
      ...(args.interval ? { interval: args.interval } : {}),
    };
    const existing = await findServer(caller, { name: args.name });
    if (existing) {
      if (existing.url !== args.mcpUrl)
        throw new ToolError(
          `a server named ${JSON.stringify(args.name)} already watches ${existing.url}: use another name for ${args.mcpUrl}`,
        );
      if (args.regions || args.mcpCredentialId)
        await caller.call('PATCH', `/api/servers/${existing.id}`, {
          ...(args.regions ? { regions: args.regions } : {}),
          ...(args.mcpCredentialId ? { credentialId: args.mcpCredentialId } : {}),
        });
      const { test: created } = await caller.call<{ test: TestRow }>('POST', `/api/servers/${existing.id}/tests`, test);
      const server = (await findServer(caller, { id: existing.id })) ?? existing;
      return { test: asApiTest({ ...created, serverId: server.id }, server), createdServer: false };
    }
    const { server } = await caller.call<{ server: ServerDetail }>('POST', '/api/servers', {
      name: args.name,
      url: args.mcpUrl,
      ...(args.regions ? { regions: args.regions } : {}),
      ...(args.mcpCredentialId ? { credentialId: args.mcpCredentialId } : {}),
      tests: [test],
    });
    const created = server.tests[0];
    if (!created) throw new ToolError('the server was created without its test');
    return {
      test: asApiTest({ ...created, serverId: server.id, intervalMs: created.intervalMs ?? null }, server),
      createdServer: true,
    };
  },
};

const updateArgs = z.object({
  id: z.string().max(64).describe('The test’s id, as create_api_test answered it'),
  mcpTier: tierArg.optional(),
  mcpProtocolRevision: revisionArg.optional(),
  interval: intervalArg.optional(),
  regions: regionsArg.optional(),
  mcpCredentialId: credentialId.optional(),
});

const update_api_test: MonitorTool = {
  name: 'update_api_test',
  title: 'Update an MCP test',
  description:
    'Change a test’s revision (NEWEST_SUPPORTED or a pin), depth, interval, regions or credential. A new revision or depth is a new test ' +
    '(its own history): the pin runs first, and only if it passes is the old test replaced; the answer names both ids.',
  needs: 'admin',
  limited: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  inputSchema: updateArgs,
  outputSchema: z.object({ test: apiTest, replaced: z.string().nullable() }),
  run: async (caller, args: z.output<typeof updateArgs>) => {
    let { test, server } = await testOf(caller, args.id);
    if (args.regions || args.mcpCredentialId) {
      await caller.call('PATCH', `/api/servers/${server.id}`, {
        ...(args.regions ? { regions: args.regions } : {}),
        ...(args.mcpCredentialId ? { credentialId: args.mcpCredentialId } : {}),
      });
      server = (await findServer(caller, { id: server.id })) ?? server;
    }
    const now = asApiTest(test, server);
    const revision = args.mcpProtocolRevision ?? now.mcpProtocolRevision;
    const tier = args.mcpTier ?? now.mcpTier;
    let replaced: string | null = null;
    if (revision !== now.mcpProtocolRevision || tier !== now.mcpTier) {
      // Created first (a pin runs and may be refused), retired after: a refusal leaves the old test watching.
      const { test: created } = await caller.call<{ test: TestRow }>('POST', `/api/servers/${server.id}/tests`, {
        revision: revisionBody(revision),
        depth: depthBody(tier),
        ...(args.interval ? { interval: args.interval } : test.intervalMs ? { intervalMs: test.intervalMs } : {}),
      });
      await caller.call('DELETE', `/api/tests/${test.id}`);
      replaced = test.id;
      test = { ...created, serverId: server.id };
    } else if (args.interval) {
      test = {
        ...(await caller.call<{ test: TestRow }>('PATCH', `/api/tests/${test.id}`, { interval: args.interval })).test,
        serverId: server.id,
      };
    }
    return { test: asApiTest(test, server), replaced };
  },
};

const delete_api_test: MonitorTool = {
  name: 'delete_api_test',
  title: 'Delete an MCP test',
  description:
    'Stop a test (its history is kept, read-only). When it was its server’s last test, the server is retired too.',
  needs: 'admin',
  limited: false,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  inputSchema: z.object({ id: z.string().max(64) }),
  outputSchema: z.object({ deleted: z.string(), serverRetired: z.boolean() }),
  run: async (caller, args: { id: string }) => {
    const { test, server } = await testOf(caller, args.id);
    await caller.call('DELETE', `/api/tests/${test.id}`);
    const left = (await findServer(caller, { id: server.id }))?.tests.filter((t) => t.id !== test.id) ?? [];
    if (left.length === 0) await caller.call('DELETE', `/api/servers/${server.id}`);
    return { deleted: test.id, serverRetired: left.length === 0 };
  },
};

const run_check: MonitorTool = {
  name: 'run_check',
  title: 'Run a conformance check',
  description:
    'Check an MCP server against the protocol’s MUST and SHOULD rules for the era it speaks (or the one asked): each check pass, fail or skip with its message. Nothing is saved.',
  needs: 'admin',
  limited: true,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  inputSchema: z.object({
    mcpUrl,
    protocol: z
      .enum(['auto', 'legacy', ...REVISION_NAMES])
      .default('auto')
      .describe('auto: the newest the server speaks; legacy: the 2025 sessions era; or a dated revision'),
    mcpCredentialId: credentialId.optional(),
  }),
  outputSchema: checkOut,
  run: async (caller, args: { mcpUrl: string; protocol: string; mcpCredentialId?: string }) =>
    caller.call('POST', '/api/check', {
      url: args.mcpUrl,
      protocol: args.protocol,
      ...(args.mcpCredentialId ? { credentialId: args.mcpCredentialId } : {}),
    }),
};

/** Every tool, in the order a client lists them. */
export const MONITOR_TOOLS: readonly MonitorTool[] = [
  detect_mcp_protocol,
  list_servers,
  get_server,
  list_era_moves,
  get_fleet_summary,
  create_api_test,
  update_api_test,
  delete_api_test,
  run_check,
];

/** The tools a scope may use: a read token sees the read-only ones that send no traffic. */
export function toolsFor(scope: Scope): MonitorTool[] {
  return MONITOR_TOOLS.filter((t) => t.needs === 'read' || scope === 'admin');
}
