// The dashboard inside another process (`mcp-fleet up`): the built Next app served on its own port,
// reading the process's database handle (embedded PGlite admits one process) and writing through
// control's API.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from '@mcp-fleet/store';
import next from 'next';
import { resetWebAuth, webAuth } from './lib/auth-core';
import { shared } from './lib/shared';

export const WEB_DIR = dirname(fileURLToPath(import.meta.url));

export interface DashboardOptions {
  db: Db;
  /** Control's API base URL. */
  apiUrl: string;
  /** The dashboard's token for control (admin scope to change the fleet); never sent to a browser. */
  apiToken?: string | undefined;
  port: number;
  host?: string | undefined;
  log?: ((msg: string) => void) | undefined;
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
  // Sign-in reads this process's environment (MCP_FLEET_WEB_PASSWORD, the API tokens): checked now,
  // so a bad setting stops the start rather than every page.
  resetWebAuth();
  webAuth();
  Object.assign(shared(), { db: opts.db, apiUrl: opts.apiUrl, apiToken: opts.apiToken });
  const app = next({ dev: false, dir: WEB_DIR, hostname, port: opts.port, quiet: true });
  await app.prepare();
  const handle = app.getRequestHandler();
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      opts.log?.(`dashboard: ${(err as Error).message}`);
      if (!res.headersSent) res.writeHead(500).end('internal error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(`the dashboard's port ${opts.port} is in use (set PORT to another)`)
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
      Object.assign(shared(), { db: undefined, apiUrl: undefined, apiToken: undefined });
      resetWebAuth();
    },
  };
}
