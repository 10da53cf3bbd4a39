import { Drifter } from '../drift';
import type { Revision } from '../revisions';
import { listenHttp } from '../serve';
import { loopbackUrl, type TargetDefinition } from '../target';

/** A driftable v2 server on /mcp; see Drifter for how each set of revisions is served. */
export function drifterTarget(name: string, initial: Revision[]): TargetDefinition {
  return {
    name,
    kind: 'sdk',
    description: `Driftable SDK 2.4 server (starts on ${initial.join(', ')}); drift() changes the revisions it speaks`,
    async start({ port, log }) {
      const drifter = new Drifter(name, initial);
      const listener = await listenHttp(name, port, log, (req, res, body) => drifter.handle(req, res, body));
      return {
        url: loopbackUrl(listener.port, '/mcp'),
        supports: () => drifter.revisions,
        drift: (revisions) => drifter.drift(revisions),
        async close() {
          await Promise.all([listener.close(), drifter.close()]);
        },
      };
    },
  };
}
