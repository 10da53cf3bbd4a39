import { listenHttp, pathOf, sendText } from '../serve';
import { loopbackUrl, type RunningTarget, type TargetContext, type TargetDefinition } from '../target';
import { v2Endpoint } from '../v2';

async function startModern({ name, port, log }: TargetContext, legacy: 'stateless' | 'reject'): Promise<RunningTarget> {
  const endpoint = v2Endpoint(name, { legacy });
  const listener = await listenHttp(name, port, log, async (req, res, body) => {
    if (pathOf(req) !== '/mcp') return sendText(res, 404, 'text/plain', 'Not Found');
    await endpoint.handle(req, res, body);
  });
  return {
    url: loopbackUrl(listener.port, '/mcp'),
    supports: () =>
      legacy === 'stateless' ? ['2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] : ['2026-07-28'],
    async close() {
      await Promise.all([listener.close(), endpoint.close()]);
    },
  };
}

export const modern: TargetDefinition = {
  name: 'modern',
  kind: 'sdk',
  description: 'SDK 2.4 createMcpHandler: server/discover (2026-07-28) plus stateless 2025 initialize',
  start: (ctx) => startModern(ctx, 'stateless'),
};

export const modernOnly: TargetDefinition = {
  name: 'modern-only',
  kind: 'sdk',
  description: "SDK 2.4 createMcpHandler with legacy: 'reject': 2026-07-28 only, initialize gets 400 -32022",
  start: (ctx) => startModern(ctx, 'reject'),
};
