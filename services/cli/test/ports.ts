// Ports for tests that run `mcp-fleet up`, which takes fixed ones.
import { createServer } from 'node:net';

/**
 * `up` takes fixed ports (API, agents at +1 and +2, dashboard at +5): find six free ones in a row
 * below Linux's ephemeral range (32768+), where other tests' outgoing connections and port-0
 * listeners never land.
 */
export async function freePortRun(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await Promise.all(Array.from({ length: 6 }, (_, i) => canListen(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error('no run of six free ports below 32000');
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}
