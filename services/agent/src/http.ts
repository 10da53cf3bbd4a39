// The agent's small HTTP face: /metrics for Prometheus, /healthz (the process is up) and /readyz
// (it is taking jobs; 503 once it is stopping, so an orchestrator stops routing to it).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface AgentHttp {
  /** Base URL, e.g. http://127.0.0.1:9464 */
  readonly url: string;
  close(): Promise<void>;
}

export async function serveAgentHttp(opts: {
  registry: Registry;
  port: number;
  host: string;
  ready: () => boolean;
  onError?: (err: unknown) => void;
}): Promise<AgentHttp> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      opts.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(text),
        (err) => {
          opts.onError?.(err);
          res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n');
        },
      );
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (path === '/readyz') {
      const ready = opts.ready();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ready\n' : 'stopping\n');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
