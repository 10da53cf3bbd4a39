// /mcp fed hostile input (fast-check, seeded): what an agent's client — or anything that reaches the
// port — may send. Every request, whatever its method, headers, session id, protocol version or body
// (JSON-RPC with real and made-up methods, tool calls with generated arguments, bytes that are no
// JSON), is answered below 500, the endpoint still serves a well-formed request afterwards, and a
// read token's requests write nothing. Trust boundary: the MCP client, as for the REST API.
import { servers as serversTable, tests as testsTable } from '@mcp-fleet/store';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MONITOR_TOOLS } from '../src';
import { ADMIN, type ControlFixture, controlFixture, READ } from './fixture';

const SEED = Number(process.env.MCP_FLEET_FUZZ_SEED ?? 20_260_728);

let fixture: ControlFixture;

beforeAll(async () => {
  // Only 127.0.0.1 may be probed, and nothing listens where generated URLs point.
  fixture = await controlFixture('mcp-fuzz', {
    fleet: 'regions: [eu-west]\nservers: []\npolicy: { allow: ["127.0.0.1/32"] }\n',
    control: { probeFloor: { allow: ['127.0.0.1/32'], deny: [] } },
  });
});

afterAll(() => fixture?.close());

const METHODS = [
  'initialize',
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'prompts/list',
  'prompts/get',
  'ping',
  'notifications/initialized',
  'completion/complete',
  'logging/setLevel',
  'subscriptions/listen',
];
const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28', '2099-01-01', ''];

const json = fc.jsonValue({ maxDepth: 3 });
const params = fc.oneof(
  json,
  fc.record({
    name: fc.oneof(fc.constantFrom(...MONITOR_TOOLS.map((t) => t.name)), fc.string()),
    arguments: fc.dictionary(
      fc.constantFrom('mcpUrl', 'id', 'name', 'type', 'mcpTier', 'mcpProtocolRevision', 'range', 'filter', 'uri'),
      json,
    ),
  }),
  fc.record(
    {
      protocolVersion: fc.constantFrom(...REVISIONS),
      _meta: fc.dictionary(fc.string({ maxLength: 40 }), json),
      uri: fc.oneof(fc.constant('mcp-fleet://servers/x'), fc.string()),
    },
    { requiredKeys: [] },
  ),
);
const message = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), json),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null)),
    method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 30 })),
    params,
  },
  { requiredKeys: [] },
);
/** A legacy opening with generated client info and capabilities: served (200) unless the headers spoil it. */
const initialize = fc
  .record({
    id: fc.integer(),
    protocolVersion: fc.constantFrom(...REVISIONS),
    capabilities: fc.dictionary(fc.string({ maxLength: 20 }), json),
    clientInfo: fc.record({ name: fc.string({ maxLength: 60 }), version: fc.string({ maxLength: 20 }) }),
  })
  .map(({ id, ...params }) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params }));
const body = fc.oneof(
  initialize,
  message.map((m) => JSON.stringify(m)),
  fc.array(message, { maxLength: 4 }).map((m) => JSON.stringify(m)),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
);
/** Mostly absent: a header that is there in one request of `1 + rarity`. */
const sometimes = <T>(a: fc.Arbitrary<T>, rarity = 3) =>
  fc.oneof({ weight: rarity, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: a });

const request = fc.record({
  method: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'DELETE', 'PUT'),
  token: fc.constantFrom(ADMIN, READ),
  version: sometimes(fc.constantFrom(...REVISIONS), 1),
  session: sometimes(
    fc.oneof(
      fc.uuid(),
      fc.string({ maxLength: 40 }).filter((s) => /^[\x21-\x7e]*$/.test(s)),
    ),
  ),
  accept: fc.constantFrom(
    'application/json, text/event-stream',
    'application/json, text/event-stream',
    'application/json',
    '*/*',
  ),
  contentType: fc.constantFrom(
    'application/json',
    'application/json',
    'text/plain',
    'application/json; charset=latin1',
  ),
  mcpMethod: sometimes(fc.constantFrom(...METHODS)),
  body,
});

async function fleetRows(): Promise<string> {
  const [s, t] = await Promise.all([
    fixture.store.db.select().from(serversTable),
    fixture.store.db.select().from(testsTable),
  ]);
  return JSON.stringify([s, t]);
}

describe('/mcp, fuzzed', () => {
  it('answers every request below 500, keeps serving, and writes nothing for a read token', async () => {
    const before = await fleetRows();
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const res = await fetch(`${fixture.control.url}/mcp`, {
          method: r.method,
          headers: {
            authorization: `Bearer ${r.token}`,
            accept: r.accept,
            'content-type': r.contentType,
            ...(r.version !== null ? { 'mcp-protocol-version': r.version } : {}),
            ...(r.session !== null ? { 'mcp-session-id': r.session } : {}),
            ...(r.mcpMethod !== null ? { 'mcp-method': r.mcpMethod } : {}),
          },
          body: r.method === 'GET' || r.method === 'DELETE' ? undefined : r.body,
          signal: AbortSignal.timeout(10_000),
        });
        // An SSE answer may stay open (a GET stream): read what is there, then let it go.
        await res.body?.cancel();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(res.status, `${r.method} ${r.body.slice(0, 200)}`).toBeLessThan(500);
      }),
      { seed: SEED, numRuns: 300, endOnFailure: true },
    );
    // The generated requests reached the MCP handlers, not only the gate: some were served.
    expect([...statuses.keys()], JSON.stringify([...statuses])).toContain(200);
    // Still serving: a well-formed modern request after all of that.
    const ok = await fetch(`${fixture.control.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${READ}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'after', version: '0' } },
      }),
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('mcp-fleet');
    // Generated admin calls could not reach a probe (nothing listens on 127.0.0.1 where they point,
    // and the policy refuses every other address), so no test was saved; a read token writes nothing.
    expect(await fleetRows()).toBe(before);
  }, 120_000);
});
