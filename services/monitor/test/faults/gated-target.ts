// A load target whose answers wait behind a gate: while the gate is shut, every request hangs
// (so a probe stays in flight for as long as the test wants); opening it answers them all and
// every later request at once. Like fleet-sim's cheap fleet it answers only a 2026-07-28
// `server/discover`, on any path: it exists to hold jobs in an agent's hands, not to be an MCP server.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GatedTarget {
  /** `http://127.0.0.1:<port>/g/<i>`. */
  url(i: number): string;
  /** Requests waiting behind the shut gate right now. */
  held(): number;
  /** Requests answered so far. */
  answered(): number;
  open(): void;
  close(): Promise<void>;
}

const DISCOVER_RESULT = {
  supportedVersions: ['2026-07-28'],
  capabilities: {},
  _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'gated', version: '1' } },
};

export async function startGatedTarget(): Promise<GatedTarget> {
  let shut = true;
  let answered = 0;
  const waiting = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = () => reply(res, Buffer.concat(chunks).toString('utf8'), () => answered++);
      if (!shut) return answer();
      const release = () => {
        waiting.delete(release);
        answer();
      };
      waiting.add(release);
      // A client that goes away (a killed agent) leaves nothing waiting.
      res.on('close', () => waiting.delete(release));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: (i) => `http://127.0.0.1:${port}/g/${i}`,
    held: () => waiting.size,
    answered: () => answered,
    open() {
      shut = false;
      for (const release of [...waiting]) release();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function reply(res: ServerResponse, body: string, count: () => void) {
  if (res.destroyed) return;
  let msg: { id?: unknown; method?: unknown } | undefined;
  try {
    msg = JSON.parse(body);
  } catch {
    msg = undefined;
  }
  const id = typeof msg?.id === 'string' || typeof msg?.id === 'number' ? msg.id : null;
  const payload =
    msg?.method === 'server/discover'
      ? { jsonrpc: '2.0', id, result: DISCOVER_RESULT }
      : { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } };
  const text = JSON.stringify(payload);
  res.writeHead(msg?.method === 'server/discover' ? 200 : 404, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
  count();
}
