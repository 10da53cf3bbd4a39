import type { ServerResponse } from 'node:http';
import { listenHttp, pathOf, sendText } from '../serve';
import { loopbackUrl, type TargetDefinition } from '../target';

const KEEPALIVE_MS = 500;
const SLOW_ENDPOINT_MS = 3000;

function openStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
}

/** Looks like an HTTP+SSE server but never names an endpoint: the opening must time out. */
export const sseNoEndpoint: TargetDefinition = {
  name: 'sse-no-endpoint',
  kind: 'odd',
  description: 'GET → event stream of keepalive comments only, never an endpoint event; POST → 405',
  async start({ name, port, log }) {
    const listener = await listenHttp(name, port, log, (req, res) => {
      if (req.method !== 'GET') return sendText(res, 405, 'text/plain', 'Method Not Allowed', { allow: 'GET' });
      openStream(res);
      res.write(': keepalive\n\n');
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
      res.on('close', () => clearInterval(keepalive));
    });
    return { url: loopbackUrl(listener.port, '/sse'), supports: () => [], close: () => listener.close() };
  },
};

/** Names its endpoint later than the 2 s an HTTP+SSE opening waits. */
export const sseSlowEndpoint: TargetDefinition = {
  name: 'sse-slow-endpoint',
  kind: 'odd',
  description: `GET → event stream whose endpoint event comes only after ${SLOW_ENDPOINT_MS} ms; POST /messages → 202`,
  async start({ name, port, log }) {
    const listener = await listenHttp(name, port, log, (req, res) => {
      if (req.method === 'POST' && pathOf(req) === '/messages') return sendText(res, 202, 'text/plain', 'Accepted');
      if (req.method !== 'GET') return sendText(res, 405, 'text/plain', 'Method Not Allowed', { allow: 'GET' });
      openStream(res);
      const endpoint = setTimeout(() => res.write('event: endpoint\ndata: /messages\n\n'), SLOW_ENDPOINT_MS);
      res.on('close', () => clearTimeout(endpoint));
    });
    return { url: loopbackUrl(listener.port, '/sse'), supports: () => [], close: () => listener.close() };
  },
};
