// Loopback ports for tests: a free one to listen on, a run of free ones for processes that take
// fixed ports, and whether something accepts on one.
import { createServer, Socket } from 'node:net';

/** A free TCP port on 127.0.0.1 (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/** Whether a TCP connection to 127.0.0.1:`port` is accepted. */
export function accepts(port: number): Promise<boolean> {
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

/**
 * The first of `count` free ports in a row, for a process that takes fixed ones (`up`: API, an
 * agent per region at +1, +2…, the dashboard at +5), picked below Linux's ephemeral range (32768+):
 * another test's outgoing connections and port-0 listeners (the demo fleet's own servers among them)
 * never land there between this check and the listen.
 */
export async function freePortRun(count = 6): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * (12_000 - count));
    const free = await Promise.all(Array.from({ length: count }, (_, i) => canListen(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error(`no run of ${count} free ports below 32000`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}
