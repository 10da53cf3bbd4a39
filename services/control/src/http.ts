// A small JSON HTTP router over node:http. Our surface is a dozen JSON routes; a route table
// and a body reader are all it takes, so no web framework is pulled in for it. Every route's
// access follows from its method and path (auth.ts accessOf), and a request is admitted before
// its route is looked up or its body read. A route's body is JSON unless it declares more (only
// POST /api/fleet also takes YAML), and its media type must be exactly one of those it declares.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseContentType } from 'content-type';
import { z } from 'zod';
import { type Access, type AuthRefusal, accessOf, type Scope } from './auth';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** What a route's body may be: JSON (the default), or a YAML document kept as text. */
export type BodyKind = 'json' | 'yaml';

export interface ApiRequest {
  method: string;
  params: Record<string, string>;
  query: URLSearchParams;
  /** JSON: the parsed value; YAML: the text; undefined without a body. */
  body: unknown;
  /** Which of the route's declared kinds the body came as (a JSON string is no YAML file). */
  bodyKind: BodyKind | undefined;
}

/** `text` may come in pieces (control's /metrics: rendered bytes kept between scrapes), written in order. */
export type Reply = {
  status?: number;
  json?: unknown;
  text?: string | readonly (string | Uint8Array)[];
  contentType?: string;
};
export type RouteHandler = (req: ApiRequest) => Promise<Reply>;
/** A path served whole by another handler (control's MCP endpoint): it reads the body itself. */
export type MountedHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** Admit a request needing `access`, or refuse it (401/403); null admits. */
export type Gate = (
  access: Access,
  req: { method: string; path: string; headers: IncomingHttpHeaders },
) => AuthRefusal | { status: number; message: string } | null;

export type OnRefused = (info: { method: string; path: string; status: number; reason: string }) => void;

export interface RouteInfo {
  method: string;
  pattern: string;
  access: Access;
}

interface Route extends RouteInfo {
  parts: string[];
  handler: RouteHandler;
  accepts: readonly BodyKind[];
}

/** What an in-process call answers: the route's status and JSON (errors as `{ error }`). */
export interface CallReply {
  status: number;
  json: unknown;
}

const MAX_BODY_BYTES = 1024 * 1024;

export class Router {
  readonly #routes: Route[] = [];
  readonly #mounts = new Map<string, { handler: MountedHandler; access: Access }>();
  #gate: Gate | undefined;
  #onRefused: OnRefused | undefined;

  /** A route; `accepts` lists what its body may be (default JSON only). */
  on(method: string, pattern: string, handler: RouteHandler, opts: { accepts?: readonly BodyKind[] } = {}): this {
    this.#routes.push({
      method,
      pattern,
      access: accessOf(method, pattern),
      parts: pattern.split('/').filter(Boolean),
      handler,
      accepts: opts.accepts ?? ['json'],
    });
    return this;
  }

  /** Serve `path` (every method) with a handler of its own, behind the same gate as every route. */
  mount(path: string, handler: MountedHandler, access: Access = accessOf('POST', path)): this {
    this.#mounts.set(path, { handler, access });
    return this;
  }

  /** Every JSON route with what it needs (the auth and fuzz tests walk this table). */
  routes(): RouteInfo[] {
    return this.#routes.map(({ method, pattern, access }) => ({ method, pattern, access }));
  }

  /** The mounted paths with what each needs (their own tests: /mcp's in mcp.test.ts). */
  mounts(): { path: string; access: Access }[] {
    return [...this.#mounts].map(([path, m]) => ({ path, access: m.access }));
  }

  /**
   * Call a route in process, as a caller holding `scope` (control's MCP tools call the API's own
   * handlers this way, so both faces share one validation and one policy). A route needing more
   * than the scope answers 403, as over HTTP; errors come back as `{ error }` with their status.
   */
  async call(method: string, path: string, body: unknown, scope: Scope): Promise<CallReply> {
    try {
      const url = new URL(path, 'http://localhost');
      const parts = url.pathname.split('/').filter(Boolean).map(decodePathPart);
      const route = this.#routes.find(
        (r) =>
          r.method === method &&
          r.parts.length === parts.length &&
          r.parts.every((p, i) => p.startsWith(':') || p === parts[i]),
      );
      if (!route) throw new HttpError(404, `no route ${method} ${url.pathname}`);
      if (route.access === 'admin' && scope !== 'admin')
        throw new HttpError(403, `this needs a token with admin scope; the one sent has ${scope} scope`);
      const params: Record<string, string> = {};
      route.parts.forEach((p, i) => {
        if (p.startsWith(':')) params[p.slice(1)] = parts[i] ?? '';
      });
      const reply = await route.handler({
        method,
        params,
        query: url.searchParams,
        body,
        bodyKind: body === undefined ? undefined : 'json',
      });
      // As the wire would carry it (dates as ISO strings, no undefined): in process or over HTTP,
      // a caller reads the same JSON.
      return {
        status: reply.status ?? 200,
        json: reply.json === undefined ? null : JSON.parse(JSON.stringify(reply.json)),
      };
    } catch (err) {
      if (err instanceof HttpError) return { status: err.status, json: { error: err.message } };
      if (err instanceof z.ZodError) return { status: 400, json: { error: zodMessage(err) } };
      throw err;
    }
  }

  /** Put a gate in front of every route; `onRefused` hears of each refusal (never the token). */
  guard(gate: Gate, onRefused?: OnRefused): this {
    this.#gate = gate;
    this.#onRefused = onRefused;
    return this;
  }

  /** Through the gate, or throw its refusal (401/403 with the challenge). */
  #admit(access: Access, req: IncomingMessage, path: string): void {
    const refusal = this.#gate?.(access, { method: req.method ?? '', path, headers: req.headers });
    if (!refusal) return;
    this.#onRefused?.({
      method: req.method ?? '',
      path,
      status: refusal.status,
      reason: 'reason' in refusal ? refusal.reason : refusal.message,
    });
    throw new HttpError(
      refusal.status,
      refusal.message,
      'challenge' in refusal ? { 'www-authenticate': refusal.challenge } : {},
    );
  }

  /** Handle a request; errors become JSON `{ error }` with the right status, never a stack. */
  async handle(req: IncomingMessage, res: ServerResponse, onError: (err: unknown) => void): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const mounted = this.#mounts.get(url.pathname);
      if (mounted) {
        this.#admit(mounted.access, req, url.pathname);
        return await mounted.handler(req, res);
      }
      const parts = url.pathname.split('/').filter(Boolean).map(decodePathPart);
      const matches = this.#routes.filter(
        (r) => r.parts.length === parts.length && r.parts.every((p, i) => p.startsWith(':') || p === parts[i]),
      );
      const route = matches.find((r) => r.method === req.method);
      // Admitted first: without a token, an unknown path or method says 401, not what exists.
      this.#admit(route?.access ?? accessOf('GET', url.pathname), req, url.pathname);
      if (matches.length === 0) throw new HttpError(404, `no route for ${url.pathname}`);
      if (!route) throw new HttpError(405, `${req.method} is not allowed on ${url.pathname}`);
      const params: Record<string, string> = {};
      route.parts.forEach((p, i) => {
        if (p.startsWith(':')) params[p.slice(1)] = parts[i] ?? '';
      });
      const { body, kind } =
        req.method === 'GET' || req.method === 'DELETE'
          ? { body: undefined, kind: undefined }
          : await readBody(req, route.accepts);
      const reply = await route.handler({
        method: req.method ?? 'GET',
        params,
        query: url.searchParams,
        body,
        bodyKind: kind,
      });
      send(res, reply.status ?? 200, reply);
    } catch (err) {
      if (err instanceof HttpError) return send(res, err.status, { json: { error: err.message } }, err.headers);
      if (err instanceof z.ZodError) return send(res, 400, { json: { error: zodMessage(err) } });
      onError(err);
      send(res, 500, { json: { error: 'internal error' } });
    }
  }
}

function send(res: ServerResponse, status: number, reply: Reply, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  if (reply.text !== undefined) {
    res.writeHead(status, { ...headers, 'content-type': reply.contentType ?? 'text/plain; charset=utf-8' });
    if (typeof reply.text === 'string') res.end(reply.text);
    else {
      for (const piece of reply.text) res.write(piece);
      res.end();
    }
    return;
  }
  if (reply.json === undefined && status === 204) {
    res.writeHead(204, headers).end();
    return;
  }
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(reply.json ?? null));
}

/** The media types each body kind is sent as: exactly these, compared case-insensitively. */
const MEDIA_TYPES: Record<BodyKind, readonly string[]> = {
  json: ['application/json'],
  yaml: ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'],
};

/**
 * The body as the route declared it: JSON parsed, YAML as text. The Content-Type is parsed
 * (jshttp's content-type: type/subtype and well-formed parameters) and its type must be exactly
 * one the route accepts. A web page can post `text/plain` — even `text/plain; application/json` —
 * to any server without a CORS preflight, but not `application/json`: the exact type keeps every
 * write behind the preflight that control never grants (issue 12), besides the Origin check.
 */
async function readBody(
  req: IncomingMessage,
  accepts: readonly BodyKind[],
): Promise<{ body: unknown; kind: BodyKind | undefined }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    // The rest is not read: close the connection after the answer, so that no client reuses it.
    if (size > MAX_BODY_BYTES)
      throw new HttpError(413, 'the request body is larger than 1 MiB', { connection: 'close' });
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return { body: undefined, kind: undefined };
  const kind = bodyKind(req.headers['content-type'], accepts);
  const text = Buffer.concat(chunks).toString('utf8');
  if (kind === 'yaml') return { body: text, kind };
  try {
    return { body: JSON.parse(text), kind };
  } catch {
    throw new HttpError(400, 'the request body is not valid JSON');
  }
}

function bodyKind(header: string | undefined, accepts: readonly BodyKind[]): BodyKind {
  const wanted = accepts.map((k) => MEDIA_TYPES[k][0]).join(' or ');
  let type: string;
  let charset: string | undefined;
  try {
    const parsed = parseContentType(header ?? '');
    type = parsed.type;
    charset = parsed.parameters.charset?.toLowerCase();
  } catch {
    throw new HttpError(
      415,
      `send the body as ${wanted} (content-type: ${JSON.stringify((header ?? '').slice(0, 100))} is not one media type)`,
    );
  }
  const kind = accepts.find((k) => MEDIA_TYPES[k].includes(type));
  if (!kind) throw new HttpError(415, `send the body as ${wanted}, not ${type}`);
  // Read as UTF-8, which JSON must be (RFC 8259); another charset would be read wrong.
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    throw new HttpError(415, `send the body in UTF-8, not charset ${charset.slice(0, 40)}`);
  return kind;
}

function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, `the path is not valid percent-encoding: ${part.slice(0, 100)}`);
  }
}

export function zodMessage(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
}

/** Parse with a schema or answer 400 naming the field. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw new HttpError(400, zodMessage(parsed.error));
  return parsed.data;
}
