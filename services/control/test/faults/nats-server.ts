// A private nats-server with JetStream (its own port and store directory) that a test may stop
// and start again on the same port and store; the shared NATS on 4222 is never touched.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@mcp-fleet/testkit';
import { type Child, freePort, spawnChild } from './processes';

const BIN =
  process.env.NATS_SERVER_BIN ?? (existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server');

export interface PrivateNats {
  readonly url: string;
  readonly port: number;
  /** Start (again) on the same port and store directory; resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGTERM (graceful shutdown) or SIGKILL (a crash); resolves once the process is gone. */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  close(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}

export async function startPrivateNats(): Promise<PrivateNats> {
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), 'mcpfleet-faults-nats-'));
  let server: Child | undefined;
  const nats: PrivateNats = {
    url: `nats://127.0.0.1:${port}`,
    port,
    async start() {
      if (server?.alive()) throw new Error('nats-server is already running');
      const child = spawnChild('nats-server', BIN, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], {
        ...process.env,
      });
      server = child;
      await child.waitForLine('nats-server to be ready', (l) => l.text.includes('Server is ready'), 20_000);
      await waitFor('nats-server to accept connections', () => accepts(port), 10_000);
    },
    async stop(signal) {
      await server?.kill(signal);
    },
    async close() {
      await server?.kill('SIGKILL');
      rmSync(store, { recursive: true, force: true });
    },
  };
  await nats.start();
  return nats;
}
