// mcp-fleet record <url> --out session.jsonl: a recording proxy on loopback (seed 002, "record real
// sessions and replay them"). The user points their MCP client at the printed local URL; every
// request and its answer pass through unchanged, and each request/answer pair is written to the
// session file (probe's session.ts) with credentials redacted: no header is kept, the URL is
// masked, and the values of the client's Authorization, Cookie and key-like headers, the target
// URL's query values and credential-shaped strings are replaced wherever they appear.
//
// Streamable HTTP, both eras: JSON and event-stream answers (an event stream is passed through as
// it comes, read on the way for the answer to the request). The old HTTP+SSE transport (answers on
// a separate stream, to an endpoint the server names) is forwarded but not recorded.
//
// Forwarding goes under the probe's floor, as an agent's probes do (MCP_FLEET_PROBE_* and
// --allow/--deny/--schemes; default public addresses only): a proxy that dials where a client asks
// must not open the machine's own network. It listens on loopback only.
import { once } from 'node:events';
import { closeSync, openSync, writeSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { probeFloor as floorSettings, PROBE_FLOOR, parseEnv, roleEnv } from '@mcp-fleet/config';
import {
  displayUrl,
  guardedDispatcher,
  isCredentialHeader,
  isLoopbackAddress,
  isRevision,
  type RecordedExchange,
  type Revision,
  recordedParams,
  redactRecorded,
  SESSION_FORMAT,
  SESSION_MAX_EXCHANGES,
  type Session,
  type SessionHeader,
  secretsOf,
  sessionLine,
  sessionScript,
  TargetPolicy,
  type TargetPolicyRanges,
} from '@mcp-fleet/probe';
import { createParser } from 'eventsource-parser';
import { type Dispatcher, request } from 'undici';
import YAML from 'yaml';
import { headers, parse, targetUrl } from '../args';
import { probeFloor } from '../probe-floor';
import { untilSignal } from '../signals';
import { EXIT, UsageError } from '../usage';

const OPTIONS = {
  out: { type: 'string', short: 'o' },
  listen: { type: 'string' },
  header: { type: 'string', multiple: true, short: 'H' },
  script: { type: 'boolean', default: false },
  allow: { type: 'string' },
  deny: { type: 'string' },
  schemes: { type: 'string' },
} as const;

/** The largest request body forwarded (a client's JSON-RPC request). */
export const RECORD_MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** The most of an answer read for the recording (the client still gets all of it). */
export const RECORD_MAX_ANSWER_BYTES = 1024 * 1024;
const FORWARD_TIMEOUT_MS = 120_000;

/** Headers that belong to one hop, and those the proxy sets itself. */
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'content-length',
  'accept-encoding',
  'proxy-authorization',
]);

export interface RecorderOptions {
  target: URL;
  out: string;
  host?: string;
  port?: number;
  /** Headers added to every forwarded request (e.g. a credential the client does not have). */
  headers?: Record<string, string>;
  floor: TargetPolicyRanges;
  /** Told of what happens (a refused forward, the cap reached). */
  log?: (line: string) => void;
}

export interface Recorder {
  /** The local URL to point an MCP client at. */
  url: string;
  /** Exchanges written so far. */
  readonly count: number;
  /** Stop listening, close the file; the session as written. */
  close(): Promise<Session | undefined>;
}

export async function startRecorder(opts: RecorderOptions): Promise<Recorder> {
  const policy = new TargetPolicy(opts.floor, { floor: true });
  const refused = policy.refusesUrl(opts.target);
  if (refused) throw new RefusedTarget(`the probe floor refuses ${displayUrl(opts.target)}: ${refused}`);
  const dispatcher = guardedDispatcher(policy);
  const file = openSync(opts.out, 'w', 0o600);
  const added = opts.headers ?? {};
  // Every credential seen so far, from the target URL, the added headers and clients' headers.
  const secrets = new Set<string>(secretsOf(added, opts.target));
  const state = {
    header: undefined as SessionHeader | undefined,
    pending: [] as RecordedExchange[],
    written: [] as RecordedExchange[],
    revision: undefined as Revision | undefined,
    full: false,
  };
  const log = opts.log ?? (() => {});

  const write = (x: RecordedExchange) => {
    if (state.written.length + state.pending.length >= SESSION_MAX_EXCHANGES) {
      if (!state.full) log(`the session holds ${SESSION_MAX_EXCHANGES} exchanges: later ones pass unrecorded`);
      state.full = true;
      return;
    }
    if (isRevision(x.revision)) state.revision = x.revision;
    const secretList = [...secrets].sort((a, b) => b.length - a.length);
    const clean = redactRecorded(x, secretList);
    // The header names the revision, so it waits for the first exchange that says one.
    if (!state.header && !state.revision) {
      state.pending.push(clean);
      return;
    }
    if (!state.header) {
      state.header = {
        session: SESSION_FORMAT,
        url: displayUrl(opts.target),
        revision: state.revision!,
        recordedAt: new Date().toISOString(),
      };
      writeSync(file, sessionLine(state.header));
    }
    for (const p of [...state.pending, clean]) {
      writeSync(file, sessionLine(p));
      state.written.push(p);
    }
    state.pending = [];
  };

  const server = createServer((req, res) => {
    forward(req, res).catch((err) => {
      // A client that hung up mid-answer (a stream it closed) is no failure to report.
      if (!res.destroyed) log(`forwarding failed: ${(err as Error)?.message ?? err}`);
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end();
    });
  });

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
      res.writeHead(405, { allow: 'GET, POST, DELETE' }).end();
      return;
    }
    const body = await readBody(req);
    if (body === undefined) {
      res.writeHead(413, { 'content-type': 'text/plain' }).end('request body too large');
      return;
    }
    const sent: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP.has(name)) continue;
      sent[name] = Array.isArray(value) ? value.join(', ') : value;
      if (!isCredentialHeader(name)) continue;
      // A cookie's values one by one too: a server may echo one without its name.
      const parts = name === 'cookie' ? sent[name].split(';').map((c) => c.slice(c.indexOf('=') + 1).trim()) : [];
      for (const v of [sent[name], ...parts]) for (const s of secretsOf({ [name]: v })) secrets.add(s);
    }
    Object.assign(sent, lowerKeys(added));
    const rpc = req.method === 'POST' ? requestOf(body) : undefined;
    const startedAt = Date.now();
    // A client that hangs up (or a stop) ends the forwarded request too: a GET stream would stay open.
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    let answer: Dispatcher.ResponseData;
    try {
      answer = await request(opts.target, {
        method: req.method as 'POST' | 'GET' | 'DELETE',
        headers: sent,
        ...(req.method === 'POST' ? { body } : {}),
        dispatcher,
        signal: abort.signal,
        headersTimeout: FORWARD_TIMEOUT_MS,
        bodyTimeout: FORWARD_TIMEOUT_MS,
      });
    } catch (err) {
      const e = err as Error & { cause?: Error };
      const why =
        e?.name === 'PolicyRefusal' || e?.cause?.name === 'PolicyRefusal' ? 'refused by the probe floor' : e?.message;
      log(`${req.method} to the target failed: ${why}`);
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`mcp-fleet record: the target did not answer (${why})`);
      return;
    }
    const back: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined && !HOP.has(name)) back[name] = value;
    res.writeHead(answer.statusCode, back);
    const type = String(answer.headers['content-type'] ?? '').toLowerCase();
    // Read on the way: the JSON body, or the event stream's events, up to what a recording keeps.
    let seen = 0;
    let text = '';
    let found: { result?: unknown; error?: unknown } | undefined;
    const parser = createParser({
      onEvent: (event) => {
        if (found || !rpc) return;
        found = answerTo(event.data, rpc.id);
        if (found) note(found);
      },
    });
    const decoder = new TextDecoder();
    const note = (a: { result?: unknown; error?: unknown }) => {
      if (!rpc) return;
      const revision = revisionOf(req, rpc, a) ?? state.revision ?? '';
      write({
        method: rpc.method,
        ...(recordedParams(rpc.params) ? { params: recordedParams(rpc.params) } : {}),
        ...('result' in a
          ? { result: a.result as Record<string, unknown> }
          : { error: a.error as RecordedExchange['error'] & object }),
        millis: Date.now() - startedAt,
        revision,
      });
    };
    for await (const chunk of answer.body) {
      if (res.destroyed) break;
      if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      if (!rpc || found || seen >= RECORD_MAX_ANSWER_BYTES) continue;
      seen += chunk.byteLength;
      const piece = decoder.decode(chunk, { stream: true });
      if (type.startsWith('text/event-stream')) parser.feed(piece);
      else text += piece;
    }
    res.end();
    if (rpc && !found && type.startsWith('application/json') && seen < RECORD_MAX_ANSWER_BYTES) {
      found = answerTo(text, rpc.id);
      if (found) note(found);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/mcp`,
    get count() {
      return state.written.length;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      closeSync(file);
      // destroy, not close: close waits for forwarded streams that may never end.
      await dispatcher.destroy();
      return state.header ? { header: state.header, exchanges: state.written } : undefined;
    },
  };
}

export class RefusedTarget extends Error {}

/** A JSON-RPC request (not a notification, not a batch) in a POST body. */
function requestOf(body: Buffer): { id: string | number; method: string; params: unknown } | undefined {
  try {
    const v = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    if (!v || typeof v !== 'object' || Array.isArray(v) || typeof v.method !== 'string') return undefined;
    if (typeof v.id !== 'string' && typeof v.id !== 'number') return undefined;
    return { id: v.id, method: v.method, params: v.params };
  } catch {
    return undefined;
  }
}

function answerTo(text: string, id: string | number): { result?: unknown; error?: unknown } | undefined {
  try {
    const v = JSON.parse(text) as Record<string, unknown>;
    if (!v || typeof v !== 'object' || v.id !== id) return undefined;
    if (v.result && typeof v.result === 'object' && !Array.isArray(v.result)) return { result: v.result };
    if (v.error && typeof v.error === 'object') return { error: v.error };
  } catch {
    // not an answer
  }
  return undefined;
}

/** The revision an exchange spoke: its header, its `_meta`, or the one an initialize answer chose. */
function revisionOf(
  req: IncomingMessage,
  rpc: { method: string; params: unknown },
  answer: { result?: unknown },
): string | undefined {
  const header = req.headers['mcp-protocol-version'];
  if (typeof header === 'string' && isRevision(header)) return header;
  const meta = (rpc.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const inMeta = meta?.['io.modelcontextprotocol/protocolVersion'];
  if (typeof inMeta === 'string' && isRevision(inMeta)) return inMeta;
  const chosen = (answer.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
  if (rpc.method === 'initialize' && typeof chosen === 'string' && isRevision(chosen)) return chosen;
  return undefined;
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).byteLength;
    if (size > RECORD_MAX_REQUEST_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

/** `--listen host:port`: loopback only (the proxy forwards with the client's credentials). */
export function listenAddress(value: string | undefined): { host: string; port: number } {
  if (value === undefined) return { host: '127.0.0.1', port: 0 };
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  const port = Number(m?.[2]);
  if (!m || port > 65_535) throw new UsageError(`--listen takes host:port, e.g. 127.0.0.1:7600, got ${value}`);
  const host = m[1]!.replace(/^\[|\]$/g, '');
  if (host !== 'localhost' && !isLoopbackAddress(host))
    throw new UsageError(`--listen: the recording proxy listens on loopback only (127.0.0.1, ::1), not ${host}`);
  return { host, port };
}

const recordEnv = roleEnv('record', { ...PROBE_FLOOR }, (e) => floorSettings(e));

export async function recordCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  const target = targetUrl(positionals, 'record');
  if (!values.out) throw new UsageError('record needs --out <file>, e.g. --out session.jsonl');
  const { host, port } = listenAddress(values.listen);
  const floor = probeFloor(parseEnv(recordEnv, process.env), {
    allow: values.allow,
    deny: values.deny,
    schemes: values.schemes,
  });
  let recorder: Recorder;
  try {
    recorder = await startRecorder({
      target,
      out: values.out,
      host,
      port,
      headers: headers(values.header),
      floor,
      log: (line) => process.stderr.write(`mcp-fleet record: ${line}\n`),
    });
  } catch (err) {
    if (err instanceof RefusedTarget) {
      process.stderr.write(`mcp-fleet record: ${err.message}\n`);
      return EXIT.policy;
    }
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'ENOENT' || code === 'EACCES')
      throw new UsageError(
        `${code === 'EADDRINUSE' ? `--listen ${host}:${port} is in use` : `${values.out}: ${code}`}`,
      );
    throw err;
  }
  out(
    `Recording ${displayUrl(target)} to ${values.out}.\nPoint your MCP client at ${recorder.url}\nCtrl-C stops the recording.`,
  );
  await untilSignal();
  const session = await recorder.close();
  out(`Recorded ${recorder.count} exchange${recorder.count === 1 ? '' : 's'} to ${values.out}.`);
  if (values.script && session) out(scriptYaml(session));
  return EXIT.ok;
}

/** The session's steps as YAML for a fleet-file test's `steps:`. */
export function scriptYaml(session: Session): string {
  return YAML.stringify({ steps: sessionScript(session).steps });
}
