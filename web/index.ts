// The dashboard's HTTP server: the built Next app on its own port, inside `mcp-fleet up` (reading
// that process's database handle: embedded PGlite admits one process) or on its own (serve.ts, the
// web image: Postgres from DATABASE_URL, as serve.ts parsed it), writing through control's API. Every response says it
// may not be framed, and every request carries the client's address as this server saw it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DashboardSettings, DatabaseSettings, SecretKeySettings } from '@mcp-fleet/config';
import type { Db } from '@mcp-fleet/store';
import next from 'next';
import { setWebAuth, webAuth, webAuthFrom } from './lib/auth-core';
import { shared } from './lib/shared';
import { CLIENT_ADDRESS_HEADER } from './lib/sign-in-budget';

export const WEB_DIR = dirname(fileURLToPath(import.meta.url));

export interface DashboardOptions extends DashboardSettings {
  /** The process's database handle; unset, the dashboard opens Postgres from `database` itself. */
  db?: Db | undefined;
  /** Where to open Postgres without `db` (DATABASE_URL and its TLS), and the key ring's sources. */
  database?: DatabaseSettings | undefined;
  secretKey?: SecretKeySettings | undefined;
  /** Control's API base URL (MCP_FLEET_API_URL on its own). */
  apiUrl?: string | undefined;
}

export interface Dashboard {
  url: string;
  close(): Promise<void>;
}

/** Whether `next build` has produced the app this package serves. */
export function isBuilt(): boolean {
  return existsSync(join(WEB_DIR, '.next', 'BUILD_ID'));
}

/** Build the app (about a minute on two cores); `npm start` does it through turbo, which caches it. */
export async function build(log?: (msg: string) => void): Promise<void> {
  const bin = createRequire(import.meta.url).resolve('next/dist/bin/next');
  log?.('dashboard: building the Next.js app once (npm run build caches it)');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'build'], {
      cwd: WEB_DIR,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4_000);
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`building the dashboard failed (exit ${code}): ${stderr.trim()}`)),
    );
  });
}

export async function startDashboard(opts: DashboardOptions): Promise<Dashboard> {
  if (!isBuilt()) await build(opts.log);
  const hostname = opts.host ?? '127.0.0.1';
  // Sign-in (MCP_FLEET_WEB_PASSWORD, the API tokens) is made now, so a bad setting stops the start
  // rather than every page; the pages find it, and the rest of their settings, where they look.
  setWebAuth(() => webAuthFrom(opts.signIn, opts.allowedHosts));
  webAuth();
  Object.assign(shared(), {
    db: opts.db,
    database: opts.database,
    secretKey: opts.secretKey,
    apiUrl: opts.apiUrl,
    apiToken: opts.apiToken,
    traceUrl: opts.traceUrl,
    clientAddressHeader: true,
  });
  // Not quiet: a page that fails to render logs why (its error page points at the log).
  const app = next({ dev: false, dir: WEB_DIR, hostname, port: opts.port });
  await withoutConfigTiming(() => app.prepare());
  const handle = app.getRequestHandler();
  const server: Server = createServer((req, res) => {
    // Who is asking, for the sign-in budget: the TCP peer, over whatever the client wrote there.
    req.headers[CLIENT_ADDRESS_HEADER] = req.socket.remoteAddress ?? '';
    // No page of the dashboard in another site's frame (clickjacking a sign-in or a save): every
    // response, Next's error pages, 404s and the proxy's refusals included.
    res.setHeader('content-security-policy', "frame-ancestors 'none'");
    res.setHeader('x-frame-options', 'DENY');
    handle(req, res).catch((err: unknown) => {
      opts.log?.(`dashboard: ${(err as Error).message}`);
      if (!res.headersSent) res.writeHead(500).end('internal error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? // Keeps the listen error's code and port: `mcp-fleet up` names the setting from them.
            Object.assign(new Error(`the dashboard's port ${opts.port} is in use (set PORT to another)`), {
              code: err.code,
              syscall: err.syscall,
              port: opts.port,
            })
          : err,
      ),
    );
    server.listen(opts.port, hostname, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return {
    url: `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close().catch(() => {});
      // The database the dashboard opened itself (DATABASE_URL), not one it was handed.
      if (!opts.db) await (await shared().opening?.catch(() => undefined))?.close();
      Object.assign(shared(), {
        db: undefined,
        database: undefined,
        secretKey: undefined,
        opening: undefined,
        apiUrl: undefined,
        apiToken: undefined,
        traceUrl: undefined,
        clientAddressHeader: undefined,
      });
      setWebAuth(undefined);
    },
  };
}

/**
 * Next prints "✓ Running next.config.mjs took 77ms" when it loads its configuration, with no
 * option to stop it: a developer's line in the operator's terminal. Only that line is dropped,
 * only while the app prepares; everything else Next says (a page failing) still gets through.
 */
async function withoutConfigTiming<T>(prepare: () => Promise<T>): Promise<T> {
  const log = console.log;
  console.log = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && /Running next\.config\.\w+ took /.test(args[0])) return;
    log(...args);
  };
  try {
    return await prepare();
  } finally {
    console.log = log;
  }
}
