// The dashboard on its own (the web image, docker-compose, Kubernetes, the end-to-end tests), served
// by its own HTTP server (index.ts) as inside `mcp-fleet up`, never by `next start`: so the client
// address the sign-in budget keys on and the anti-framing headers are always that server's. It
// reads Postgres from DATABASE_URL and writes through control's API (MCP_FLEET_API_URL, with
// MCP_FLEET_API_TOKEN). PORT (default 3000) and MCP_FLEET_WEB_HOST (default 127.0.0.1) say where it
// listens; beyond loopback only with sign-in on or MCP_FLEET_ALLOW_UNAUTHENTICATED=1, as in `up`.
import { AuthConfigError } from '@mcp-fleet/auth/api-tokens';
import { allowUnauthenticated, assertSafeBind } from '@mcp-fleet/auth/request-guard';
import { startDashboard } from './index';
import { webAuthFromEnv } from './lib/auth-core';

/** Serve until SIGINT or SIGTERM; the exit code (2: a setting is wrong, said on stderr). */
export async function serve(env: Record<string, string | undefined>): Promise<number> {
  const host = env.MCP_FLEET_WEB_HOST || '127.0.0.1';
  const port = Number(env.PORT || 3000);
  try {
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new AuthConfigError('PORT is not a port number');
    assertSafeBind({
      what: 'the dashboard',
      host,
      authEnabled: webAuthFromEnv(env).enabled,
      allowUnauthenticated: allowUnauthenticated(env),
      how: 'Set MCP_FLEET_WEB_PASSWORD (or API tokens, which also sign in)',
    });
  } catch (err) {
    if (!(err instanceof AuthConfigError)) throw err;
    process.stderr.write(`mcp-fleet dashboard: ${err.message}\n`);
    return 2;
  }
  const log = (m: string) => process.stdout.write(`${m}\n`);
  const dashboard = await startDashboard({ port, host, log });
  log(`dashboard at ${dashboard.url}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await dashboard.close();
  return 0;
}
