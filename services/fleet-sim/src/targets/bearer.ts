import type { IncomingMessage } from 'node:http';
import { listenHttp, pathOf, sendJson, sendText } from '../serve';
import { loopbackUrl, type TargetDefinition } from '../target';
import { v2Endpoint } from '../v2';

/** The only credential the `bearer` target accepts. */
export const SIM_BEARER_TOKEN = 'sim-secret-token';

function presentsToken(req: IncomingMessage): boolean {
  const [scheme, token, ...rest] = (req.headers.authorization ?? '').trim().split(/\s+/);
  return scheme?.toLowerCase() === 'bearer' && token === SIM_BEARER_TOKEN && rest.length === 0;
}

export const bearer: TargetDefinition = {
  name: 'bearer',
  kind: 'sdk',
  description: `SDK 2.4 createMcpHandler behind a bearer check (token "${SIM_BEARER_TOKEN}"); the 401 body echoes the Authorization header`,
  async start({ name, port, log }) {
    const endpoint = v2Endpoint(name, { legacy: 'stateless' });
    const listener = await listenHttp(name, port, log, async (req, res, body) => {
      if (pathOf(req) !== '/mcp') return sendText(res, 404, 'text/plain', 'Not Found');
      if (!presentsToken(req)) {
        // Hostile on purpose: echoing the credential tests that the prober redacts evidence.
        const received = req.headers.authorization ?? null;
        const challenge =
          received === null ? 'Bearer realm="fleet-sim"' : 'Bearer realm="fleet-sim", error="invalid_token"';
        return sendJson(res, 401, { error: 'invalid_token', received }, { 'www-authenticate': challenge });
      }
      await endpoint.handle(req, res, body);
    });
    return {
      url: loopbackUrl(listener.port, '/mcp'),
      supports: () => ['2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'],
      async close() {
        await Promise.all([listener.close(), endpoint.close()]);
      },
    };
  },
};
