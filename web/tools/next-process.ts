// The built dashboard as its own process, the way the web image runs it: bin/dashboard.js (its own
// HTTP server over the Next app) reading Postgres from DATABASE_URL and writing through control's
// API (MCP_FLEET_API_URL). Used by the end-to-end tests, bench:web and the screenshots. Each dashboard leads its own process group, so
// whatever Next starts goes with it, and every one still running is killed when this process exits.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { build, isBuilt, WEB_DIR } from '../index';

export interface DashboardProcess {
  url: string;
  stop(): Promise<void>;
  /** The last lines it printed (for a failure's message). */
  output(): string;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) kill(child, 'SIGKILL');
});

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export async function startDashboardProcess(
  /** DATABASE_URL, control's MCP_FLEET_API_URL, and any other setting (sign-in: MCP_FLEET_WEB_PASSWORD, …). */
  env: { DATABASE_URL: string; MCP_FLEET_API_URL?: string } & Record<string, string | undefined>,
  opts: { startTimeoutMs?: number } = {},
): Promise<DashboardProcess> {
  if (!isBuilt()) await build((m) => console.log(m));
  const port = await freePort();
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    MCP_FLEET_WEB_HOST: '127.0.0.1',
    ...env,
    NEXT_TELEMETRY_DISABLED: '1',
    NODE_ENV: 'production',
  };
  // A caller's loader (tsx) has no business in the dashboard: bin/dashboard.js registers its own.
  delete childEnv.NODE_OPTIONS;
  const child = spawn(process.execPath, [join(WEB_DIR, 'bin', 'dashboard.js')], {
    cwd: WEB_DIR,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(child);
  let out = '';
  const collect = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    kill(child, 'SIGTERM');
    const timer = setTimeout(() => kill(child, 'SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
    running.delete(child);
  };

  const url = `http://127.0.0.1:${port}`;
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the dashboard exited (${child.exitCode ?? child.signalCode}):\n${out}`);
    // Any answer will do: the server is up (pages' own statuses are the caller's to check).
    const up = await fetch(`${url}/servers`, { signal: AbortSignal.timeout(10_000), redirect: 'manual' })
      .then(async (r) => {
        await r.arrayBuffer();
        return true;
      })
      .catch(() => false);
    if (up) return { url, stop, output: () => out };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the dashboard did not answer within ${timeoutMs / 1000} s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function kill(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}
