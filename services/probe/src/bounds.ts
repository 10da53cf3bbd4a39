// How much of what a server sent a probe reports. A server chooses its answers (a 250 KB JSON-RPC
// error message, 64 KiB of Retry-After, a serverInfo name of any length), and a result travels on
// the bus (NATS refuses a message over 1 MiB) into the database and onto the dashboard: so every
// string a run or detection reports is cut to a bound here, the last thing a probe does, after
// redaction (a credential straddling the cut would otherwise leave its first part behind). The
// bus's schemas carry the same maximums (services/bus/src/messages.ts), so an oversized result
// from a foreign publisher is poison.
import type { Detection, RevisionDetection } from './detect';
import type { Evidence } from './evidence';
import type { Assertion, HandshakeRun } from './handshake';
import type { ServerInfo } from './opening';
import { redact } from './redact';

/** The longest each kind of string a probe reports may be, in UTF-16 code units (String.length). */
export const BOUNDS = {
  /** A run's message, a detection's sentence, evidence.message, an assertion's message. */
  message: 2048,
  /** evidence.bodyPreview and evidence.jsonRpcErrorMessage: the first words are what an operator reads. */
  preview: 200,
  /** A header value the server chose: retryAfterHeader, evidence.contentType. */
  header: 256,
  /** serverInfo.name and serverInfo.title. */
  name: 200,
  /** serverInfo.version. */
  version: 100,
  /** A conformance check's message and its evidence's message: one line each, 31 checks to a run. */
  check: 300,
  /** A protocol version a server answered with (negotiated, an assertion's expected and actual). */
  revision: 64,
  /** The end of a stdio server's stderr kept as a run's evidence (its last words). */
  stderr: 512,
  /** Words from the probe's own tables: generation, note, an assertion's name, a reachability failure. */
  label: 64,
} as const;

/** Ends a string that was cut. */
export const CUT_MARK = '…';

/**
 * `text` if it fits in `max` UTF-16 code units; otherwise its beginning and the cut mark, `max`
 * units in all. The cut falls on a character boundary: never between the halves of a surrogate pair.
 */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - CUT_MARK.length);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end) + CUT_MARK;
}

/** Server-sent text quoted inside a sentence: redacted first, then cut to `max`. */
export function excerpt(text: string, secrets: readonly string[], max: number): string {
  return cut(redact(text, secrets), max);
}

const nullable = <T>(value: T | null, fit: (v: T) => T): T | null => (value === null ? null : fit(value));

export function boundServerInfo(info: ServerInfo): ServerInfo {
  const out: ServerInfo = { name: cut(info.name, BOUNDS.name), version: cut(info.version, BOUNDS.version) };
  if (info.title !== undefined) out.title = cut(info.title, BOUNDS.name);
  return out;
}

export function boundEvidence(e: Evidence): Evidence {
  return {
    ...e,
    contentType: nullable(e.contentType, (t) => cut(t, BOUNDS.header)),
    bodyPreview: nullable(e.bodyPreview, (t) => cut(t, BOUNDS.preview)),
    jsonRpcErrorMessage: nullable(e.jsonRpcErrorMessage, (t) => cut(t, BOUNDS.preview)),
    message: cut(e.message, BOUNDS.message),
    ...(e.stderr !== undefined ? { stderr: e.stderr.slice(-BOUNDS.stderr) } : {}),
  };
}

function boundAssertion(a: Assertion): Assertion {
  return {
    name: a.name,
    expected: cut(a.expected, BOUNDS.revision),
    actual: cut(a.actual, BOUNDS.revision),
    message: cut(a.message, BOUNDS.message),
  };
}

/** A handshake run with every string within its bound; its strings must be redacted already. */
export function boundRun(run: HandshakeRun): HandshakeRun {
  return {
    ...run,
    negotiated: nullable(run.negotiated, (v) => cut(v, BOUNDS.revision)),
    message: cut(run.message, BOUNDS.message),
    serverInfo: nullable(run.serverInfo, boundServerInfo),
    assertion: nullable(run.assertion, boundAssertion),
    evidence: nullable(run.evidence, boundEvidence),
  };
}

function boundRevision(r: RevisionDetection): RevisionDetection {
  const out: RevisionDetection = { ...r, sentence: cut(r.sentence, BOUNDS.message) };
  if (r.serverInfo) out.serverInfo = boundServerInfo(r.serverInfo);
  if (r.evidence) out.evidence = boundEvidence(r.evidence);
  return out;
}

/** A detection with every string within its bound; its strings must be redacted already. */
export function boundDetection(d: Detection): Detection {
  return {
    ...d,
    retryAfterHeader: nullable(d.retryAfterHeader, (v) => cut(v, BOUNDS.header)),
    serverInfo: nullable(d.serverInfo, boundServerInfo),
    revisions: d.revisions.map(boundRevision),
  };
}
