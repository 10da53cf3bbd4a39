// /mcp on control's API port: the monitor's MCP server in both eras — 2026-07-28 through the SDK's
// createMcpHandler (stateless, one instance per request), and the 2025 revisions with sessions
// (legacy-sessions.ts), told apart by the SDK's own isLegacyRequest. The router's gate has admitted
// the request before it gets here — the same request guard as the REST API (no write from another
// site's page, no rebound Host with auth off) and any API token —; here the token's scope picks the
// tools, and its digest (or the client's address with auth off) is whom the detection tools' rate
// limit counts and whose legacy sessions are whose.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@mcp-fleet/log';
import { type NodeIncomingMessageLike, toNodeHandler } from '@modelcontextprotocol/node';
import { type AuthInfo, createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import { type ApiAuth, bearerToken, type Scope } from '../auth';
import type { Router } from '../http';
import { routerCaller } from './caller';
import { LegacySessions } from './legacy-sessions';
import type { DetectionLimiter } from './rate-limit';
import { monitorMcpServer, type ToolOutcome, tokenPrincipal } from './server';

/** The API's own bound on a body (http.ts): an MCP request is no bigger than an API one. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface McpEndpoint {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  close(): Promise<void>;
}

export function mcpEndpoint(opts: {
  router: Router;
  auth: ApiAuth;
  limiter: DetectionLimiter;
  log: Logger;
  onCall?: (tool: string, outcome: ToolOutcome) => void;
}): McpEndpoint {
  const { router, auth, limiter, log, onCall } = opts;
  const serverFor = (scope: Scope, principal: string) =>
    monitorMcpServer({ caller: routerCaller(router, scope), limiter, principal, onCall });
  const modern = createMcpHandler(
    (ctx) => serverFor((ctx.authInfo?.scopes[0] ?? 'read') as Scope, ctx.authInfo?.clientId ?? 'unknown'),
    { legacy: 'reject', onerror: (err) => log.warn({ err: err.message }, 'MCP request failed') },
  );
  const modernNode = toNodeHandler(modern, {
    onerror: (err) => log.error({ err: err.message }, 'MCP endpoint error'),
  });
  const legacy = new LegacySessions();

  return {
    async handle(req, res) {
      const scope = auth.scopeOf(req.headers);
      // The gate admitted it, so only a metrics token can land here without a scope: no tools for it.
      if (scope === null) return void sendJson(res, 403, { error: 'an API token is needed for /mcp' });
      const token = bearerToken(req.headers.authorization);
      const principal =
        token && auth.enabled ? tokenPrincipal(token) : `address:${req.socket.remoteAddress ?? 'unknown'}`;
      const text = await readBody(req);
      if (text === null) return void sendJson(res, 413, { error: 'the request body is larger than 1 MiB' });
      const info: AuthInfo = { token: '', clientId: principal, scopes: [scope] }; // the token is never handed on
      const asWeb = new Request(new URL(req.url ?? '/mcp', 'http://control.invalid'), {
        method: req.method,
        headers: webHeaders(req),
        body: text === '' || req.method === 'GET' || req.method === 'HEAD' ? undefined : text,
      });
      if (await isLegacyRequest(asWeb)) {
        return legacy.handle(Object.assign(req, { auth: info }), res, parsed(text), principal, () =>
          serverFor(scope, principal),
        );
      }
      await modernNode({ ...replayed(req, text), auth: info }, res);
    },
    async close() {
      await Promise.all([modern.close(), legacy.closeAll()]);
    },
  };
}

/** The body as text, or null past the bound (the rest is not read). */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parsed JSON for the legacy transport, or the text itself when it is none (it answers -32700). */
function parsed(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The request again with its already-read body, so the SDK parses the exact bytes. */
function replayed(req: IncomingMessage, text: string): NodeIncomingMessageLike {
  return {
    method: req.method,
    url: req.url,
    headers: req.headers,
    async *[Symbol.asyncIterator]() {
      if (text !== '') yield Buffer.from(text, 'utf8');
    },
  };
}

function webHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  return headers;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}
