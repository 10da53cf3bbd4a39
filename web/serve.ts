// The dashboard on its own (the web image, docker-compose, Kubernetes, the end-to-end tests), served
// by its own HTTP server (index.ts) as inside `mcp-fleet up`, never by `next start`: so the client
// address the sign-in budget keys on and the anti-framing headers are always that server's. Its
// environment is parsed here, once (config's web schema): it reads Postgres from DATABASE_URL and
// writes through control's API (MCP_FLEET_API_URL, with MCP_FLEET_API_TOKEN). PORT (default 3000)
// and MCP_FLEET_WEB_HOST (default 127.0.0.1) say where it listens; beyond loopback only with
// sign-in on or MCP_FLEET_ALLOW_UNAUTHENTICATED=1, as in `up`.
import { AuthConfigError } from '@mcp-fleet/auth/api-tokens';
import { assertSafeBind } from '@mcp-fleet/auth/request-guard';
import { ConfigError, type Env, parseEnv, type WebSettings, webEnv } from '@mcp-fleet/config';
import { startDashboard } from './index';
import { webAuthFrom } from './lib/auth-core';

/** Serve until SIGINT or SIGTERM; the exit code (2: a setting is wrong, said on stderr). */
export async function serve(env: Env): Promise<number> {
  let settings: WebSettings;
  try {
    settings = parseEnv(webEnv, env);
    assertSafeBind({
      what: 'the dashboard',
      host: settings.listen.host,
      authEnabled: webAuthFrom(settings.signIn, settings.exposure.allowedHosts).enabled,
      allowUnauthenticated: settings.exposure.allowUnauthenticated,
      how: 'Set MCP_FLEET_WEB_PASSWORD (or API tokens, which also sign in)',
    });
  } catch (err) {
    if (!(err instanceof AuthConfigError || err instanceof ConfigError)) throw err;
    process.stderr.write(`mcp-fleet dashboard: ${err.message}\n`);
    return 2;
  }
  const log = (m: string) => process.stdout.write(`${m}\n`);
  const dashboard = await startDashboard({
    port: settings.listen.port,
    host: settings.listen.host,
    database: settings.database,
    secretKey: settings.secretKey,
    apiUrl: settings.apiUrl,
    apiToken: settings.apiToken,
    signIn: settings.signIn,
    allowedHosts: settings.exposure.allowedHosts,
    traceUrl: settings.traceUrl,
    log,
  });
  log(`dashboard at ${dashboard.url}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await dashboard.close();
  return 0;
}
