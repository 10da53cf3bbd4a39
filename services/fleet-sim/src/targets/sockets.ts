import { listenTcp, reserveClosedPort } from '../serve';
import { loopbackUrl, type TargetDefinition } from '../target';

/** Accepts TCP connections and never writes a byte: only a timeout ends the conversation. */
export const silent: TargetDefinition = {
  name: 'silent',
  kind: 'odd',
  description: 'Accepts TCP connections and never answers',
  async start({ name, port, log }) {
    const listener = await listenTcp(name, port, log, (socket) => {
      socket.on('error', () => {});
      socket.resume();
    });
    return { url: loopbackUrl(listener.port, '/mcp'), supports: () => [], close: () => listener.close() };
  },
};

/** Nothing listens here: connecting is refused. */
export const closed: TargetDefinition = {
  name: 'closed',
  kind: 'odd',
  description: 'A loopback port with nothing listening (connection refused)',
  async start({ port }) {
    const free = await reserveClosedPort(port);
    return { url: loopbackUrl(free, '/mcp'), supports: () => [], close: async () => {} };
  },
};
