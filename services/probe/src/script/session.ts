// A recorded session (seed 002, "record real sessions and replay them"): JSONL, a header line and
// then one line per request and its answer, as `mcp-fleet record` saw them pass:
//
//   {"session":"mcp-fleet/1","url":"http://127.0.0.1:7401/mcp","revision":"2026-07-28","recordedAt":"…"}
//   {"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}},"result":{…},"millis":4,"revision":"2026-07-28"}
//   {"method":"prompts/get","params":{"name":"nope"},"error":{"code":-32602,"message":"…"},"millis":2,"revision":"2026-07-28"}
//
// Recorded traffic is sensitive (the seed says so): the URL is masked, no header is kept, and every
// string is redacted of the credentials the client sent and of what looks like one (redactRecorded).
// Params lose `_meta`: it is the transport's (protocol version, client info, progress tokens), and a
// replay sends its own in whatever revision it speaks.
import { redact } from '../redact';
import { isRevision, type Revision } from '../revisions';
import { SCRIPT_MAX_STEPS, type Script, type ScriptAssertion, type ScriptStep } from './script';
import { isPlainObject } from './values';

export const SESSION_FORMAT = 'mcp-fleet/1';
/** The most exchanges a session holds (a recording stops there; a longer file is refused). */
export const SESSION_MAX_EXCHANGES = 256;
/** The longest line a session may have (an answer bigger than a probe reads is not recorded whole). */
export const SESSION_MAX_LINE_CHARS = 1024 * 1024;
/** The opening of a conversation: recorded, not replayed (a replay opens its own, in its revision). */
export const OPENING_METHODS: readonly string[] = ['initialize', 'server/discover'];

export interface SessionHeader {
  session: typeof SESSION_FORMAT;
  /** The target as it may be shown: credentials masked. */
  url: string;
  revision: Revision;
  recordedAt: string;
}

export interface RecordedExchange {
  method: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
  millis: number;
  revision: string;
}

export interface Session {
  header: SessionHeader;
  exchanges: RecordedExchange[];
}

/** One JSONL line (with its newline). */
export function sessionLine(value: SessionHeader | RecordedExchange): string {
  return `${JSON.stringify(value)}\n`;
}

/** Read a session file; the error names the line. Bounded: a session is a check's input, not a dump. */
export function parseSession(text: string): { ok: true; session: Session } | { ok: false; error: string } {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return { ok: false, error: 'the file is empty' };
  if (lines.length - 1 > SESSION_MAX_EXCHANGES)
    return {
      ok: false,
      error: `a session holds at most ${SESSION_MAX_EXCHANGES} exchanges, this one ${lines.length - 1}`,
    };
  const values: unknown[] = [];
  for (const [i, line] of lines.entries()) {
    if (line.length > SESSION_MAX_LINE_CHARS)
      return { ok: false, error: `line ${i + 1}: longer than ${SESSION_MAX_LINE_CHARS} characters` };
    try {
      values.push(JSON.parse(line));
    } catch {
      return { ok: false, error: `line ${i + 1}: not JSON` };
    }
  }
  const head = values[0];
  if (!isPlainObject(head) || head.session !== SESSION_FORMAT)
    return { ok: false, error: `line 1: not a session header ({"session":"${SESSION_FORMAT}",…})` };
  if (typeof head.url !== 'string' || !isRevision(head.revision) || typeof head.recordedAt !== 'string')
    return { ok: false, error: 'line 1: the header needs url, revision (a known one) and recordedAt' };
  const exchanges: RecordedExchange[] = [];
  for (const [i, v] of values.slice(1).entries()) {
    const where = `line ${i + 2}`;
    if (!isPlainObject(v) || typeof v.method !== 'string' || !/^[a-z][A-Za-z0-9_/]{0,99}$/.test(v.method))
      return { ok: false, error: `${where}: needs a method such as tools/call` };
    if (v.params !== undefined && !isPlainObject(v.params))
      return { ok: false, error: `${where}: params is not an object` };
    const hasResult = isPlainObject(v.result);
    const error = v.error;
    const hasError = isPlainObject(error) && typeof error.code === 'number' && typeof error.message === 'string';
    if (hasResult === hasError)
      return { ok: false, error: `${where}: needs a result object or an error {code, message}` };
    exchanges.push({
      method: v.method,
      ...(v.params !== undefined ? { params: v.params as Record<string, unknown> } : {}),
      ...(hasResult ? { result: v.result as Record<string, unknown> } : {}),
      ...(hasError ? { error: error as RecordedExchange['error'] & object } : {}),
      millis: typeof v.millis === 'number' && v.millis >= 0 ? v.millis : 0,
      revision: typeof v.revision === 'string' ? v.revision : head.revision,
    });
  }
  return { ok: true, session: { header: head as unknown as SessionHeader, exchanges } };
}

/** Header names whose values are credentials (a recording never keeps a header; these feed redaction). */
export function isCredentialHeader(name: string): boolean {
  const n = name.toLowerCase();
  return (
    n === 'authorization' ||
    n === 'proxy-authorization' ||
    n === 'cookie' ||
    n === 'set-cookie' ||
    /(^|-)(api-?key|token|secret|auth|password|session)(-|$)/.test(n)
  );
}

// Key names (lower case, `-` and `_` removed) whose string values are credentials wherever they appear.
const SECRET_KEYS = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'apikey',
  'authorization',
  'auth',
  'credential',
  'credentials',
  'cookie',
  'privatekey',
  'sessionid',
];
// Shapes of well-known credentials, found in any string (simple classes: linear to match).
const SECRET_SHAPES = [
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g, // a JWT
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bsk-[A-Za-z0-9_-]{16,}/g, // OpenAI- and Stripe-style secret keys
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, // Slack tokens
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key ids
];
export const REDACTED = '[redacted]';

function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_]/g, '');
  return SECRET_KEYS.some((s) => k === s || k.endsWith(s));
}

function redactText(text: string, secrets: readonly string[]): string {
  let out = redact(text, secrets);
  for (const shape of SECRET_SHAPES) out = out.replace(shape, REDACTED);
  return out;
}

/**
 * A value fit to write into a session: the client's credentials (`secrets`, see redact.ts's
 * secretsOf) and credential-shaped strings replaced, and the string value of every secret-named
 * key (`password`, `apiKey`, `access_token`…) replaced whatever it is. Depth-bounded: past 64
 * levels a value is dropped, not walked.
 */
export function redactRecorded<T>(value: T, secrets: readonly string[], depth = 0): T {
  if (depth > 64) return null as T;
  if (typeof value === 'string') return redactText(value, secrets) as T;
  if (Array.isArray(value)) return value.map((v) => redactRecorded(v, secrets, depth + 1)) as T;
  if (isPlainObject(value))
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        redactText(k, secrets),
        typeof v === 'string' && isSecretKey(k) ? REDACTED : redactRecorded(v, secrets, depth + 1),
      ]),
    ) as T;
  return value;
}

/** Params as a session keeps them: without the transport's `_meta`. */
export function recordedParams(params: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(params)) return undefined;
  const { _meta, ...rest } = params;
  return rest;
}

/**
 * The session's steps as a fleet file's `steps:` (the opening left out, at most SCRIPT_MAX_STEPS):
 * each step that was answered with a result asserts what a recording can safely say — a tool answered without isError,
 * and its first text when that is short — so the script starts as a faithful check to edit.
 */
export function sessionScript(session: Session): Script {
  const steps: ScriptStep[] = [];
  for (const x of session.exchanges) {
    // An answer that was an error would fail its step: a script checks what worked.
    if (OPENING_METHODS.includes(x.method) || x.method.startsWith('notifications/') || !x.result) continue;
    if (steps.length === SCRIPT_MAX_STEPS) break;
    const expect: ScriptAssertion[] = [];
    if (x.result && x.method === 'tools/call') {
      expect.push({ isError: x.result.isError === true });
      const first = Array.isArray(x.result.content) ? x.result.content[0] : undefined;
      if (isPlainObject(first) && typeof first.text === 'string' && first.text.length <= 200)
        expect.push({ path: '$.content[0].text', equals: first.text });
    }
    if (x.result && x.method === 'tools/list' && Array.isArray(x.result.tools)) {
      const first = x.result.tools[0];
      if (isPlainObject(first) && typeof first.name === 'string')
        expect.push({ path: '$.tools[0].name', equals: first.name });
    }
    if (x.result) expect.push({ latencyMs: Math.min(120_000, Math.max(1000, Math.ceil(x.millis * 10))) });
    steps.push({
      method: x.method,
      ...(x.params && Object.keys(x.params).length ? { params: x.params } : {}),
      ...(expect.length ? { expect } : {}),
    });
  }
  return { steps };
}
