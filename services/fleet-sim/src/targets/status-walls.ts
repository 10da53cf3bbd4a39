import { listenHttp, sendJson, sendText } from '../serve';
import { loopbackUrl, type TargetDefinition } from '../target';

/** HTTP servers that answer every request the same way before any MCP is spoken. */

export const rateLimited: TargetDefinition = {
  name: 'rate-limited',
  kind: 'odd',
  description: 'Answers every request 429 with Retry-After: 30',
  async start({ name, port, log }) {
    const listener = await listenHttp(name, port, log, (_req, res) =>
      sendJson(res, 429, { error: 'rate_limited', retryAfterSeconds: 30 }, { 'retry-after': '30' }),
    );
    return { url: loopbackUrl(listener.port, '/mcp'), supports: () => [], close: () => listener.close() };
  },
};

export const unavailable: TargetDefinition = {
  name: 'unavailable',
  kind: 'odd',
  description: 'Answers every request 503 with an HTML error page',
  async start({ name, port, log }) {
    const listener = await listenHttp(name, port, log, (_req, res) =>
      sendText(res, 503, 'text/html; charset=utf-8', page('503 Service Unavailable', 'Down for maintenance.')),
    );
    return { url: loopbackUrl(listener.port, '/mcp'), supports: () => [], close: () => listener.close() };
  },
};

export const website: TargetDefinition = {
  name: 'website',
  kind: 'odd',
  description: 'A plain website: GET → 200 HTML, POST/DELETE → 405 HTML',
  async start({ name, port, log }) {
    const listener = await listenHttp(name, port, log, (req, res) => {
      if (req.method === 'GET' || req.method === 'HEAD') {
        return sendText(res, 200, 'text/html; charset=utf-8', page('Welcome', 'Nothing to see here, just a website.'));
      }
      sendText(res, 405, 'text/html; charset=utf-8', page('405 Method Not Allowed', 'This is a website.'), {
        allow: 'GET, HEAD',
      });
    });
    return { url: loopbackUrl(listener.port, '/'), supports: () => [], close: () => listener.close() };
  },
};

function page(title: string, text: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>\n`;
}

/**
 * Answers every request with the reply its path names: `/reply/<status>/<body>`, where body is
 * `html` or `jsonrpc<code>` (e.g. `/reply/400/jsonrpc-32601`). Lets tests meet every era-signal
 * rule and non-signal (docs/protocol.md#era-signals) over real HTTP, including replies no SDK
 * server gives.
 */
export const replies: TargetDefinition = {
  name: 'replies',
  kind: 'odd',
  description: 'Answers with the status and body its path names: /reply/<status>/<html|jsonrpc<code>>; a 3xx redirects',
  async start({ name, port, log }) {
    const listener = await listenHttp(name, port, log, (req, res) => {
      const [, , statusText = '404', body = 'html'] = (req.url ?? '/').split('?')[0]!.split('/');
      const status = Number(statusText);
      const code = /^jsonrpc(-?\d+)$/.exec(body)?.[1];
      if (!Number.isInteger(status) || status < 200 || status > 599)
        return sendText(res, 400, 'text/plain', 'bad status');
      // A 3xx points back at this target, so a client that followed it silently would be caught by the request log.
      const location = status >= 300 && status < 400 ? { location: '/reply/200/html' } : undefined;
      if (code === undefined)
        return sendText(res, status, 'text/html; charset=utf-8', page(`${status}`, 'A reply.'), location);
      sendJson(
        res,
        status,
        { jsonrpc: '2.0', id: null, error: { code: Number(code), message: `error ${code}` } },
        location,
      );
    });
    return { url: loopbackUrl(listener.port, '/reply/404/html'), supports: () => [], close: () => listener.close() };
  },
};
