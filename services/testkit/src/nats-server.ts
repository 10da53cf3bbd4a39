// A private nats-server with JetStream for the tests that stop, restart or reconfigure a broker:
// its own loopback port, store directory and config file, so the shared NATS on 4222 is never
// touched. It can be stopped (gracefully or as a crash) and started again on the same port and
// store, as a restarted broker would be.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { accepts, freePort } from './net';
import { waitFor } from './wait';

/** Debian's nats-server, or the one NATS_SERVER_BIN names. */
export const NATS_SERVER_BIN =
  process.env.NATS_SERVER_BIN ?? (existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server');

export interface NatsServerOptions {
  /** More of the server's config (e.g. `tls { … }`, `authorization { … }`), after listen and jetstream. */
  config?: string;
  /** The URL's scheme and host: `tls://localhost` for a server whose certificate names localhost. */
  urlBase?: string;
  /**
   * A config file of the repository to include as it is, after listen and jetstream (a shipped
   * config under test: its own includes resolve beside it, as in production).
   */
  include?: string;
  /** More environment for nats-server (a config's `$VAR` references). */
  env?: Record<string, string>;
}

export interface NatsServer {
  readonly url: string;
  readonly port: number;
  /** Start (again) on the same port and store; resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGTERM (a graceful shutdown) or SIGKILL (a crash); resolves once the process is gone. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Kill it and remove its store. */
  close(): Promise<void>;
  /** What the server logged (stderr) since it first started, e.g. its permission violations. */
  log(): string;
}

export async function startNatsServer(opts: NatsServerOptions = {}): Promise<NatsServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mcp-fleet-nats-'));
  const store = join(dir, 'jetstream');
  mkdirSync(store);
  const conf = join(dir, 'nats.conf');
  // nats-server resolves an include relative to the including file, even an absolute path.
  const include = opts.include ? `include "${relative(dir, opts.include)}"\n` : '';
  writeFileSync(
    conf,
    `listen: "127.0.0.1:${port}"\njetstream { store_dir: "${store}" }\n${include}${opts.config ?? ''}\n`,
  );
  let child: ChildProcess | undefined;
  let logged = '';

  const stop = async (signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    await exited;
  };
  const server: NatsServer = {
    url: `${opts.urlBase ?? 'nats://127.0.0.1'}:${port}`,
    port,
    async start() {
      if (child) throw new Error('nats-server is already running');
      const started = spawn(NATS_SERVER_BIN, ['-c', conf], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, ...opts.env },
      });
      child = started;
      // nats-server logs to stderr; the tail goes into any error about it.
      let stderr = '';
      let spawnError: Error | undefined;
      started.once('error', (err) => {
        spawnError = err;
      });
      started.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-2_000);
        logged = (logged + chunk).slice(-1_000_000);
      });
      await waitFor(
        'nats-server to be ready',
        () => {
          if (spawnError) throw new Error(`${NATS_SERVER_BIN} did not start: ${spawnError.message}`);
          if (started.exitCode !== null) throw new Error(`nats-server exited (${started.exitCode}): ${stderr}`);
          return stderr.includes('Server is ready');
        },
        20_000,
      ).catch((err: Error) => {
        child = undefined;
        started.kill('SIGKILL');
        throw new Error(`${err.message}\n${stderr}`);
      });
      await waitFor('nats-server to accept connections', () => accepts(port), 10_000);
    },
    stop,
    log: () => logged,
    async close() {
      await stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  // A test that dies early still leaves no server behind.
  process.once('exit', () => child?.kill('SIGKILL'));
  await server.start();
  return server;
}
