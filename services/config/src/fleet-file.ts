// The fleet definition: a YAML file (mcp-fleet.yaml), validated before anything is applied.
// Errors name the file, the line, the column and the field (fleet-problems.ts says them). `${NAME}` in header values comes from the
// environment of whoever reads the file (Expansion), so credentials stay out of the file. The same
// definition travels to control's API as JSON, its object form, taken literally.
import { readFile } from 'node:fs/promises';
import {
  DEFAULT_SCHEMES,
  displayCommand,
  isRevision,
  maskedParts,
  parseCidr,
  REVISION_NAMES,
  type Revision,
  type Script,
  TargetPolicy,
  TEST_DEPTHS,
  type TestDepth,
} from '@mcp-fleet/probe';
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { parseDuration } from './durations';
import {
  FleetFileError,
  type FleetProblem,
  fieldName,
  type Position,
  schemaProblems,
  unitlessDuration,
} from './fleet-problems';
import { type Judgement, judgementFields, resolveJudgement } from './judgement';
import { ScriptStepsSchema, scriptKey } from './script-schema';
import { type StdioCommand, stdioFields, targetProblems } from './stdio-command';

export { FleetFileError } from './fleet-problems';

export { TEST_DEPTHS, type TestDepth };

/**
 * A conformance test's interval unless it names one: a run sends dozens of requests (the probe's
 * CONFORMANCE_MAX_REQUESTS) where a handshake sends two or three, and a server's conformance
 * changes with its deploys, not by the minute.
 */
export const CONFORMANCE_INTERVAL_MS = 15 * 60_000;

/**
 * How often a test runs: its own interval, else its depth's default: conformance and surface reads
 * take CONFORMANCE_INTERVAL_MS (a surface changes with deploys); a handshake or a script takes its server's.
 */
export function effectiveIntervalMs(
  test: { depth: TestDepth; intervalMs: number | null },
  serverIntervalMs: number,
): number {
  return (
    test.intervalMs ??
    (test.depth === 'conformance' || test.depth === 'surface' ? CONFORMANCE_INTERVAL_MS : serverIntervalMs)
  );
}

export interface TestDefinition {
  mode: 'newest' | 'pinned';
  pinnedRevision: Revision | null;
  /** `handshake` unless the entry says `depth: conformance`. */
  depth: TestDepth;
  /** The entry's own `interval`; null = its depth's default (effectiveIntervalMs). */
  intervalMs: number | null;
  /** A script-depth test's steps (and allowWrites); null for every other depth. */
  script: Script | null;
}

/**
 * A test's identity within its server: its revision and depth (a handshake and a conformance test
 * of `newest` are two); a script test's also its script's hash (scriptKey), so two script tests of
 * one revision are two, and a script whose steps change is a new test.
 */
export function testKey(t: {
  mode: string;
  pinnedRevision: string | null;
  depth: string;
  script?: Script | null | unknown;
}): string {
  const base = `${t.mode === 'newest' ? 'newest' : t.pinnedRevision}/${t.depth}`;
  return t.depth === 'script' && t.script ? `${base}/${scriptKey(t.script as Script)}` : base;
}

/** A server as the file defines it: the store's server fields (its ServerInput), all given, plus its tests. */
export interface ServerDefinition {
  name: string;
  /** The URL; for a stdio server its command line as shown (`stdio: node server.js`: probe's displayCommand). */
  url: string;
  /** A stdio server's command (`${NAME}` in env values already expanded); null for an HTTP server. */
  command: StdioCommand | null;
  /** Request headers, `${NAME}` already expanded by the file's reader. */
  headers: Record<string, string>;
  /** null = every region of the fleet. */
  regions: string[] | null;
  intervalMs: number;
  timeoutMs: number;
  /** null = no scheduled detection. */
  detectionIntervalMs: number | null;
  tests: TestDefinition[];
  /** How it is judged across regions: its own keys over the file's defaults (judgement.ts). */
  judgement: Judgement;
}

export interface FleetDefinition {
  regions: string[];
  servers: ServerDefinition[];
  policy: { allow: string[]; deny: string[]; schemes: string[] };
}

/** The longest duration anything takes (the store keeps milliseconds in a 32-bit integer). */
export const MAX_DURATION_MS = 7 * 86_400_000;
/** `10` (YAML reads a number) or `"10"` is a duration without its unit: the message says to write `10s`. */
export const duration = z
  .string({ error: (iss) => (typeof iss.input === 'number' ? unitlessDuration(iss.input) : undefined) })
  .superRefine((s, ctx) => {
    const ms = parseDuration(s);
    if (ms !== undefined && ms <= MAX_DURATION_MS) return;
    const bare = /^\s*\d+(\.\d+)?\s*$/.test(s);
    ctx.addIssue({
      code: 'custom',
      message: bare ? unitlessDuration(s.trim()) : 'a duration like 500ms, 60s, 15m or 1h, at most 168h',
    });
  });
/** The shortest interval a test or a detection runs at (0s would read as "never" and 1ms hammer a server). */
export const MIN_INTERVAL_MS = 1_000;
/** `detection: { interval }`: how often a server's revisions are detected, as a whole. */
export const detectionSchedule = z.strictObject({
  interval: duration.refine((s) => (parseDuration(s) ?? 0) >= MIN_INTERVAL_MS, `at least ${MIN_INTERVAL_MS / 1000}s`),
});
/** A test's own `interval`: a duration, at least MIN_INTERVAL_MS. */
export const testInterval = duration.refine(
  (s) => (parseDuration(s) ?? 0) >= MIN_INTERVAL_MS,
  `at least ${MIN_INTERVAL_MS / 1000}s`,
);
export const regionName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lower-case letters, digits and dashes');
export const cidr = z.string().refine((s) => parseCidr(s) !== undefined, 'a CIDR like 10.20.0.0/16 or an address');

export const serverName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'letters, digits, dot, dash, underscore (≤ 100)');
export const targetUrl = z
  .string()
  .max(2048, 'at most 2048 characters')
  .url()
  // Stored as written and sent as parsed: nothing that parsing would drop or escape.
  .refine((u) => ![...u].some((c) => c <= ' ' || c === '\u007f'), 'a URL without spaces or control characters')
  .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'an http:// or https:// URL');
/**
 * A URL for a new server (the fleet file, POST /api/servers, /api/detect): `••••••` is how the API
 * and the dashboard show a stored credential, and there is none to stand for here. (PATCH takes
 * targetUrl: there it keeps the stored part, on the same origin only.)
 */
export const newTargetUrl = targetUrl.refine(
  (u) => maskedParts(u).length === 0,
  '•••••• stands for a stored credential: give the value itself',
);
/** A value a request can carry (RFC 9110 field-value: no CR, LF, NUL or other controls). */
export const headerValue = z
  .string()
  .max(8_192)
  .regex(/^[\t\u0020-\u007e\u0080-\u00ff]*$/, 'a header value without control characters or characters beyond Latin-1');
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/;
/**
 * Headers a fleet entry may not set, in any case: the probe owns them (a fleet file or an API body
 * is hostile input). `Host` would send a request meant for one site to another behind the same
 * address — the target policy judged the URL's host, not this one. Content-Length,
 * Transfer-Encoding, Connection, Keep-Alive, Proxy-Connection, TE, Trailer, Upgrade and Expect
 * decide how a request is framed and what its connection becomes: the means to smuggle a second
 * request past a proxy or switch the connection to another protocol. Mcp-Session-Id and
 * Mcp-Protocol-Version are what the probe negotiates and measures: a fixed one would make a run
 * report a session or revision the server never agreed to. (Accept and Content-Type the probe
 * sets on every request itself.)
 */
export const PROBE_OWNED_HEADERS = [
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'mcp-session-id',
  'mcp-protocol-version',
] as const;
const PROBE_OWNED = new Set<string>(PROBE_OWNED_HEADERS);
/** Request headers: names are HTTP tokens and not the probe's own, each problem named by its header. */
export const headerMap = z.record(z.string(), headerValue).superRefine((headers, ctx) => {
  for (const name of Object.keys(headers))
    if (!HEADER_NAME.test(name))
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: "a header name: letters, digits and !#$%&'*+.^_`|~- (≤ 200)",
      });
    else if (PROBE_OWNED.has(name.toLowerCase()))
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `${name} is set by the probe itself, never by a fleet entry`,
      });
});
export const revisionChoice = z
  .string()
  .refine((r) => r === 'newest' || isRevision(r), `newest or one of ${REVISION_NAMES.join(', ')}`);

/** One entry of `servers:`. */
export const serverEntry = z.strictObject({
  name: serverName,
  /** Or `command` (with `args`, `env`, `cwd`): a stdio server; exactly one of the two (targetProblems). */
  url: newTargetUrl.optional(),
  ...stdioFields,
  headers: headerMap.default({}),
  regions: z.array(regionName).min(1).optional(),
  interval: duration.optional(),
  timeout: duration.optional(),
  tests: z
    .array(
      z.strictObject({
        revision: revisionChoice,
        /** Default handshake; a file from before depths means handshake. */
        depth: z.enum(TEST_DEPTHS, { error: 'handshake, conformance, surface or script' }).optional(),
        /** Default: the server's interval for a handshake test, CONFORMANCE_INTERVAL_MS for a conformance one. */
        interval: testInterval.optional(),
        /** A script test's steps (and only a script test's): config's ScriptSchema. */
        steps: ScriptStepsSchema.optional(),
        /** A script test may call tools the server does not mark readOnlyHint. */
        allowWrites: z.boolean().optional(),
      }),
    )
    .default([{ revision: 'newest' }]),
  detection: detectionSchedule.optional(),
  /** quorum, failAfter, confirmAfter, flapWindow, recheck, disagreementAfter, slo: over the fleet's defaults. */
  ...judgementFields,
});

/** The fleet file's schema: the one the file, `mcp-fleet apply`'s JSON and POST /api/fleet are read with. */
export const fleetFileSchema = z.strictObject({
  regions: z.array(regionName).min(1, 'at least one region').default(['local']),
  defaults: z
    .strictObject({ interval: duration.optional(), timeout: duration.optional(), ...judgementFields })
    .default({}),
  // `servers:` with nothing under it is an empty fleet, not an error.
  servers: z.preprocess((v) => v ?? [], z.array(serverEntry)),
  policy: z
    .strictObject({
      allow: z.array(cidr).default([]),
      deny: z.array(cidr).default([]),
      schemes: z
        .array(z.enum(DEFAULT_SCHEMES, { error: 'http or https' }))
        .min(1, 'at least one scheme')
        .default([...DEFAULT_SCHEMES]),
    })
    .default({ allow: [], deny: [], schemes: [...DEFAULT_SCHEMES] }),
});

/**
 * The fleet file as a document, as its writer (fleetToYaml) takes it: the schema's input, so the
 * writer and the reader cannot drift (`servers` spelt out: the preprocess step takes anything).
 */
export type FleetFile = Omit<z.input<typeof fleetFileSchema>, 'servers'> & {
  servers: z.input<typeof serverEntry>[];
};

export const DEFAULT_INTERVAL_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const MAX_TIMEOUT_MS = 120_000;
/** The least a conformance run is given: it sends dozens of requests where a handshake sends a few. */
export const CONFORMANCE_MIN_TIMEOUT_MS = 30_000;

/**
 * A conformance job's timeout: its server's, with room for the run (at least 30 s), within what a
 * job may carry and never past the test's interval (the next run would start before it ended).
 */
export function conformanceTimeoutMs(serverTimeoutMs: number, intervalMs: number): number {
  return Math.min(MAX_TIMEOUT_MS, intervalMs, Math.max(serverTimeoutMs, CONFORMANCE_MIN_TIMEOUT_MS));
}

/**
 * What `${NAME}` in a header value means, and who decides: the reader of the file. A reader
 * expands from its own environment (an env object): control for its own `--fleet` file, at start
 * and on SIGHUP; `mcp-fleet apply` on the operator's machine. A fleet that reaches control over the
 * API is never expanded there ('refuse': a reference is an error): control is not its reader, and
 * its environment (cloud keys, MCP_FLEET_SECRET_KEY, DATABASE_URL) is not the sender's to read.
 * The JSON form (fleetFromObject) takes every value literally.
 */
export type Expansion = Readonly<Record<string, string | undefined>> | 'refuse';

/** The fleet file on disk, read by this process: `env` is the environment its references come from. */
export async function loadFleetFile(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<FleetDefinition> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new FleetFileError(path, [
      { message: `cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})` },
    ]);
  }
  return parseFleet(text, path, env);
}

/** A fleet file's text. References are refused unless `expand` is the reader's environment. */
export function parseFleet(text: string, file = 'mcp-fleet.yaml', expand: Expansion = 'refuse'): FleetDefinition {
  return readYaml(text, file, expand).definition;
}

/** A fleet in its object form: the file's keys and schema, as `mcp-fleet apply` sends it (JSON). */
export type FleetObject = z.output<typeof fleetFileSchema>;

/**
 * `mcp-fleet apply`: the file read and checked where it is read (the operator's side), `${NAME}`
 * expanded from `env` there, in the object form control's API takes as JSON.
 */
export function expandFleetFile(
  text: string,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
): FleetObject {
  return readYaml(text, file, env).object;
}

/**
 * The object form (POST /api/fleet as JSON), checked like a file: every value is taken as it is,
 * never expanded, so a credential that itself contains `${` travels intact.
 */
export function fleetFromObject(value: unknown, file: string): FleetDefinition {
  return check(value, file, NOWHERE, 'literal').definition;
}

/**
 * An empty fleet would retire every server the file made: an empty file (or one of comments, or an
 * empty object) is an error that says so, and `servers: []` is how to mean it.
 */
const EMPTY =
  'the fleet is empty: it needs at least `servers:` (a list of servers; `servers: []` retires every server the file made) and may name `regions`, `defaults` and `policy`';

function readYaml(text: string, file: string, expand: Expansion): { definition: FleetDefinition; object: FleetObject } {
  const lineCounter = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    // Known tags stay unresolved: `!!set` would make a Set that reads as an empty mapping, `!!binary`
    // a Buffer. logLevel: its warnings (unknown tags, collection keys) need no process warning.
    doc = parseDocument(text, {
      lineCounter,
      prettyErrors: false,
      uniqueKeys: true,
      resolveKnownTags: false,
      logLevel: 'error',
    });
  } catch (err) {
    throw new FleetFileError(file, [{ message: `the file is not YAML this reader can take (${firstLine(err)})` }]);
  }
  const at = (offset: number | undefined): Position | undefined => {
    if (offset === undefined) return undefined;
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  if (doc.errors.length) {
    const seen = new Set<string>();
    const problems: FleetProblem[] = [];
    for (const e of doc.errors) {
      const p = { at: at(e.pos[0]), message: firstLine(e) };
      const k = JSON.stringify(p);
      if (!seen.has(k)) problems.push(p);
      seen.add(k);
    }
    throw new FleetFileError(file, problems);
  }
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null))
    throw new FleetFileError(file, [{ message: EMPTY }]);
  if (!isMap(doc.contents))
    throw new FleetFileError(file, [
      { at: at(doc.contents.range?.[0]), message: 'the file must be a mapping (regions, defaults, servers, policy)' },
    ]);

  const posOf = (path: readonly PropertyKey[]): Position | undefined => {
    // The deepest node the path reaches tells the place; a missing key points at its parent.
    for (let n = path.length; n >= 0; n -= 1) {
      const node = doc.getIn(path.slice(0, n) as (string | number)[], true) as
        | { range?: [number, number, number] }
        | undefined;
      if (node?.range) return at(node.range[0]);
    }
    return undefined;
  };
  const keyPosOf = (path: readonly PropertyKey[], key: string): Position | undefined => {
    const map = path.length ? doc.getIn(path as (string | number)[], true) : doc.contents;
    if (!isMap(map)) return undefined;
    const pair = map.items.find((i) => isScalar(i.key) && String(i.key.value) === key);
    return isScalar(pair?.key) ? at(pair.key.range?.[0]) : undefined;
  };
  let plain: unknown;
  try {
    // An alias to no anchor, or aliases that expand past maxAliasCount (a "billion laughs"), throw here.
    plain = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    throw new FleetFileError(file, [{ message: firstLine(err) }]);
  }
  return check(plain ?? {}, file, { posOf, keyPosOf }, expand);
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Where a path of the fleet is written: nowhere for the object form. */
interface Places {
  posOf: (path: readonly PropertyKey[]) => Position | undefined;
  keyPosOf: (path: readonly PropertyKey[], key: string) => Position | undefined;
}
const NOWHERE: Places = { posOf: () => undefined, keyPosOf: () => undefined };

/** Validate a fleet's object form and make its definition; `places` says where a path is written. */
function check(
  plain: unknown,
  file: string,
  places: Places,
  expand: Expansion | 'literal',
): { definition: FleetDefinition; object: FleetObject } {
  if (plain === null || (typeof plain === 'object' && !Array.isArray(plain) && Object.keys(plain).length === 0))
    throw new FleetFileError(file, [{ message: EMPTY }]);
  // reportInput: what was written tells a missing key from a wrong type, and `10` from "10" (only its kind is said).
  const parsed = fleetFileSchema.safeParse(plain, { reportInput: true });
  if (!parsed.success)
    throw new FleetFileError(file, schemaProblems(fleetFileSchema, parsed.error.issues, places.posOf, places.keyPosOf));
  const f = parsed.data;
  const problems: FleetProblem[] = [];
  const problem = (path: readonly PropertyKey[], message: string) =>
    problems.push({ at: places.posOf(path), field: fieldName(path), message });
  const expanded: { headers: Record<string, string>; env?: Record<string, string> }[] = [];
  const policy = new TargetPolicy(f.policy);
  const names = new Set<string>();
  const servers = f.servers.map((s, i): ServerDefinition => {
    const at = (field: string) => ['servers', i, field];
    if (names.has(s.name)) problem(at('name'), `"${s.name}" is defined twice`);
    names.add(s.name);
    for (const r of s.regions ?? [])
      if (!f.regions.includes(r))
        problem(at('regions'), `"${r}" is not one of the fleet's regions (${f.regions.join(', ')})`);
    // The fleet's boundary for a stdio entry: one target, its keys together (stdio-command.ts).
    for (const p of targetProblems(s)) problem(at(p.key), p.message);
    if (s.url !== undefined) {
      const refused = policy.refusesUrl(new URL(s.url));
      if (refused) problem(at('url'), refused);
    }
    // Surface reads and scripts speak HTTP only for now: refused here, not found failing on an agent.
    if (s.command !== undefined)
      s.tests.forEach((t, j) => {
        if (t.depth === 'surface' || t.depth === 'script')
          problem(
            ['servers', i, 'tests', j, 'depth'],
            `a stdio server's tests are handshake or conformance, not ${t.depth}`,
          );
      });
    // `${NAME}` in header values and in env values (both may be credentials) is the reader's to expand.
    const expandAll = (from: Record<string, string>, key: 'headers' | 'env') => {
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(from)) out[k] = expandValue(['servers', i, key, k], v, key === 'headers');
      return out;
    };
    const expandValue = (field: (string | number)[], v: string, isHeader: boolean): string => {
      if (expand === 'literal') return v;
      return v.replace(REFERENCE, (reference, name: string) => {
        if (expand === 'refuse') {
          problem(
            field,
            `${reference} is not expanded by control: expand it where the file is read; \`mcp-fleet apply\` does`,
          );
          return reference;
        }
        const value = expand[name];
        if (value === undefined) problem(field, `the environment variable ${name} is not set`);
        else if (isHeader && !headerValue.safeParse(value).success)
          problem(field, `the environment variable ${name} holds what a header value cannot carry`);
        else if (!isHeader && value.includes('\0'))
          problem(field, `the environment variable ${name} holds a NUL, which no environment value can carry`);
        return value ?? '';
      });
    };
    const headers = expandAll(s.headers, 'headers');
    const env = s.command === undefined ? undefined : expandAll(s.env ?? {}, 'env');
    expanded.push({ headers, ...(env ? { env } : {}) });
    const command: StdioCommand | null =
      s.command === undefined
        ? null
        : { command: s.command, args: s.args ?? [], env: env ?? {}, ...(s.cwd !== undefined ? { cwd: s.cwd } : {}) };
    const tests = s.tests.map(
      (t): TestDefinition => ({
        ...(t.revision === 'newest'
          ? { mode: 'newest', pinnedRevision: null }
          : { mode: 'pinned', pinnedRevision: t.revision as Revision }),
        depth: t.depth ?? 'handshake',
        intervalMs: t.interval === undefined ? null : (parseDuration(t.interval) ?? null),
        script:
          t.depth === 'script' && t.steps
            ? { steps: t.steps as Script['steps'], ...(t.allowWrites ? { allowWrites: true } : {}) }
            : null,
      }),
    );
    s.tests.forEach((t, j) => {
      const field = (k: string) => ['servers', i, 'tests', j, k];
      if (t.depth === 'script' && !t.steps)
        problem(field('depth'), 'a script test needs `steps:` (the MCP requests it sends, each with what to expect)');
      if (t.depth !== 'script' && t.steps) problem(field('steps'), 'only a test of `depth: script` has steps');
      if (t.depth !== 'script' && t.allowWrites !== undefined)
        problem(field('allowWrites'), 'only a test of `depth: script` may allow writes');
    });
    const keys = tests.map(testKey);
    if (new Set(keys).size !== keys.length)
      problem(at('tests'), 'a revision is listed twice at the same depth (a script test: with the same steps)');
    const intervalMs = parseDuration(s.interval ?? f.defaults.interval ?? '') ?? DEFAULT_INTERVAL_MS;
    const timeoutMs = parseDuration(s.timeout ?? f.defaults.timeout ?? '') ?? DEFAULT_TIMEOUT_MS;
    if (intervalMs < MIN_INTERVAL_MS) problem(at('interval'), `at least ${MIN_INTERVAL_MS / 1000}s`);
    if (timeoutMs > MAX_TIMEOUT_MS || timeoutMs > intervalMs)
      problem(at('timeout'), `at most the interval and at most ${MAX_TIMEOUT_MS / 1000}s`);
    tests.forEach((t, j) => {
      // A run ends within its timeout before the next begins.
      if (t.intervalMs !== null && t.intervalMs < timeoutMs)
        problem(['servers', i, 'tests', j, 'interval'], `at least the server's timeout (${timeoutMs / 1000}s)`);
    });
    return {
      name: s.name,
      url: command ? displayCommand(command) : (s.url ?? ''),
      command,
      headers,
      regions: s.regions ?? null,
      intervalMs,
      timeoutMs,
      detectionIntervalMs: s.detection ? (parseDuration(s.detection.interval) ?? null) : null,
      tests,
      judgement: resolveJudgement(f.defaults, s),
    };
  });
  if (problems.length) throw new FleetFileError(file, problems);
  return {
    definition: { regions: f.regions, servers, policy: f.policy },
    object: { ...f, servers: f.servers.map((s, i) => ({ ...s, ...expanded[i]! })) },
  };
}

/** Aliases a fleet file may expand (the yaml package's default, stated): past it, nothing is applied. */
const MAX_ALIAS_COUNT = 100;

/** An error's first line; the parser's own stack overflow on deep nesting is said as what it is. */
function firstLine(err: unknown): string {
  const line = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200);
  return /Maximum call stack size exceeded/.test(line) ? 'nested too deeply for a fleet file' : line;
}
