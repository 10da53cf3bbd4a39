// Fuzzing the management API and the fleet file (fast-check, seeded so CI is reproducible): every
// route, fed generated bad input, answers 4xx with a JSON { error } that names what is wrong, never
// a 5xx, and writes nothing (servers and tests are compared row for row before and after, in a real
// store: PGlite in a temporary directory). parseFleet throws FleetFileError and nothing else, and
// promptly. The target policy allows 127.0.0.1 alone and denies every other address, so generated
// URLs that are not loopback are refused with 400 before any connection (and the loopback guard,
// testkit's loopback-guard.ts, would fail the test if one were dialled).
//
// MCP_FLEET_FUZZ_SEED=<n> runs another seed; MCP_FLEET_FUZZ_RUNS=<factor> scales every property's runs.
import { mkdtempSync, rmSync } from 'node:fs';
import {
  createServer,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type Server,
} from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Bus, createMemoryBus } from '@mcp-fleet/bus';
import {
  fleetFromObject,
  headerMap,
  PROBE_OWNED_HEADERS,
  parseDuration,
  revisionChoice,
  serverName,
  targetUrl,
} from '@mcp-fleet/config';
import { createLogger } from '@mcp-fleet/log';
import { openStore, type Store, servers as serversTable, tests as testsTable } from '@mcp-fleet/store';
import { LOOPBACK_FLOOR } from '@mcp-fleet/testkit';
import { takeViolations } from '@mcp-fleet/testkit/loopback-guard';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type Control, FleetFileError, parseFleet, startControl } from '../src';
import { CreateServer, PatchServer } from '../src/server-body';

const SEED = Number(process.env.MCP_FLEET_FUZZ_SEED ?? 20_260_728);
const SCALE = Number(process.env.MCP_FLEET_FUZZ_RUNS ?? 1);
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
/** fast-check's report, with runs of one character (the huge inputs) cut short. */
function report<T>(details: fc.RunDetails<T>): void {
  if (!details.failed) return;
  const message = fc.defaultReportMessage(details) ?? 'the property failed';
  throw new Error(
    message.replace(/(.)\1{100,}/gs, (run, c: string) => `${c}…(${run.length} times)`),
    { cause: details.errorInstance },
  );
}
const check = <T>(property: fc.IAsyncProperty<T> | fc.IProperty<T>, numRuns: number) =>
  fc.assert(property as fc.IAsyncProperty<T>, {
    seed: SEED,
    numRuns: runs(numRuns),
    endOnFailure: true,
    reporter: report,
  });
/** A value fast-check reports by a label (deep or huge ones would not print). */
function labelled<T extends object>(value: T, label: string): T {
  Object.defineProperty(value, fc.toStringMethod, { value: () => label, enumerable: false });
  return value;
}

const REGIONS = ['eu-west', 'us-east'];
const log = createLogger('fuzz', 'silent');

// --- the policy: 127.0.0.1 and nothing else ------------------------------------------------------

/** CIDRs covering every address of a `width`-bit family except the prefix `keep`/`prefix`. */
function complement(keep: bigint, width: number, prefix: number, format: (n: bigint) => string): string[] {
  const out: string[] = [];
  for (let i = 0; i < prefix; i += 1) {
    const shift = BigInt(width - i - 1);
    const network = ((keep >> shift) ^ 1n) << shift;
    out.push(`${format(network)}/${i + 1}`);
  }
  return out;
}
const v4 = (n: bigint) => [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join('.');
const v6 = (n: bigint) =>
  [...Array(8).keys()].map((i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
const DENY = [
  ...complement(0x7f000001n, 32, 32, v4),
  // IPv6: everything but ::ffff:0:0/96, whose addresses are judged as the IPv4 address they map.
  ...complement(0xffffn << 32n, 128, 96, v6),
];

// --- a monitor: control over PGlite and the in-process queue, and a sink on 127.0.0.1 -------------

let dir: string;
let store: Store;
let bus: Bus;
let control: Control;
let sink: Server;
let sinkPort: number;
let sinkRequests = 0;
let takenId: string;
let takenTestId: string;
const agent = new HttpAgent({ keepAlive: true, maxSockets: 4 });

beforeAll(async () => {
  sink = createServer((req, res) => {
    sinkRequests += 1;
    req.resume();
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  sinkPort = (sink.address() as AddressInfo).port;
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-fuzz-'));
  store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  bus = createMemoryBus({ log });
  const fleet = parseFleet(
    stringify({ regions: REGIONS, servers: [], policy: { allow: ['127.0.0.1/32'], deny: DENY } }),
    'fuzz fleet',
    {},
  );
  control = await startControl({ store, bus, log, fleet, port: 0, tickMs: 60_000, probeFloor: LOOPBACK_FLOOR });
  const created = await call('POST', '/api/servers', {
    json: { name: 'taken', url: sinkUrl('/mcp'), interval: '15m', headers: { Authorization: 'Bearer fuzz' } },
  });
  expect(created.status).toBe(201);
  const server = (created.json as { server: { id: string; tests: { id: string }[] } }).server;
  takenId = server.id;
  takenTestId = server.tests[0]!.id;
});

afterAll(async () => {
  agent.destroy();
  await control?.stop();
  await bus?.close();
  await store?.close();
  sink?.closeAllConnections();
  await new Promise((resolve) => sink?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sinkUrl = (path: string) => `http://127.0.0.1:${sinkPort}${path}`;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: unknown;
}

function call(
  method: string,
  path: string,
  opts: { json?: unknown; body?: string | Uint8Array; type?: string | undefined } = {},
): Promise<Answer> {
  const body = opts.json !== undefined ? JSON.stringify(opts.json) : opts.body;
  const type = opts.json !== undefined ? 'application/json' : opts.type;
  const port = Number(new URL(control.url).port);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: {
          ...(type !== undefined ? { 'content-type': type } : {}),
          ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Servers and tests, every row: a refused request leaves them exactly as they were. */
async function snapshot(): Promise<string> {
  const s = await store.db.select().from(serversTable).orderBy(serversTable.id);
  const t = await store.db.select().from(testsTable).orderBy(testsTable.id);
  return JSON.stringify([s, t]);
}

function errorOf(a: Answer): string {
  const e = (a.json as { error?: unknown } | undefined)?.error;
  return typeof e === 'string' ? e : '';
}

/** 4xx, JSON, `{ error }` with a sentence in it. */
function expectRefused(a: Answer, what: string): void {
  expect(a.status, `${what}: ${a.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(a.status, `${what}: ${a.text.slice(0, 300)}`).toBeLessThan(500);
  expect(a.headers['content-type'] ?? '', `${what}: ${a.status} ${JSON.stringify(a.headers)}`).toMatch(
    /^application\/json/,
  );
  expect(errorOf(a).length, `${what}: ${a.text.slice(0, 300)}`).toBeGreaterThan(0);
}

function expectNoLeaks(): void {
  expect(takeViolations()).toEqual([]);
}

// --- generators ----------------------------------------------------------------------------------

const anyText = fc.string({ unit: 'binary', maxLength: 60 });
const HUGE = [
  'x'.repeat(200_000),
  '\u{1F600}'.repeat(40_000),
  '%'.repeat(100_000),
  `http://127.0.0.1/${'a'.repeat(5_000)}`,
];
const huge = fc.constantFrom(...HUGE);
const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const deepValue = fc
  .integer({ min: 200, max: 1_000 })
  .map((n) => labelled(JSON.parse(deep(n)) as unknown[], `[[[…${n} deep…]]]`));
/** Anything JSON can carry that is not a string. */
const notString = fc.oneof(
  deepValue,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);
const notStringNorNull = notString.filter((v) => v !== null);
const notObject = fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.array(fc.integer(), { maxLength: 2 }));

/** Hosts that are not 127.0.0.1: refused by the policy, whatever the form. */
const refusedHost = fc
  .oneof(
    fc.ipV4Extended(),
    fc.ipV6().map((a) => `[${a}]`),
    fc.constantFrom(
      '127.0.0.2',
      '127.1.2.3',
      '0.0.0.0',
      '169.254.169.254',
      '[fd00:ec2::254]',
      '100.100.100.200',
      '[::1]',
      '[::ffff:169.254.169.254]',
      '[64:ff9b::a9fe:a9fe]',
      '2130706434',
      '0x7f000002',
      '10.0.0.1',
      '192.168.1.1',
      '8.8.8.8',
      '[2001:4860:4860::8888]',
    ),
  )
  .filter((h) => {
    try {
      const host = new URL(`http://${h}/`).hostname;
      return host !== '127.0.0.1' && host !== '[::ffff:7f00:1]';
    } catch {
      return false;
    }
  });
const refusedUrl = fc
  .tuple(fc.constantFrom('http', 'https'), refusedHost, fc.option(fc.integer({ min: 1, max: 65_535 })), fc.webPath())
  .map(([scheme, host, port, path]) => `${scheme}://${host}${port ? `:${port}` : ''}${path}`);
/** Strings the URL field can never take. */
const badUrlText = fc
  .oneof(
    anyText,
    huge,
    fc.constantFrom(
      '',
      'not a url',
      'http://',
      'http://[::1',
      'http://127.0.0.1:99999/',
      'ftp://127.0.0.1/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'gopher://127.0.0.1:5432/_',
      'ws://127.0.0.1/',
      'http://%zz/',
      'http://127.0.0.1/\u0000',
      ' http://127.0.0.1/',
      'http://127.0.0.1/ a',
      'http://127.0.0.1/\r\nHost: evil',
      'http://a\tb/',
      'data:text/plain,hi',
    ),
  )
  .filter((u) => !targetUrl.safeParse(u).success);
/** URLs on the sink (127.0.0.1): allowed. */
const loopbackUrl = fc
  .tuple(
    fc.constantFrom(
      'http://127.0.0.1:PORT',
      'http://localhost:PORT',
      'http://[::ffff:127.0.0.1]:PORT',
      'http://2130706433:PORT',
    ),
    fc.webPath(),
  )
  .map(([base, path]) => `${base.replace('PORT', String(sinkPort))}${path}`);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/;
const badHeaderValue = fc.oneof(
  notString,
  fc.constantFrom('a\r\nInjected: 1', 'a\u0000b', '€', 'x'.repeat(8_193), '\u0007'),
  anyText.filter((v) => !headerMap.safeParse({ 'X-A': v }).success),
);
const badHeaders = fc.oneof(
  notObject,
  fc.constant(null),
  fc.dictionary(
    fc.oneof(anyText, fc.constantFrom('', 'a b', 'a:b', 'é', 'x'.repeat(201))).filter((n) => !HEADER_NAME.test(n)),
    fc.constant('v'),
    { minKeys: 1, maxKeys: 3 },
  ),
  fc.dictionary(fc.constantFrom('X-A', 'Authorization', 'accept'), badHeaderValue, { minKeys: 1, maxKeys: 2 }),
  fc.constant(Object.fromEntries([...Array(51).keys()].map((i) => [`X-${i}`, 'v']))),
  // The headers the probe owns (Host, framing, the MCP session and version), in any case.
  fc.dictionary(
    fc
      .tuple(fc.constantFrom(...PROBE_OWNED_HEADERS), fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }))
      .map(([n, up]) => [...n].map((c, i) => (up[i] ? c.toUpperCase() : c)).join('')),
    fc.constant('v'),
    { minKeys: 1, maxKeys: 2 },
  ),
);
const goodHeaders = fc.dictionary(
  fc
    .stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/)
    .filter((n) => !(PROBE_OWNED_HEADERS as readonly string[]).includes(n.toLowerCase())),
  fc.string({ maxLength: 20 }).filter((v) => headerMap.safeParse({ a: v }).success),
  { maxKeys: 3 },
);
const badDuration = fc.oneof(
  notStringNorNull,
  fc.constant(null),
  anyText.filter((s) => parseDuration(s) === undefined),
  fc.constantFrom('1e400s', '9999999999h', '169h', '-1s', '1 d', '60 s', ''),
);
const badRevision = fc.oneof(
  notString,
  fc.constantFrom('2030-01-01', 'NEWEST', ' newest', '2025-06-18 '),
  anyText.filter((r) => !revisionChoice.safeParse(r).success),
);
const badTests = fc.oneof(
  notObject.filter((v) => !Array.isArray(v)),
  fc.constant(null),
  fc.constant([{ revision: 'newest' }, { revision: 'newest' }]),
  fc.array(fc.record({ revision: badRevision }), { minLength: 1, maxLength: 3 }),
  fc.constant([{ revision: 'newest', extra: 1 }]),
  fc.constant([null]),
  fc.constant([{}]),
);
const badRegions = fc.oneof(
  notObject.filter((v) => !Array.isArray(v)),
  fc.constant([]),
  fc.array(
    fc.oneof(
      notString,
      anyText.filter((r) => !REGIONS.includes(r)),
      fc.constantFrom('local', 'mars'),
    ),
    {
      minLength: 1,
      maxLength: 3,
    },
  ),
);
const badDetection = fc.oneof(
  fc.integer(),
  fc.string(),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.record({ interval: badDuration }),
  fc.record({ interval: fc.constantFrom('0s', '0ms', '999ms') }),
  fc.constant({ interval: '15m', extra: 1 }),
  fc.constant({}),
);
const badName = fc.oneof(
  notString,
  huge,
  fc.constantFrom('', 'a'.repeat(101), '-x', 'a b', 'é', '__proto__/'),
  anyText.filter((s) => !serverName.safeParse(s).success),
);

interface Field {
  valid: fc.Arbitrary<unknown>;
  broken: fc.Arbitrary<unknown>;
}

/**
 * One broken field, every other valid (or left out): the request must be refused, naming that field.
 * `known`: every key the route takes (a server's write takes back what GET shows, read-only keys too).
 */
function oneBroken(fields: Record<string, Field>, known: string[]) {
  const names = Object.keys(fields);
  const unknownKey = fc
    .oneof(anyText, fc.constantFrom('colour', 'id', 'source', 'retiredAt', 'name', 'tests', 'constructor'))
    .filter((k) => !known.includes(k) && k !== '__proto__');
  return fc.constantFrom(...names, '(unknown key)').chain((broken) =>
    fc
      .record({
        ...Object.fromEntries(names.map((n) => [n, n === broken ? fields[n]!.broken : fields[n]!.valid])),
        extra: broken === '(unknown key)' ? fc.tuple(unknownKey, fc.jsonValue({ maxDepth: 2 })) : fc.constant(null),
      })
      .map(({ extra, ...body }) => {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(body)) if (v !== undefined) out[k] = v;
        if (extra) out[(extra as [string, unknown])[0]] = (extra as [string, unknown])[1];
        return { broken, body: out };
      }),
  );
}

/** The error names the broken field: `field: …`, `field.x: …` or an unrecognized key. */
function expectNamed(a: Answer, broken: string): void {
  const error = errorOf(a);
  if (broken === '(unknown key)') expect(error).toMatch(/Unrecognized key/);
  else expect(error.startsWith(`${broken}:`) || error.startsWith(`${broken}.`), `${broken} in: ${error}`).toBe(true);
}

const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

// --- the properties ------------------------------------------------------------------------------

describe('the management API, fuzzed', () => {
  it('every route, any method, path parameter, query, body and content type: never a 5xx, nothing written', async () => {
    const routes = control.routes.map((r) => ({ method: r.method, pattern: r.pattern }));
    expect(routes.length).toBeGreaterThanOrEqual(15);
    const known = new Set([takenId, takenTestId]);
    const param = fc.oneof(
      anyText.map(encodeURIComponent),
      fc.uuid().filter((u) => !known.has(u)),
      fc.constantFrom('%zz', '%', '%E0%A4%A', '%00', '%2F', '%2e%2e', 'null', '0', '-1', '1e309', '%C3%A9'),
      fc.constantFrom(
        '00000000-0000-0000-0000-000000000000',
        'ffffffff-ffff-ffff-ffff-ffffffffffff',
        'x'.repeat(5_000),
      ),
    );
    const queryValue = fc.oneof(
      anyText,
      fc.integer().map(String),
      fc.double().map(String),
      fc.uuid(),
      fc.base64String({ maxLength: 40 }),
      fc.constantFrom('1h', '24h', '30d', '', '0', '-1', '501', '1e3', '+275760-09-13T00:00:00.000Z', '\u0000'),
    );
    const query = fc
      .array(fc.tuple(fc.constantFrom('range', 'since', 'limit', 'before', 'server', 'region', 'x'), queryValue), {
        maxLength: 4,
      })
      .map((pairs) => new URLSearchParams(pairs).toString());
    const body = fc.oneof(
      fc.constant(undefined),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
      fc.oneof(anyText, fc.constantFrom('{', '{"name":', '[1,]', 'NaN', "{'a':1}", '{"a":1}{"b":2}', '\uFEFF{}')),
      fc.uint8Array({ minLength: 1, maxLength: 200 }),
      fc.integer({ min: 1_000, max: 100_000 }).map((n) => labelled({ text: deep(n) }, `[[[…${n} deep…]]]`)),
      fc
        .integer({ min: 1_000, max: 50_000 })
        .map((n) => labelled({ text: `${'{"a":'.repeat(n)}1${'}'.repeat(n)}` }, `{"a":{"a":…${n} deep…}}`)),
      fc.constant(labelled({ text: JSON.stringify({ name: 'x'.repeat(900_000) }) }, '{"name":"xxx…900 KB"}')),
    );
    const type = fc.oneof(
      fc.constant(undefined),
      fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'application/yaml',
        'text/yaml',
        'application/x-yaml',
        'text/plain',
        'multipart/form-data; boundary=x',
        'APPLICATION/JSON',
        'application/json; charset=latin1',
        '',
        '*/*',
      ),
      fc.string({ maxLength: 40 }),
    );
    const methods = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS', 'HEAD'];
    const before = await snapshot();
    let requests = 0;
    await check(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.option(fc.constantFrom(...methods)),
        param,
        query,
        body,
        type,
        async (route, otherMethod, id, q, b, t) => {
          const method = otherMethod ?? route.method;
          const path = `${route.pattern.replace(/:[a-z]+/g, id)}${q ? `?${q}` : ''}`;
          // A valid fleet is not bad input (it would be applied): leave it out, as YAML or JSON.
          if (path.startsWith('/api/fleet?') || path === '/api/fleet') fc.pre(!validFleetBody(b));
          const text = typeof b === 'object' && b !== null && 'text' in b ? b.text : b;
          const a = await call(method, path, { body: text, type: t });
          requests += 1;
          expect(a.status, `${method} ${path.slice(0, 200)}: ${a.text.slice(0, 300)}`).toBeLessThan(500);
          if (a.status >= 400 && method !== 'HEAD') expectRefused(a, `${method} ${path.slice(0, 200)}`);
          expectNoLeaks();
        },
      ),
      1_000,
    );
    expect(await snapshot()).toBe(before);
    expect(requests).toBeGreaterThan(runs(800));
  });

  /** The fields POST and PATCH /api/servers share, valid and broken alike (same order in both). */
  const serverSettings = (): Record<string, Field> => ({
    headers: { valid: optional(goodHeaders), broken: badHeaders },
    regions: {
      valid: optional(fc.oneof(fc.constant(null), fc.subarray(REGIONS, { minLength: 1 }))),
      broken: badRegions,
    },
    interval: {
      valid: optional(fc.constantFrom('120s', '15m', '1h')),
      broken: fc.oneof(badDuration, fc.constant('10ms')),
    },
    timeout: {
      valid: optional(fc.constantFrom('500ms', '10s', '60s')),
      broken: fc.oneof(badDuration, fc.constant('121s')),
    },
  });
  const detectionField = (): Field => ({
    valid: optional(fc.constantFrom(null, { interval: '15m' })),
    broken: badDetection,
  });

  it('POST /api/servers with one broken field: 400 naming it, nothing written, no connection', async () => {
    const fields: Record<string, Field> = {
      name: { valid: fc.stringMatching(/^[A-Za-z][A-Za-z0-9._-]{0,20}$/), broken: badName },
      url: { valid: loopbackUrl, broken: fc.oneof(notString, badUrlText, refusedUrl, refusedUrl) },
      ...serverSettings(),
      tests: {
        valid: optional(
          fc.constantFrom([{ revision: 'newest' }], [], [{ revision: 'newest' }, { revision: '2025-06-18' }]),
        ),
        broken: badTests,
      },
      detection: detectionField(),
    };
    const before = await snapshot();
    const sinkBefore = sinkRequests;
    await check(
      fc.asyncProperty(oneBroken(fields, Object.keys(CreateServer.shape)), async ({ broken, body }) => {
        const a = await call('POST', '/api/servers', { json: body });
        expect(a.status, `${broken}: ${a.text.slice(0, 300)}`).toBe(400);
        expectRefused(a, broken);
        expectNamed(a, broken);
        expectNoLeaks();
      }),
      600,
    );
    expect(await snapshot()).toBe(before);
    // Every request was refused before a pinned test ran: nothing reached even the sink.
    expect(sinkRequests).toBe(sinkBefore);
  });

  it('POST /api/servers, valid but for a taken name or a pin that does not pass: 409 or 422, nothing written', async () => {
    const before = await snapshot();
    await check(
      fc.asyncProperty(
        fc.record({
          name: fc.constant('taken'),
          url: loopbackUrl,
          headers: goodHeaders,
          regions: fc.oneof(fc.constant(null), fc.subarray(REGIONS, { minLength: 1 })),
          tests: fc.constantFrom([{ revision: 'newest' }], [{ revision: '2025-03-26' }], []),
        }),
        async (body) => {
          const a = await call('POST', '/api/servers', { json: body });
          expectRefused(a, 'taken');
          expect([409, 422]).toContain(a.status);
          expect(errorOf(a)).toMatch(a.status === 409 ? /already exists/ : /^the pinned test did not pass/);
          expectNoLeaks();
        },
      ),
      60,
    );
    expect(await snapshot()).toBe(before);
  });

  it('PATCH /api/servers/:id with one broken field: 400 naming it, the server unchanged', async () => {
    const fields: Record<string, Field> = {
      url: { valid: optional(loopbackUrl), broken: fc.oneof(notStringNorNull, badUrlText, refusedUrl, refusedUrl) },
      ...serverSettings(),
      detection: detectionField(),
    };
    const before = await snapshot();
    await check(
      fc.asyncProperty(oneBroken(fields, Object.keys(PatchServer.shape)), async ({ broken, body }) => {
        const a = await call('PATCH', `/api/servers/${takenId}`, { json: body });
        expect(a.status, `${broken}: ${a.text.slice(0, 300)}`).toBe(400);
        expectRefused(a, broken);
        expectNamed(a, broken);
        expectNoLeaks();
      }),
      500,
    );
    expect(await snapshot()).toBe(before);
  });

  it('POST /api/servers/:id/tests: a bad revision is 400, a test it has 409, a pin that fails 422; nothing written', async () => {
    const before = await snapshot();
    const body = fc.oneof(
      fc.record({ revision: badRevision }).map((b) => ({ b, expect: 400 })),
      fc
        .jsonValue({ maxDepth: 2 })
        .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
        .map((b) => ({ b, expect: 400 })),
      fc.constant({ b: { revision: 'newest', x: 1 }, expect: 400 }),
      fc.constant({ b: { revision: 'newest' }, expect: 409 }),
      fc.constantFrom('2024-11-05', '2025-03-26', '2026-07-28').map((r) => ({ b: { revision: r }, expect: 422 })),
    );
    await check(
      fc.asyncProperty(body, async ({ b, expect: status }) => {
        const a = await call('POST', `/api/servers/${takenId}/tests`, { json: b });
        expectRefused(a, JSON.stringify(b));
        expect(a.status, a.text).toBe(status);
        if (status === 400) expect(errorOf(a)).toMatch(/^(revision|body)[:.]|Unrecognized key/);
        expectNoLeaks();
      }),
      100,
    );
    expect(await snapshot()).toBe(before);
  });

  it('POST /api/detect: loopback is detected, anything else 400 naming the field before any connection', async () => {
    const fields: Record<string, Field> = {
      url: { valid: loopbackUrl, broken: fc.oneof(notString, badUrlText, refusedUrl, refusedUrl, refusedUrl) },
      headers: { valid: optional(goodHeaders), broken: badHeaders },
      timeoutMs: {
        valid: optional(fc.integer({ min: 100, max: 2_000 })),
        broken: fc.oneof(
          notStringNorNull.filter((v) => typeof v !== 'number' || !Number.isInteger(v) || v < 100 || v > 20_000),
          fc.constant(null),
          fc.string(),
          fc.constantFrom(99, 20_001, 1.5, -1, 1e300),
        ),
      },
    };
    const allValid = fc.record({ url: loopbackUrl, headers: optional(goodHeaders) });
    const before = await snapshot();
    let detected = 0;
    await check(
      fc.asyncProperty(
        fc.oneof(
          { weight: 4, arbitrary: oneBroken(fields, Object.keys(fields)) },
          { weight: 1, arbitrary: allValid.map((body) => ({ broken: null, body })) },
        ),
        async ({ broken, body }) => {
          const sinkBefore = sinkRequests;
          const a = await call('POST', '/api/detect', { json: body });
          if (broken === null) {
            expect(a.status, a.text.slice(0, 300)).toBe(200);
            expect(a.json).toMatchObject({ outcome: 'NONE', newestSupported: null });
            detected += 1;
          } else {
            expect(a.status, `${broken}: ${a.text.slice(0, 300)}`).toBe(400);
            expectRefused(a, broken);
            expectNamed(a, broken);
            expect(sinkRequests).toBe(sinkBefore);
          }
          expectNoLeaks();
        },
      ),
      300,
    );
    expect(detected).toBeGreaterThan(0);
    expect(await snapshot()).toBe(before);
  });

  it('query parameters (range, since, limit, before cursors, server, region): 200 or 400 naming the parameter', async () => {
    const dateish = fc.oneof(
      fc.date({ noInvalidDate: false }).map((d) => (Number.isNaN(d.getTime()) ? 'Invalid Date' : d.toISOString())),
      fc.constantFrom(
        '+275760-09-13T00:00:00.000Z',
        '-271821-04-20T00:00:00.000Z',
        '0000-01-01T00:00:00Z',
        '9999-12-31T23:59:59.999Z',
        'yesterday',
        '',
      ),
      anyText,
    );
    const idish = fc.oneof(
      fc.integer().map(String),
      fc.constantFrom('1e300', '99999999999999999999', '-1', '9007199254740993', '1.5', 'NaN', '', '0x10'),
      anyText,
    );
    const cursor = fc.tuple(dateish, idish).map(([d, i]) => Buffer.from(`${d}|${i}`).toString('base64url'));
    const value = fc.oneof(
      fc.constantFrom('1h', '24h', '7d', '30d', '2020-01-01', '0', '-1', '500', '501', '1.5', '1e2', ' 5', '\u0000'),
      dateish,
      idish,
      cursor,
      fc.uuid(),
      fc.constant(takenId),
      fc.constantFrom('eu-west', 'EU-WEST', 'x'.repeat(3_000)),
    );
    const param = fc.constantFrom('range', 'since', 'limit', 'before', 'server', 'region');
    const path = fc.constantFrom(
      '/api/era-moves',
      '/api/fleet/summary',
      `/api/servers/${'ID'}/runs`,
      `/api/servers/${'ID'}/detection`,
      `/api/servers/${'ID'}/regions`,
      '/api/disagreements',
      '/api/servers',
    );
    await check(
      fc.asyncProperty(path, fc.array(fc.tuple(param, value), { minLength: 1, maxLength: 3 }), async (p, pairs) => {
        const url = `${p.replace('ID', takenId)}?${new URLSearchParams(pairs).toString()}`;
        const a = await call('GET', url);
        expect([200, 400], `${url}: ${a.text.slice(0, 300)}`).toContain(a.status);
        if (a.status === 400) {
          expectRefused(a, url);
          expect(errorOf(a)).toMatch(/^(range|since|limit|before|server|region): /);
        }
        expectNoLeaks();
      }),
      600,
    );
  });

  it('POST /api/fleet with bad YAML, bombs and wrong shapes: 400 naming the fleet file, nothing applied', async () => {
    const before = await snapshot();
    const regionsBefore = (await call('GET', '/api/regions')).json;
    await check(
      fc.asyncProperty(badFleetText(), async (text) => {
        fc.pre(text.length > 0 && !validFleet(text));
        const started = Date.now();
        const a = await call('POST', '/api/fleet', { body: text, type: 'application/yaml' });
        expect(a.status, a.text.slice(0, 300)).toBe(400);
        expectRefused(a, text.slice(0, 100));
        expect(errorOf(a)).toMatch(/^invalid fleet definition, nothing applied:\n {2}request body(:\d+:\d+)?: \S/);
        expect(Date.now() - started).toBeLessThan(5_000);
        expectNoLeaks();
      }),
      500,
    );
    expect(await snapshot()).toBe(before);
    // The policy and regions stand: nothing was applied.
    expect((await call('GET', '/api/regions')).json).toEqual(regionsBefore);
    const refused = await call('POST', '/api/detect', { json: { url: 'http://8.8.8.8/' } });
    expect(refused.status).toBe(400);
  });

  it('answers raw requests the client libraries would not send: malformed targets, invalid UTF-8, oversize bodies', async () => {
    const port = Number(new URL(control.url).port);
    const raw = (head: string, body: Buffer = Buffer.alloc(0)) =>
      new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        const socket = connect(port, '127.0.0.1', () => socket.end(Buffer.concat([Buffer.from(head, 'latin1'), body])));
        socket.on('data', (c: Buffer) => chunks.push(c));
        socket.on('error', reject);
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
      });
    const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);
    // Request targets: malformed ones are refused; absolute-form and the like are legal HTTP (the
    // host in them is not ours to judge) and may be answered, but never with a 5xx.
    const targets: [string, 'refused' | 'answered'][] = [
      ['/api/servers/%zz', 'refused'],
      ['/api/%', 'refused'],
      ['/api/servers/%E0%A4%A/runs', 'refused'],
      ['/api/era-moves?limit=%FF&region=%C0%AF', 'refused'],
      ['/api/servers/\xff\xfe', 'refused'],
      [`/api/servers/${'a'.repeat(10_000)}`, 'refused'],
      ['/api/servers/../../etc/passwd', 'refused'],
      ['//api/servers', 'refused'],
      ['*', 'refused'],
      ['http://evil.example/api/servers', 'answered'],
      ['/api/servers?%zz=%zz', 'answered'],
    ];
    for (const [target, expected] of targets) {
      const response = await raw(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      const status = statusOf(response);
      expect(status, `${target}: ${response.slice(0, 200)}`).toBeGreaterThanOrEqual(expected === 'refused' ? 400 : 200);
      expect(status, target).toBeLessThan(500);
    }
    await check(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.constantFrom('/api/servers', '/api/detect', `/api/servers/ID`, '/api/fleet'),
        async (bytes, p) => {
          const body = Buffer.from(bytes);
          const type = p === '/api/fleet' ? 'application/yaml' : 'application/json';
          const method = p.endsWith('/ID') ? 'PATCH' : 'POST';
          const response = await raw(
            `${method} ${p.replace('ID', takenId)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
            body,
          );
          const status = statusOf(response);
          expect(status, response.slice(0, 300)).toBeGreaterThanOrEqual(400);
          expect(status, response.slice(0, 300)).toBeLessThan(500);
        },
      ),
      200,
    );
    // The body cap: 1 MiB. One byte more is 413, and the connection is closed, not left for reuse.
    const before = await snapshot();
    const over = await call('POST', '/api/servers', { body: 'x'.repeat(1024 * 1024 + 1), type: 'application/json' });
    expect(over.status).toBe(413);
    expect(over.json).toEqual({ error: 'the request body is larger than 1 MiB' });
    expect(over.headers.connection).toBe('close');
    const big = await call('POST', '/api/fleet', {
      body: `# ${'y'.repeat(8 * 1024 * 1024)}`,
      type: 'application/yaml',
    });
    expect(big.status).toBe(413);
    expect((await call('GET', '/api/regions')).status).toBe(200);
    expect(await snapshot()).toBe(before);
  });
});

describe('parseFleet, fuzzed', () => {
  it('throws FleetFileError and nothing else, promptly, whatever the text', () => {
    let slowest = 0;
    let accepted = 0;
    check(
      fc.property(fc.oneof(badFleetText(), anyText, fc.string({ unit: 'binary', maxLength: 2_000 })), (text) => {
        const started = performance.now();
        try {
          parseFleet(text, 'fuzz.yaml', { TOKEN: 't' });
          accepted += 1;
        } catch (err) {
          if (!(err instanceof FleetFileError)) throw err;
          expect(err.message).toMatch(/^invalid fleet definition, nothing applied:\n {2}fuzz\.yaml(:\d+:\d+)?: \S/);
          for (const line of err.problems) expect(line).toMatch(/^fuzz\.yaml(:\d+:\d+)?: \S/);
          expect(err.problems.length).toBeGreaterThan(0);
        }
        slowest = Math.max(slowest, performance.now() - started);
      }),
      5_000,
    );
    expect(slowest).toBeLessThan(2_000);
    expect(accepted).toBeGreaterThan(0);
  });
});

// --- fleet files ---------------------------------------------------------------------------------

/** Whether control's API would apply this fleet text: `${NAME}` is refused there, never expanded. */
function validFleet(text: string): boolean {
  try {
    parseFleet(text, 'x', 'refuse');
    return true;
  } catch {
    return false;
  }
}

/** Whether POST /api/fleet could apply this body: as YAML text, or as JSON holding a fleet's text or its object form. */
function validFleetBody(body: unknown): boolean {
  if (typeof body !== 'string') return false;
  if (validFleet(body)) return true;
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value === 'string') return validFleet(value);
    fleetFromObject(value, 'x');
    return true;
  } catch {
    return false;
  }
}

function billionLaughs(levels: number, width: number): string {
  const lines = [`l0: &l0 [${Array(width).fill('"lol"').join(', ')}]`];
  for (let i = 1; i < levels; i += 1)
    lines.push(
      `l${i}: &l${i} [${Array(width)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    );
  return `${lines.join('\n')}\nregions: *l${levels - 1}\n`;
}

const NASTY_YAML = [
  billionLaughs(9, 9),
  billionLaughs(20, 2),
  billionLaughs(3, 60),
  'regions: *nowhere\n',
  'a: &a [*a]\n',
  '&x {servers: *x}\n',
  `servers:\n${Array(200).fill('  - &s {name: a, url: "https://a.example.com/"}\n  - *s').join('\n')}\n`,
  'servers:\n  - &m {name: a, url: "https://a.example.com/"}\n  - <<: *m\n',
  '---\nregions: [a]\n---\nregions: [b]\n',
  '!!set\n? regions\n',
  '!!omap\n- regions: [a]\n',
  'regions: !!binary aGVsbG8=\n',
  'regions: !!js/function "function(){}"\n',
  '%TAG ! tag:evil,2000:\n---\nregions: !x [a]\n',
  '%YAML 1.1\n---\nregions: [yes, no, on, off]\n',
  `${'k'.repeat(2_000)}: 1\n`,
  '\uFEFFregions: [a]\nservers: 1\n',
  'regions: [a]\u0000\n',
  'regions:\n\t- a\n',
  '{[a]: b}\n',
  '? [regions]\n: [a]\n',
  'regions: [a]\nregions: [b]\n',
  `regions: ${'['.repeat(5_000)}${']'.repeat(5_000)}\n`,
  `${'- '.repeat(5_000)}x\n`,
  `${'{a: '.repeat(3_000)}1${'}'.repeat(3_000)}\n`,
  'servers:\n  - name: a\n    url: "http://127.0.0.1:1/\\0"\n',
  'servers:\n  - name: a\n    url: "https://a.example.com/"\n    headers: { "X-A": "a\\r\\nInjected: 1" }\n',
  'servers:\n  - name: a\n    url: "https://a.example.com/"\n    headers: { "X A": "b" }\n',
  `servers:\n  - name: a\n    url: "https://a.example.com/"\n    headers: { X-A: "\${NOT_SET_ANYWHERE}" }\n`,
  'servers:\n  - name: a\n    url: "https://a.example.com/"\n    interval: 9999999999h\n',
  'servers:\n  - name: a\n    url: "http://169.254.169.254/"\npolicy: { allow: ["0.0.0.0/0"] }\n',
  'servers:\n  - name: a\n    url: "http://a.example.com/"\npolicy: { schemes: [https] }\n',
  'policy: { schemes: [gopher] }\n',
  'policy: { allow: ["10.0.0.0/33", "::/129", "x"] }\n',
  'servers: !!str\n',
  'regions: [a]\n...\ngarbage: [\n',
];

/** Fleet files, mostly wrong: random shapes, near-valid ones with a broken field, YAML's sharp corners. */
function badFleetText(): fc.Arbitrary<string> {
  const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null));
  const server = fc.record(
    {
      name: fc.oneof(fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/), scalar),
      url: fc.oneof(fc.constantFrom('https://a.example.com/mcp', 'http://127.0.0.1:1/', 'ftp://x/'), scalar),
      headers: fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), scalar, { maxKeys: 2 }), scalar),
      regions: fc.oneof(fc.subarray(['eu-west', 'mars']), scalar),
      interval: fc.oneof(fc.constantFrom('60s', '10ms', '999999h', 'soon'), scalar),
      timeout: fc.oneof(fc.constantFrom('10s', '121s'), scalar),
      tests: fc.oneof(
        fc.array(fc.record({ revision: fc.oneof(fc.constantFrom('newest', '2025-06-18', '2030-01-01'), scalar) }), {
          maxLength: 3,
        }),
        scalar,
      ),
      detection: fc.oneof(fc.record({ interval: fc.constantFrom('15m', 'never') }), scalar),
      colour: scalar,
    },
    { requiredKeys: [] },
  );
  const nearValid = fc.record(
    {
      regions: fc.oneof(fc.subarray(['eu-west', 'us-east', 'Bad Region']), scalar),
      defaults: fc.oneof(
        fc.record(
          { interval: fc.constantFrom('60s', 'x'), timeout: fc.constantFrom('10s', '1h') },
          { requiredKeys: [] },
        ),
        scalar,
      ),
      servers: fc.oneof(fc.array(server, { maxLength: 3 }), scalar),
      policy: fc.oneof(
        fc.record(
          {
            allow: fc.oneof(
              fc.array(fc.constantFrom('10.0.0.0/8', '127.0.0.1', 'x', '::/0'), { maxLength: 2 }),
              scalar,
            ),
            deny: fc.oneof(fc.array(fc.constantFrom('10.0.0.0/33', '1.2.3.4'), { maxLength: 2 }), scalar),
            schemes: fc.oneof(fc.subarray(['http', 'https', 'ftp']), scalar),
          },
          { requiredKeys: [] },
        ),
        scalar,
      ),
      extra: scalar,
    },
    { requiredKeys: [] },
  );
  const mutated = fc
    .tuple(
      fc.constantFrom(...NASTY_YAML, 'regions: [eu-west]\nservers:\n  - name: a\n    url: https://a.example.com/\n'),
      fc.nat(),
      fc.nat(5),
      fc.string({ unit: 'binary', maxLength: 4 }),
    )
    .map(([t, at, cut, insert]) => {
      const i = at % (t.length + 1);
      return `${t.slice(0, i)}${insert}${t.slice(i + cut)}`;
    });
  return fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((v) => stringify(v)),
    nearValid.map((v) => stringify(v)),
    fc.constantFrom(...NASTY_YAML),
    mutated,
    fc.string({ unit: 'binary', maxLength: 300 }),
  );
}
