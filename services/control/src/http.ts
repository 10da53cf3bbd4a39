// A small JSON HTTP router over node:http. Our surface is a dozen JSON routes; a route table
// and a body reader are all it takes, so no web framework is pulled in for it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
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

interface Route {
  method: string;
  parts: string[];
  handler: RouteHandler;
}

const MAX_BODY_BYTES = 1024 * 1024;

export class Router {
  readonly #routes: Route[] = [];

  on(method: string, pattern: string, handler: RouteHandler): this {
    this.#routes.push({ method, parts: pattern.split('/').filter(Boolean), handler });
    return this;
  }

  /** Handle a request; errors become JSON `{ error }` with the right status, never a stack. */
  async handle(req: IncomingMessage, res: ServerResponse, onError: (err: unknown) => void): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      const matches = this.#routes.filter(
        (r) => r.parts.length === parts.length && r.parts.every((p, i) => p.startsWith(':') || p === parts[i]),
      );
      if (matches.length === 0) throw new HttpError(404, `no route for ${url.pathname}`);
      const route = matches.find((r) => r.method === req.method);
      if (!route) throw new HttpError(405, `${req.method} is not allowed on ${url.pathname}`);
      const params: Record<string, string> = {};
      route.parts.forEach((p, i) => {
        if (p.startsWith(':')) params[p.slice(1)] = parts[i] ?? '';
      });
      const body = req.method === 'GET' || req.method === 'DELETE' ? undefined : await readJson(req);
      const reply = await route.handler({ method: req.method ?? 'GET', params, query: url.searchParams, body });
      send(res, reply.status ?? 200, reply);
    } catch (err) {
      if (err instanceof HttpError) return send(res, err.status, { json: { error: err.message } });
      if (err instanceof z.ZodError) return send(res, 400, { json: { error: zodMessage(err) } });
      onError(err);
      send(res, 500, { json: { error: 'internal error' } });
    }
  }
}

function send(res: ServerResponse, status: number, reply: Reply): void {
  if (res.headersSent) return;
  if (reply.text !== undefined) {
    res.writeHead(status, { 'content-type': reply.contentType ?? 'text/plain; charset=utf-8' });
    res.end(reply.text);
    return;
  }
  if (reply.json === undefined && status === 204) {
    res.writeHead(204).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(reply.json ?? null));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'the request body is larger than 1 MiB');
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

export function zodMessage(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
}

/** Parse with a schema or answer 400 naming the field. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw new HttpError(400, zodMessage(parsed.error));
  return parsed.data;
}
