// /mcp on control's API port: the monitor's MCP server in both eras (2026-07-28 stateless, and
// the 2025 revisions served statelessly by the SDK's legacy fallback). The router's gate has
// admitted the request before it gets here — the same request guard as the REST API (no write from
// another site's page, no rebound Host with auth off) and any API token —; here the token's scope
// picks the tools, and its digest (or the client's address with auth off) is whom the detection
// tools' rate limit counts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@mcp-fleet/log';
import { type NodeIncomingMessageLike, toNodeHandler } from '@modelcontextprotocol/node';
import { type AuthInfo, createMcpHandler } from '@modelcontextprotocol/server';
import { type ApiAuth, bearerToken, type Scope } from '../auth';
import type { Router } from '../http';
import { routerCaller } from './caller';
import type { DetectionLimiter } from './rate-limit';
import { monitorMcpServer, tokenPrincipal } from './server';

export interface McpEndpoint {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  close(): Promise<void>;
}

export function mcpEndpoint(opts: {
  router: Router;
  auth: ApiAuth;
  limiter: DetectionLimiter;
  log: Logger;
}): McpEndpoint {
  const { router, auth, limiter, log } = opts;
  const handler = createMcpHandler(
    (ctx) => {
      const scope = (ctx.authInfo?.scopes[0] ?? 'read') as Scope;
      return monitorMcpServer({
        caller: routerCaller(router, scope),
        limiter,
        principal: ctx.authInfo?.clientId ?? 'unknown',
      });
    },
    { legacy: 'stateless', onerror: (err) => log.warn({ err: err.message }, 'MCP request failed') },
  );
  const node = toNodeHandler(handler, { onerror: (err) => log.error({ err: err.message }, 'MCP endpoint error') });
  return {
    async handle(req, res) {
      const scope = auth.scopeOf(req.headers);
      // The gate admitted it, so only a metrics token can land here without a scope: no tools for it.
      if (scope === null) {
        res.writeHead(403, { 'content-type': 'application/json' }).end('{"error":"an API token is needed for /mcp"}');
        return;
      }
      const token = bearerToken(req.headers.authorization);
      const info: AuthInfo = {
        token: '', // never handed on: the tools act through the router with the scope alone
        clientId: token && auth.enabled ? tokenPrincipal(token) : `address:${req.socket.remoteAddress ?? 'unknown'}`,
        scopes: [scope],
      };
      (req as NodeIncomingMessageLike).auth = info;
      await node(req as NodeIncomingMessageLike, res);
    },
    close: () => handler.close(),
  };
}
