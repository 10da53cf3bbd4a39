// Control's API served over node:http on its port: every request first through the gate (the
// request guard, then the token), then to its route.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestRefusal } from '@mcp-fleet/auth/request-guard';
import type { Logger } from '@mcp-fleet/log';
import type { ApiAuth } from './auth';
import type { Router } from './http';

export interface ApiServerOptions {
  router: Router;
  auth: ApiAuth;
  /** Host names served with auth off besides loopback names and IP literals. */
  allowedHosts: readonly string[];
  host: string;
  port: number;
  log: Logger;
}

export interface ApiServer {
  url: string;
  close(): Promise<void>;
}

/** Listening when it resolves; a port in use rejects. */
export async function serveApi(opts: ApiServerOptions): Promise<ApiServer> {
  const { router, auth, log } = opts;
  // What a browser may ask, before the token (auth's request-guard, the dashboard's rules too):
  // with auth off, only Host names that cannot be rebound (whatever the bind address); with auth
  // on or off, no write from another site's page.
  const guard = { authEnabled: auth.enabled, allowedHosts: opts.allowedHosts };
  router.guard(
    (access, req) => {
      const refused = requestRefusal(req, guard);
      return refused ? { status: 403, message: `refused: ${refused}` } : auth.check(access, req.headers);
    },
    (refused) => log.warn(refused, 'API request refused'),
  );
  // Which scope the caller's token carries (admin with auth off): `mcp-fleet mcp` asks it so that
  // the tools it lists are the ones the token may use.
  router.mount(
    '/api/whoami',
    async (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ scope: auth.scopeOf(req.headers), authEnabled: auth.enabled }));
    },
    'read',
  );
  const http = createServer(
    (req, res) => void router.handle(req, res, (err) => log.error({ err: (err as Error).message }, 'API error')),
  );
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, opts.host, () => resolve());
  });
  const address = http.address() as AddressInfo;
  return {
    url: `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
