// A small JSON HTTP router over node:http. Our surface is a dozen JSON routes; a route table
// and a body reader are all it takes, so no web framework is pulled in for it. Every route's
// access follows from its method and path (auth.ts accessOf), and a request is admitted before
// its route is looked up or its body read.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { type Access, type AuthRefusal, accessOf } from './auth';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface ApiRequest {
  method: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
}

export type Reply = { status?: number; json?: unknown; text?: string; contentType?: string };
export type RouteHandler = (req: ApiRequest) => Promise<Reply>;

/** Admit a request needing `access`, or refuse it (401/403); null admits. */
export type Gate = (
  access: Access,
  headers: IncomingHttpHeaders,
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
}

const MAX_BODY_BYTES = 1024 * 1024;

export class Router {
  readonly #routes: Route[] = [];
  #gate: Gate | undefined;
  #onRefused: OnRefused | undefined;

  on(method: string, pattern: string, handler: RouteHandler): this {
    this.#routes.push({
      method,
      pattern,
      access: accessOf(method, pattern),
      parts: pattern.split('/').filter(Boolean),
      handler,
    });
    return this;
  }

  /** Every route with what it needs (the auth tests walk this table). */
  routes(): RouteInfo[] {
    return this.#routes.map(({ method, pattern, access }) => ({ method, pattern, access }));
  }

  /** Put a gate in front of every route; `onRefused` hears of each refusal (never the token). */
  guard(gate: Gate, onRefused?: OnRefused): this {
    this.#gate = gate;
    this.#onRefused = onRefused;
    return this;
  }

  /** Handle a request; errors become JSON `{ error }` with the right status, never a stack. */
  async handle(req: IncomingMessage, res: ServerResponse, onError: (err: unknown) => void): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const parts = url.pathname.split('/').filter(Boolean).map(decodePathPart);
      const matches = this.#routes.filter(
        (r) => r.parts.length === parts.length && r.parts.every((p, i) => p.startsWith(':') || p === parts[i]),
      );
      const route = matches.find((r) => r.method === req.method);
      // Admitted first: without a token, an unknown path or method says 401, not what exists.
      const refusal = this.#gate?.(route?.access ?? accessOf('GET', url.pathname), req.headers);
      if (refusal) {
        this.#onRefused?.({
          method: req.method ?? '',
          path: url.pathname,
          status: refusal.status,
          reason: 'reason' in refusal ? refusal.reason : refusal.message,
        });
        throw new HttpError(
          refusal.status,
          refusal.message,
          'challenge' in refusal ? { 'www-authenticate': refusal.challenge } : {},
        );
      }
      if (matches.length === 0) throw new HttpError(404, `no route for ${url.pathname}`);
      if (!route) throw new HttpError(405, `${req.method} is not allowed on ${url.pathname}`);
      const params: Record<string, string> = {};
      route.parts.forEach((p, i) => {
        if (p.startsWith(':')) params[p.slice(1)] = parts[i] ?? '';
      });
      const body = req.method === 'GET' || req.method === 'DELETE' ? undefined : await readJson(req);
      const reply = await route.handler({ method: req.method ?? 'GET', params, query: url.searchParams, body });
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
    res.end(reply.text);
    return;
  }
  if (reply.json === undefined && status === 204) {
    res.writeHead(204, headers).end();
    return;
  }
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(reply.json ?? null));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    // The rest is not read: close the connection after the answer, so that no client reuses it.
    if (size > MAX_BODY_BYTES)
      throw new HttpError(413, 'the request body is larger than 1 MiB', { connection: 'close' });
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  const type = req.headers['content-type'] ?? '';
  // A fleet file travels as YAML text; everything else is JSON.
  if (/^(application|text)\/(x-)?yaml/.test(type)) return Buffer.concat(chunks).toString('utf8');
  if (!type.includes('application/json')) throw new HttpError(415, 'send JSON (content-type: application/json)');
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the request body is not valid JSON');
  }
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
