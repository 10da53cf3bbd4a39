import { openHttpSseSession } from '../http-sse-server';
import { listenHttp, pathOf, sendText } from '../serve';
import { SseSessions } from '../sse-sessions';
import { loopbackUrl, type TargetDefinition } from '../target';

export const legacySse: TargetDefinition = {
  name: 'legacy-sse',
  kind: 'sdk',
  description: 'SDK 1.9 on the HTTP+SSE transport (2024-11-05): GET /sse, POST /messages?sessionId=…',
  async start({ name, port, log }) {
    const sessions = new SseSessions();
    const listener = await listenHttp(name, port, log, async (req, res, body) => {
      const path = pathOf(req);
      if (req.method === 'GET' && path === '/sse') {
        return sessions.open(res, (stream) => openHttpSseSession(name, '/messages', stream));
      }
      if (req.method === 'POST' && path === '/messages') return sessions.post(req, res, body);
      sendText(res, 404, 'text/plain', 'Not Found');
    });
    return {
      url: loopbackUrl(listener.port, '/sse'),
      supports: () => ['2024-11-05'],
      async close() {
        await Promise.all([listener.close(), sessions.closeAll()]);
      },
    };
  },
};
