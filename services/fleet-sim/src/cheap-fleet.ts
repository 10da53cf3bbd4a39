// A cheap load target for the pipeline benchmark, NOT an MCP server: one node:http listener on
// loopback that answers a 2026-07-28 `server/discover` POSTed to any path with a fixed, valid
// DiscoverResult, so N targets are N paths on one port and cost almost nothing to serve. It
// implements nothing else (no SDK, no sessions, no other method): it exists to load the monitor's
// scheduler, bus, agent and ingest, not to test what the probe makes of a real server.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LOOPBACK } from './serve';

export interface CheapFleet {
  /** `http://127.0.0.1:<port>/t/<i>` for i in 0 … count-1. */
  urls: string[];
  /** POSTs answered so far (any outcome). */
  requests(): number;
  close(): Promise<void>;
}

export interface CheapFleetOptions {
  count: number;
  /** Default: any free port. */
  port?: number;
}

/** Enough for a discover request; anything bigger is not what this target is for. */
const MAX_BODY_BYTES = 64 * 1024;

const DISCOVER_RESULT = {
  supportedVersions: ['2026-07-28'],
  capabilities: {},
  _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'bench', version: '1' } },
};

export async function startCheapFleet(opts: CheapFleetOptions): Promise<CheapFleet> {
  if (!Number.isInteger(opts.count) || opts.count < 1) throw new TypeError('count is a whole number of at least 1');
  let requests = 0;
  const server = createServer((req, res) => {
    const answer = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-length': 0 });
      res.end();
      return;
    }
    requests += 1;
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return answer(413, { error: 'request body too large' });
      let msg: { id?: unknown; method?: unknown } | undefined;
      try {
        msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return answer(400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      }
      const id = typeof msg?.id === 'string' || typeof msg?.id === 'number' ? msg.id : null;
      // Only the one method the load needs; the rest is honestly refused rather than faked.
      if (msg?.method !== 'server/discover')
        return answer(404, { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
      answer(200, { jsonrpc: '2.0', id, result: DISCOVER_RESULT });
    });
  });
  // Agents keep their connections: the load is the pipeline's, not TCP set-up's.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, LOOPBACK, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const urls = Array.from({ length: opts.count }, (_, i) => `http://${LOOPBACK}:${port}/t/${i}`);
  return {
    urls,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
