// Hostile and broken servers (fleet-sim's `hostile-…` targets): every probe — a newest-supported
// handshake, pinned handshakes and a detection — ends within its timeout (plus a small margin) with
// one of the ten outcomes, exactly the one this table expects, and with evidence an operator can act
// on. Nothing a server sends may make a result unstorable (NUL, lone surrogates), and no probe may
// follow a redirect, least of all to an address its policy denies.
import { createServer, type Server, connect as tcpConnect } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { connect as tlsConnect } from 'node:tls';
import {
  EMOJI_AT_PREVIEW_EDGE,
  HOSTILE_TARGET_NAMES,
  HUGE_ERROR_CODE,
  REDIRECT_DENIED_HOST,
  simCaCertificate,
  startSim,
} from '@mcp-fleet/fleet-sim';
import { Agent, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BOUNDS,
  type Cause,
  type Detection,
  detect,
  type Evidence,
  guardedDispatcher,
  type HandshakeRun,
  handshake,
  OUTCOME_NAMES,
  type Outcome,
  type ReachabilityFailure,
  type Revision,
  TargetPolicy,
} from '../src';
import { useSim } from './use-sim';

const fleet = useSim({ only: [...HOSTILE_TARGET_NAMES] });

/** A listener where hostile-redirect-denied points (127.0.0.2): a probe that followed the redirect would show up. */
const denied = { server: undefined as Server | undefined, port: 0, connections: 0 };
beforeAll(async () => {
  const server = createServer((socket) => {
    denied.connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, REDIRECT_DENIED_HOST, resolve);
  });
  denied.server = server;
  denied.port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (denied.server ? denied.server.close(() => resolve()) : resolve()));
});

/** A target's URL; hostile-redirect-denied's names the listener's port for its redirect. */
const url = (name: string) => {
  const base = fleet().target(name).url;
  return name === 'hostile-redirect-denied' ? base.replace(/\/mcp$/, `/to/${denied.port}/mcp`) : base;
};

/** Per handshake run (the whole run) and per detection request. */
const HANDSHAKE_TIMEOUT_MS = 2_000;
const DETECT_TIMEOUT_MS = 3_000;
/**
 * How far past its timeout a probe may end: timers and aborts. On top of it, however late this
 * process's timers fired meanwhile (a timeout cannot end a probe before its timer runs, and a
 * loaded 2-core machine delays timers), measured per case.
 */
const MARGIN_MS = 500;
const loopDelay = monitorEventLoopDelay({ resolution: 10 });

/** What a run's evidence must show; `true` = present (non-empty), a value = exactly that. */
interface EvidenceExpectation {
  status?: number | null;
  contentType?: RegExp;
  reachabilityFailure?: ReachabilityFailure | null;
  bodyPreview?: RegExp | true | null;
  message?: RegExp;
  jsonRpcErrorCode?: number;
}

interface RunExpectation {
  outcome: Outcome;
  evidence?: EvidenceExpectation;
  message?: RegExp;
}

interface Case {
  name: string;
  /** The dispatcher probes use: the probe's default unless a case needs a policy. */
  dispatcher?: () => Dispatcher;
  newest: RunExpectation;
  pinned: Partial<Record<Revision, RunExpectation>>;
  detection: {
    outcome: 'NONE' | 'DETECTED';
    newestSupported?: Revision | null;
    /** The one cause of every revision's failure (cause.ts); default null. */
    cause?: Cause;
    /** What every unsupported revision's evidence shows. */
    evidence?: EvidenceExpectation;
  };
}

const JSON_TYPE = /^application\/json/;
const SSE_TYPE = /^text\/event-stream/;
const TOO_LARGE = /the answer is larger than a probe reads, so it was cut off unread/;
const NOT_IDENTIFIED = /^the target did not identify itself as an MCP server/;
/** A run whose reply shows a cause leads with it (cause.ts), not with "did not identify itself". */
const TIMED_OUT = /^timeout: no answer within \d+ ms$/;
/** hostile-huge-error's message, as a probe reports it: the beginning, cut to BOUNDS.message with the mark. */
const HUGE_ERROR_CUT = (what: string) =>
  new RegExp(
    `^${what.replace('/', '\\/')}: JSON-RPC error -32600 Invalid Request: the server says far too much .{${BOUNDS.message - 90},}…$`,
  );

/** The policy of the redirect-denied case: loopback allowed, the redirect's address denied. */
const denyPolicy = new TargetPolicy({ allow: ['127.0.0.0/8'], deny: [`${REDIRECT_DENIED_HOST}/32`] });
let denyDispatcher: Dispatcher | undefined;

const timeoutEverywhere = (status: number | null, contentType?: RegExp): Omit<Case, 'name'> => {
  const evidence: EvidenceExpectation = { status, reachabilityFailure: 'timeout' };
  if (contentType) evidence.contentType = contentType;
  return {
    newest: { outcome: 'timeout', message: TIMED_OUT, evidence },
    pinned: {
      '2025-11-25': { outcome: 'timeout', message: TIMED_OUT, evidence },
      '2026-07-28': { outcome: 'timeout', message: TIMED_OUT, evidence },
    },
    detection: { outcome: 'NONE', cause: 'timeout', evidence },
  };
};

/** No HTTP answer on any request: not HTTP at all (no cause: it did not identify itself), or a cause such as TLS. */
const unreachableEverywhere = (
  failure: ReachabilityFailure,
  message: RegExp,
  cause?: { cause: Cause; lead: RegExp },
): Omit<Case, 'name'> => {
  const evidence: EvidenceExpectation = { status: null, reachabilityFailure: failure, message };
  return {
    newest: { outcome: 'unreachable', message: cause?.lead ?? NOT_IDENTIFIED, evidence },
    pinned: {
      '2025-11-25': { outcome: 'unreachable', message: cause?.lead ?? /^initialize: /, evidence },
      '2026-07-28': { outcome: 'unreachable', message: cause?.lead ?? /^server\/discover: /, evidence },
    },
    detection: { outcome: 'NONE', evidence, ...(cause ? { cause: cause.cause } : {}) },
  };
};

/** A server whose POST answers are too large to read, and whose GET opens no usable stream. */
const tooLarge = (contentType: RegExp, bodyPreview: RegExp | true): Omit<Case, 'name'> => {
  const evidence: EvidenceExpectation = { status: 200, contentType, reachabilityFailure: null, bodyPreview };
  return {
    newest: { outcome: 'not_mcp', message: NOT_IDENTIFIED, evidence: { status: 200, contentType } },
    pinned: {
      '2025-11-25': { outcome: 'protocol_error', message: TOO_LARGE, evidence },
      '2026-07-28': { outcome: 'protocol_error', message: TOO_LARGE, evidence },
    },
    detection: { outcome: 'NONE', evidence: { status: 200, contentType, reachabilityFailure: null } },
  };
};

const CASES: Case[] = [
  // (1) headers that never finish: the run's clock ends it.
  { name: 'hostile-slowloris', ...timeoutEverywhere(null) },
  // (2) the headers came, the body never finishes.
  { name: 'hostile-trickle-body', ...timeoutEverywhere(200, JSON_TYPE) },
  // (3) an endless stream of comments: GET overflows its bounds before an endpoint; a POST answered so is cut off.
  { name: 'hostile-sse-endless', ...tooLarge(SSE_TYPE, /^: nothing to see here/) },
  // (4) 10 000 events per second: the first is not endpoint; a POST's answer never comes among 1000 events.
  { name: 'hostile-sse-flood', ...tooLarge(SSE_TYPE, /^event: message\ndata: \{"jsonrpc"/) },
  // (5) 1 GiB: 256 KiB are read, the rest is never read.
  { name: 'hostile-huge-body', ...tooLarge(JSON_TYPE, /^\{"jsonrpc":"2\.0","id":\d+,"result":\{"padding":"aaaa/) },
  // (6) a gzip bomb: never inflated (no Accept-Encoding is sent, undici's request does not decode); cut at 256 KiB.
  { name: 'hostile-gzip-bomb', ...tooLarge(JSON_TYPE, true) },
  // (7) 100 000 levels of arrays in a JSON-RPC result: parsed (V8's parser is not recursive), found wanting.
  {
    name: 'hostile-deep-json',
    newest: { outcome: 'not_mcp', message: NOT_IDENTIFIED },
    pinned: {
      '2025-11-25': {
        outcome: 'protocol_error',
        message: /^initialize: the result has no protocolVersion$/,
        evidence: {
          status: 200,
          contentType: JSON_TYPE,
          bodyPreview: /^\{"jsonrpc":"2\.0","id":1,"result":\{"nested":\[\[\[/,
        },
      },
      '2026-07-28': {
        outcome: 'protocol_error',
        message: /^server\/discover: the result has no supportedVersions$/,
        evidence: { status: 200, contentType: JSON_TYPE, bodyPreview: true },
      },
    },
    detection: { outcome: 'NONE', evidence: { status: 200, contentType: JSON_TYPE, bodyPreview: true } },
  },
  // (8) bytes that are not UTF-8 inside an otherwise good answer: decoded leniently (U+FFFD), the server is MCP.
  {
    name: 'hostile-invalid-utf8',
    newest: { outcome: 'success' },
    pinned: {
      '2025-11-25': { outcome: 'success' },
      '2026-07-28': {
        outcome: 'unsupported_version',
        message: /^Server does not speak protocol 2026-07-28$/,
        evidence: { status: 400, jsonRpcErrorCode: -32601 },
      },
    },
    detection: { outcome: 'DETECTED', newestSupported: '2025-11-25' },
  },
  // (9) 1 MiB of headers: undici stops at 64 KiB.
  { name: 'hostile-huge-headers', ...unreachableEverywhere('malformed_http', /the response headers were too large/) },
  // (10) a redirect to itself: recorded, never followed.
  {
    name: 'hostile-redirect-loop',
    newest: { outcome: 'not_mcp', message: NOT_IDENTIFIED, evidence: { status: 302 } },
    pinned: {
      '2025-11-25': {
        outcome: 'protocol_error',
        message: /^initialize: the server redirected to \/mcp \(HTTP 302, text\/plain\); redirects are not followed$/,
        evidence: { status: 302, contentType: /^text\/plain/, bodyPreview: /^Found$/, reachabilityFailure: null },
      },
      '2026-07-28': { outcome: 'protocol_error', message: /redirects are not followed/, evidence: { status: 302 } },
    },
    detection: { outcome: 'NONE', evidence: { status: 302, reachabilityFailure: null } },
  },
  // (11) not HTTP at all.
  { name: 'hostile-garbage', ...unreachableEverywhere('malformed_http', /the server did not answer in HTTP/) },
  // (12) a TCP reset in the middle of the body: the status came, the answer did not.
  {
    name: 'hostile-reset',
    newest: {
      outcome: 'unreachable',
      message: /^unreachable: the connection was closed/,
      evidence: { reachabilityFailure: 'connection_reset' },
    },
    pinned: {
      '2025-11-25': {
        outcome: 'unreachable',
        message: /^unreachable: the connection was closed before the answer was complete$/,
        evidence: { status: 200, contentType: JSON_TYPE, reachabilityFailure: 'connection_reset' },
      },
      '2026-07-28': { outcome: 'unreachable', evidence: { status: 200, reachabilityFailure: 'connection_reset' } },
    },
    detection: {
      outcome: 'NONE',
      cause: 'unreachable',
      evidence: { status: 200, reachabilityFailure: 'connection_reset' },
    },
  },
  // (13) a redirect to an address the policy denies: recorded, never followed (a listener there counts).
  {
    name: 'hostile-redirect-denied',
    dispatcher: () => {
      denyDispatcher ??= guardedDispatcher(denyPolicy);
      return denyDispatcher;
    },
    newest: { outcome: 'not_mcp', message: NOT_IDENTIFIED, evidence: { status: 307 } },
    pinned: {
      '2025-11-25': {
        outcome: 'protocol_error',
        message:
          /^initialize: the server redirected to http:\/\/127\.0\.0\.2:\d+\/mcp \(HTTP 307, text\/plain\); redirects are not followed$/,
        evidence: { status: 307, reachabilityFailure: null },
      },
      '2026-07-28': { outcome: 'protocol_error', message: /127\.0\.0\.2/, evidence: { status: 307 } },
    },
    detection: { outcome: 'NONE', evidence: { status: 307, reachabilityFailure: null } },
  },
  // (14) a self-signed certificate.
  {
    name: 'hostile-tls-self-signed',
    ...unreachableEverywhere('tls', /the TLS handshake failed \(DEPTH_ZERO_SELF_SIGNED_CERT/, {
      cause: 'tls',
      lead: /^TLS: the certificate is self-signed \(DEPTH_ZERO_SELF_SIGNED_CERT\)$/,
    }),
  },
  // (15) an expired certificate (its CA unknown to the probe too, but expiry is what OpenSSL reports).
  {
    name: 'hostile-tls-expired',
    ...unreachableEverywhere('tls', /the TLS handshake failed \(CERT_HAS_EXPIRED/, {
      cause: 'tls',
      lead: /^TLS: the certificate has expired \(CERT_HAS_EXPIRED\)$/,
    }),
  },
  // (16) the right answers under the wrong JSON-RPC id.
  {
    name: 'hostile-wrong-id',
    // The lookup tries every generation; none identifies itself, the GET is a 405.
    newest: { outcome: 'not_mcp', message: NOT_IDENTIFIED, evidence: { status: 405 } },
    pinned: {
      '2025-11-25': {
        outcome: 'protocol_error',
        message: /^initialize: the answer's JSON-RPC id does not match the request$/,
        evidence: { status: 200, bodyPreview: /^\{"jsonrpc":"2\.0","id":1001,/ },
      },
      '2026-07-28': {
        outcome: 'protocol_error',
        message: /^server\/discover: the answer's JSON-RPC id does not match the request$/,
        evidence: { status: 200, bodyPreview: /"id":1001/ },
      },
    },
    detection: { outcome: 'NONE', evidence: { reachabilityFailure: null } },
  },
  // NUL and lone surrogates (as JSON escapes, and an emoji cut by the preview): stored as U+FFFD.
  {
    name: 'hostile-unicode-escapes',
    newest: { outcome: 'success' },
    pinned: {
      '2025-11-25': { outcome: 'success' },
      '2025-03-26': { outcome: 'unsupported_version', message: /^Server does not speak protocol 2025-03-26$/ },
      '2026-07-28': {
        outcome: 'unsupported_version',
        evidence: { status: 400, jsonRpcErrorCode: -32601, bodyPreview: true },
      },
    },
    detection: { outcome: 'DETECTED', newestSupported: '2025-11-25' },
  },
  // A batch (a JSON array) in answer to one request.
  {
    name: 'hostile-batch-answer',
    newest: { outcome: 'not_mcp', message: NOT_IDENTIFIED, evidence: { status: 405 } },
    pinned: {
      '2025-11-25': {
        outcome: 'not_mcp',
        message: /^initialize: the answer is not JSON-RPC \(HTTP 200, application\/json\)$/,
        evidence: { status: 200, bodyPreview: /^\[\{"jsonrpc":"2\.0"/ },
      },
      '2026-07-28': { outcome: 'not_mcp', evidence: { status: 200, bodyPreview: /^\[/ } },
    },
    detection: { outcome: 'NONE', evidence: { reachabilityFailure: null } },
  },
  // One event-stream line of 64 MiB: the reader stops at 1 MiB.
  { name: 'hostile-sse-huge-line', ...tooLarge(SSE_TYPE, /^data: aaaa/) },
  // HTTP/0.9: a body with no status line.
  { name: 'hostile-http09', ...unreachableEverywhere('malformed_http', /the server did not answer in HTTP/) },
  // 103 Early Hints every 5 ms and never a final answer.
  { name: 'hostile-informational', ...timeoutEverywhere(null) },
  // A certificate for another name (and from a CA the probe does not know).
  {
    name: 'hostile-tls-wrong-name',
    ...unreachableEverywhere('tls', /the TLS handshake failed \(UNABLE_TO_VERIFY_LEAF_SIGNATURE/, {
      cause: 'tls',
      lead: /^TLS: the certificate is issued by a CA this machine does not trust \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)$/,
    }),
  },
  // A 250 KB JSON-RPC error message to every request (on the stream for HTTP+SSE): reported, cut to its bounds.
  {
    name: 'hostile-huge-error',
    // The lookup finds the HTTP+SSE endpoint; its initialize is answered with the error on the stream.
    newest: {
      outcome: 'protocol_error',
      message: HUGE_ERROR_CUT('initialize'),
      evidence: { status: 202, jsonRpcErrorCode: HUGE_ERROR_CODE, message: HUGE_ERROR_CUT('initialize') },
    },
    pinned: {
      '2024-11-05': { outcome: 'protocol_error', message: HUGE_ERROR_CUT('initialize'), evidence: { status: 202 } },
      '2025-11-25': {
        outcome: 'protocol_error',
        message: HUGE_ERROR_CUT('initialize'),
        // Its 16 KB Content-Type is cut to BOUNDS.header too.
        evidence: {
          status: 400,
          contentType: /^application\/json; charset=utf-8; profile="p+…$/,
          jsonRpcErrorCode: HUGE_ERROR_CODE,
          bodyPreview: /…$/,
        },
      },
      // An era signal (a 400 that is not an era error), then the lookup finds HTTP+SSE: the pin fails.
      '2026-07-28': {
        outcome: 'unsupported_version',
        message: /^Server does not speak protocol 2026-07-28$/,
        evidence: { status: 400, jsonRpcErrorCode: HUGE_ERROR_CODE, message: HUGE_ERROR_CUT('server/discover') },
      },
    },
    detection: { outcome: 'NONE', evidence: { jsonRpcErrorCode: HUGE_ERROR_CODE, message: /…$/ } },
  },
];

/** Strings Postgres refuses in text and jsonb: NUL, and lone surrogates (which do not survive UTF-8). */
function unstorable(value: unknown, path = '$'): string[] {
  if (typeof value === 'string')
    return value.includes('\u0000') || Buffer.from(value, 'utf8').toString('utf8') !== value ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => unstorable(v, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => unstorable(v, `${path}.${k}`));
  return [];
}

/** Strings longer than the longest bound (a message's), and previews and header values over their own. */
function overBounds(value: unknown, path = '$'): string[] {
  if (typeof value === 'string') {
    const bound = /\.(bodyPreview|jsonRpcErrorMessage)$/.test(path)
      ? BOUNDS.preview
      : /\.(contentType|retryAfterHeader)$/.test(path)
        ? BOUNDS.header
        : BOUNDS.message;
    return value.length > bound ? [`${path} (${value.length})`] : [];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => overBounds(v, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => overBounds(v, `${path}.${k}`));
  return [];
}

function expectEvidence(evidence: Evidence | null | undefined, want: EvidenceExpectation | undefined, what: string) {
  expect(evidence, `${what}: evidence`).toBeTruthy();
  if (!evidence) return;
  expect(evidence.message.length, `${what}: evidence.message`).toBeGreaterThan(0);
  if (!want) return;
  if (want.status !== undefined) expect(evidence.status, `${what}: evidence.status`).toBe(want.status);
  if (want.contentType) expect(evidence.contentType, `${what}: evidence.contentType`).toMatch(want.contentType);
  if (want.reachabilityFailure !== undefined)
    expect(evidence.reachabilityFailure, `${what}: evidence.reachabilityFailure`).toBe(want.reachabilityFailure);
  if (want.bodyPreview === true)
    expect(evidence.bodyPreview?.length, `${what}: evidence.bodyPreview`).toBeGreaterThan(0);
  else if (want.bodyPreview === null) expect(evidence.bodyPreview, `${what}: evidence.bodyPreview`).toBeNull();
  else if (want.bodyPreview) expect(evidence.bodyPreview, `${what}: evidence.bodyPreview`).toMatch(want.bodyPreview);
  if (want.message) expect(evidence.message, `${what}: evidence.message`).toMatch(want.message);
  if (want.jsonRpcErrorCode !== undefined)
    expect(evidence.jsonRpcErrorCode, `${what}: evidence.jsonRpcErrorCode`).toBe(want.jsonRpcErrorCode);
}

function expectRun(run: HandshakeRun, wallMs: number, want: RunExpectation, what: string, lagMs: number) {
  expect(wallMs, `${what}: wall time`).toBeLessThanOrEqual(HANDSHAKE_TIMEOUT_MS + MARGIN_MS + lagMs);
  expect(run.millis, `${what}: run.millis`).toBeLessThanOrEqual(HANDSHAKE_TIMEOUT_MS + MARGIN_MS + lagMs);
  expect(OUTCOME_NAMES, `${what}: a classified outcome`).toContain(run.outcome);
  expect(run.outcome, `${what}: outcome (${run.message})`).toBe(want.outcome);
  if (want.message) expect(run.message, `${what}: message`).toMatch(want.message);
  if (run.outcome === 'success') expect(run.serverInfo, `${what}: serverInfo`).toBeTruthy();
  else expectEvidence(run.evidence, want.evidence, what);
  expect(unstorable(run), `${what}: unstorable strings`).toEqual([]);
  expect(overBounds(run), `${what}: strings over the bounds`).toEqual([]);
}

function expectDetection(d: Detection, wallMs: number, want: Case['detection'], what: string, lagMs: number) {
  expect(wallMs, `${what}: wall time`).toBeLessThanOrEqual(DETECT_TIMEOUT_MS + MARGIN_MS + lagMs);
  expect(d.outcome, `${what}: outcome`).toBe(want.outcome);
  expect(d.cause, `${what}: cause`).toBe(want.cause ?? null);
  if (want.newestSupported !== undefined)
    expect(d.newestSupported, `${what}: newestSupported`).toBe(want.newestSupported);
  expect(d.revisions, `${what}: one entry per revision`).toHaveLength(5);
  for (const r of d.revisions) {
    if (r.supported) continue;
    expectEvidence(r.evidence, want.outcome === 'NONE' ? want.evidence : undefined, `${what} ${r.revision}`);
    expect(r.evidence?.millis ?? 0, `${what} ${r.revision}: evidence.millis`).toBeLessThanOrEqual(
      DETECT_TIMEOUT_MS + MARGIN_MS + lagMs,
    );
  }
  expect(unstorable(d), `${what}: unstorable strings`).toEqual([]);
  expect(overBounds(d), `${what}: strings over the bounds`).toEqual([]);
}

async function timed<T>(probe: () => Promise<T>): Promise<{ value: T; wallMs: number }> {
  const started = performance.now();
  const value = await probe();
  return { value, wallMs: Math.round(performance.now() - started) };
}

/** The slowest probe of each kind and the latest timer, for the record. */
const slowest = { handshake: 0, detect: 0, lag: 0 };

describe.each(CASES)('$name', (c) => {
  it('every probe ends in time with the expected outcome and evidence', async () => {
    const target = url(c.name);
    const dispatcher = c.dispatcher?.();
    const opts = dispatcher ? { dispatcher } : {};
    const pins = Object.entries(c.pinned) as [Revision, RunExpectation][];
    // The probes of one target run side by side, as an agent's jobs would.
    loopDelay.reset();
    loopDelay.enable();
    const [newest, detection, ...pinned] = await Promise.all([
      timed(() => handshake(target, { revision: 'newest', timeoutMs: HANDSHAKE_TIMEOUT_MS, ...opts })),
      timed(() => detect(target, { timeoutMs: DETECT_TIMEOUT_MS, ...opts })),
      ...pins.map(([revision]) =>
        timed(() => handshake(target, { revision, timeoutMs: HANDSHAKE_TIMEOUT_MS, ...opts })),
      ),
    ]);
    loopDelay.disable();
    const lagMs = Math.round(loopDelay.max / 1e6);
    expectRun(newest!.value as HandshakeRun, newest!.wallMs, c.newest, `${c.name} newest`, lagMs);
    expectDetection(detection!.value as Detection, detection!.wallMs, c.detection, `${c.name} detect`, lagMs);
    pins.forEach(([revision, want], i) => {
      expectRun(pinned[i]!.value as HandshakeRun, pinned[i]!.wallMs, want, `${c.name} pinned ${revision}`, lagMs);
    });
    slowest.lag = Math.max(slowest.lag, lagMs);
    slowest.handshake = Math.max(slowest.handshake, newest!.wallMs, ...pinned.map((p) => p.wallMs));
    slowest.detect = Math.max(slowest.detect, detection!.wallMs);
  });
});

afterAll(async () => {
  await denyDispatcher?.close();
  console.log(
    `hostile probes: slowest handshake ${slowest.handshake} ms (timeout ${HANDSHAKE_TIMEOUT_MS}), slowest detection ${slowest.detect} ms (per-request timeout ${DETECT_TIMEOUT_MS}), latest timer ${slowest.lag} ms`,
  );
});

describe('what the hostile targets must not get away with', () => {
  it('a redirect is never followed: the server sees exactly the requests the probes sent', async () => {
    for (const name of ['hostile-redirect-loop', 'hostile-redirect-denied']) {
      fleet().resetRequests();
      const dispatcher = name === 'hostile-redirect-denied' ? guardedDispatcher(denyPolicy) : undefined;
      const opts = dispatcher ? { dispatcher } : {};
      const runs = await Promise.all([
        handshake(url(name), { revision: 'newest', timeoutMs: HANDSHAKE_TIMEOUT_MS, ...opts }),
        handshake(url(name), { revision: '2025-11-25', timeoutMs: HANDSHAKE_TIMEOUT_MS, ...opts }),
      ]);
      const d = await detect(url(name), { timeoutMs: DETECT_TIMEOUT_MS, ...opts });
      const sent = runs.reduce((n, r) => n + r.requests, d.requests);
      expect(fleet().requests(name).length, name).toBe(sent);
      expect(
        new Set(
          fleet()
            .requests(name)
            .map((r) => r.path),
        ),
        name,
      ).toEqual(new Set([new URL(url(name)).pathname]));
      await dispatcher?.close();
    }
  });

  it('a redirect to an address the policy denies is never dialled, and the policy refuses it when asked directly', async () => {
    const target = url('hostile-redirect-denied');
    const deniedUrl = `http://${REDIRECT_DENIED_HOST}:${denied.port}/mcp`;
    const dispatcher = guardedDispatcher(denyPolicy);
    try {
      const pinned = await handshake(target, { revision: '2025-11-25', timeoutMs: HANDSHAKE_TIMEOUT_MS, dispatcher });
      expect(pinned.message).toContain(deniedUrl);
      // Asked to go there itself, the policy refuses before dialling.
      const direct = await handshake(deniedUrl, {
        revision: '2025-11-25',
        timeoutMs: HANDSHAKE_TIMEOUT_MS,
        dispatcher,
      });
      expect(direct.outcome).toBe('unreachable');
      expect(direct.message).toMatch(/127\.0\.0\.2/);
    } finally {
      await dispatcher.close();
    }
    // Not one connection, from this test or from the table's probes of hostile-redirect-denied before it.
    expect(denied.connections).toBe(0);
    // The listener does count: a plain connection shows up.
    await new Promise<void>((resolve, reject) => {
      const socket = tcpConnect(denied.port, REDIRECT_DENIED_HOST, () => socket.end());
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    await expect.poll(() => denied.connections).toBe(1);
  });

  it('the TLS targets fail on their certificate alone', async () => {
    const trusting = new Agent({ connect: { ca: simCaCertificate() } });
    const blind = new Agent({ connect: { rejectUnauthorized: false } });
    try {
      // Trusting the sim's CA leaves the real fault: expiry, and the wrong name.
      const expired = await handshake(url('hostile-tls-expired'), {
        revision: '2026-07-28',
        timeoutMs: HANDSHAKE_TIMEOUT_MS,
        dispatcher: trusting,
      });
      expect(expired).toMatchObject({ outcome: 'unreachable', evidence: { reachabilityFailure: 'tls' } });
      expect(expired.message).toMatch(/CERT_HAS_EXPIRED/);
      const wrongName = await handshake(url('hostile-tls-wrong-name'), {
        revision: '2026-07-28',
        timeoutMs: HANDSHAKE_TIMEOUT_MS,
        dispatcher: trusting,
      });
      expect(wrongName).toMatchObject({ outcome: 'unreachable', evidence: { reachabilityFailure: 'tls' } });
      expect(wrongName.message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
      // Not verifying at all, each is an honest MCP server.
      for (const name of ['hostile-tls-self-signed', 'hostile-tls-expired', 'hostile-tls-wrong-name']) {
        const run = await handshake(url(name), {
          revision: 'newest',
          timeoutMs: HANDSHAKE_TIMEOUT_MS,
          dispatcher: blind,
        });
        expect(run, name).toMatchObject({ outcome: 'success', negotiated: '2026-07-28' });
      }
    } finally {
      await Promise.all([trusting.close(), blind.close()]);
    }
  });

  it('strings a database refuses become U+FFFD, wherever the server put them', async () => {
    const target = url('hostile-unicode-escapes');
    const run = await handshake(target, { revision: '2025-11-25', timeoutMs: HANDSHAKE_TIMEOUT_MS });
    expect(run.serverInfo).toEqual({ name: 'hostile\ufffdunicode\ufffd', version: '\ufffd1.0', title: '\ufffd' });
    const pin = await handshake(target, { revision: '2025-03-26', timeoutMs: HANDSHAKE_TIMEOUT_MS });
    expect(pin.assertion).toMatchObject({ expected: '2025-03-26', actual: '2025-\ufffd\ufffd' });
    const modern = await handshake(target, { revision: '2026-07-28', timeoutMs: HANDSHAKE_TIMEOUT_MS });
    expect(modern.evidence?.jsonRpcErrorMessage).toBe('no\ufffdsuch\ufffdmethod');
    const d = await detect(target, { timeoutMs: DETECT_TIMEOUT_MS });
    // The HTML preview is cut to 200 UTF-16 units with its mark; the cut falls before the emoji, not inside it.
    const legacy = d.revisions.find((r) => r.revision === '2024-11-05');
    expect(legacy?.evidence?.bodyPreview).toBe(`${EMOJI_AT_PREVIEW_EDGE.slice(0, 198)}…`);
    expect(d.revisions.find((r) => r.revision === '2025-03-26')?.sentence).toContain('2025-\ufffd\ufffd');
    // Bytes that are not UTF-8 were decoded leniently: the server is MCP, its name shows where they were.
    const utf8 = await handshake(url('hostile-invalid-utf8'), { revision: 'newest', timeoutMs: HANDSHAKE_TIMEOUT_MS });
    expect(utf8.serverInfo?.name).toMatch(/^hostile-\ufffd+\(\ufffd+-utf8$/);
  });

  it('close() ends every hostile stream and socket promptly', async () => {
    const sim = await startSim({ only: [...HOSTILE_TARGET_NAMES] });
    const hangUp = new AbortController();
    const streaming = [
      'hostile-slowloris',
      'hostile-trickle-body',
      'hostile-sse-endless',
      'hostile-sse-flood',
      'hostile-informational',
      'hostile-sse-huge-line',
      'hostile-huge-body',
    ];
    const open = streaming.map((name) =>
      fetch(sim.target(name).url, { method: 'POST', body: '{}', signal: hangUp.signal }).then(
        // Read nothing: the server is left blocked on a full socket, or trickling.
        () => undefined,
        () => undefined,
      ),
    );
    // TLS connections left open (the certificate accepted, nothing sent).
    const tlsSockets = ['hostile-tls-self-signed', 'hostile-tls-expired', 'hostile-tls-wrong-name'].map((name) => {
      const socket = tlsConnect({
        host: '127.0.0.1',
        port: Number(new URL(sim.target(name).url).port),
        rejectUnauthorized: false,
      });
      socket.on('error', () => {});
      return new Promise<void>((resolve) => socket.on('close', () => resolve()));
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await sim.close();
    await Promise.all(tlsSockets);
    expect(Date.now() - started).toBeLessThan(1000);
    hangUp.abort();
    await Promise.all(open);
  });
});
