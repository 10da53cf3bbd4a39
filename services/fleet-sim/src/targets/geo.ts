// A server behind geo-DNS, on one machine: what it answers depends on who asks (the caller's
// address), so two agents on 127.0.0.1 and 127.0.0.2 see two regions' servers (issue 17, item 7).
// Each address sees a face: `modern` (2026-07-28 and 2025-11-25, SDK 2.4 createMcpHandler),
// `modern-only` (2026-07-28 only: initialize is refused, so a test on 2025-11-25 hears an era
// signal and moves at once), `legacy` (2025-11-25 only, SDK 2.4 stateful Streamable HTTP sessions)
// or `down` (503 for every request); addresses without a face of their own see the default face. Faces change at run time
// (setFace, sim.face, a drift script step) and take effect on the next request.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { Revision } from '../revisions';
import { listenHttp, pathOf, type RequestBody, sendText } from '../serve';
import { StreamableSessions } from '../sessions';
import { loopbackUrl, type TargetDefinition } from '../target';
import { createV2Server, v2Endpoint } from '../v2';

export const GEO_FACES = ['modern', 'modern-only', 'legacy', 'down'] as const;
export type GeoFace = (typeof GEO_FACES)[number];

/** The revisions each face speaks, oldest → newest. */
export const GEO_FACE_REVISIONS: Readonly<Record<GeoFace, readonly Revision[]>> = {
  modern: ['2025-11-25', '2026-07-28'],
  'modern-only': ['2026-07-28'],
  legacy: ['2025-11-25'],
  down: [],
};

/** The face an address sees when none was set for it. */
export const GEO_DEFAULT_FACE: GeoFace = 'modern';

export function isGeoFace(value: unknown): value is GeoFace {
  return typeof value === 'string' && (GEO_FACES as readonly string[]).includes(value);
}

/** A caller's address as the faces are keyed: an IPv4-mapped IPv6 address (`::ffff:127.0.0.2`) as IPv4. */
export function callerAddress(address: string | undefined): string {
  const a = (address ?? '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  return mapped ? mapped[1]! : a;
}

/** Who sees which face: a default, and addresses with a face of their own. */
export class GeoFaces {
  #default: GeoFace = GEO_DEFAULT_FACE;
  readonly #byAddress = new Map<string, GeoFace>();

  /** `address` omitted: the default face (addresses with their own face keep it). */
  set(face: GeoFace, address?: string): void {
    if (!isGeoFace(face)) throw new Error(`geo: no face ${JSON.stringify(face)} (one of ${GEO_FACES.join(', ')})`);
    if (address === undefined) {
      this.#default = face;
      return;
    }
    const key = callerAddress(address);
    if (isIP(key) === 0) throw new Error(`geo: a face is set for an IP address, not ${JSON.stringify(address)}`);
    this.#byAddress.set(key, face);
  }

  of(address: string | undefined): GeoFace {
    return this.#byAddress.get(callerAddress(address)) ?? this.#default;
  }

  get default(): GeoFace {
    return this.#default;
  }

  byAddress(): Record<string, GeoFace> {
    return Object.fromEntries(this.#byAddress);
  }
}

export const geo: TargetDefinition = {
  name: 'geo',
  kind: 'odd',
  description:
    "Answers by the caller's address (a rollout behind geo-DNS): faces modern (2026-07-28, 2025-11-25), modern-only (2026-07-28), legacy (2025-11-25) or down (503); default modern",
  async start({ name, port, log }) {
    const faces = new GeoFaces();
    // Both faces' servers live for the target's life: switching a face only changes who is sent where.
    const modern = v2Endpoint(name, { legacy: 'stateless', revisions: GEO_FACE_REVISIONS.modern });
    const modernOnly = v2Endpoint(name, { legacy: 'reject', revisions: GEO_FACE_REVISIONS['modern-only'] });
    const legacy = new StreamableSessions(async (onInitialized) => {
      const server = createV2Server(name, GEO_FACE_REVISIONS.legacy);
      const transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: onInitialized,
      });
      await server.connect(transport);
      return { transport, close: () => server.close() };
    });
    const handle = async (req: IncomingMessage, res: ServerResponse, body: RequestBody | undefined) => {
      const face = faces.of(req.socket.remoteAddress);
      if (face === 'down') return sendText(res, 503, 'text/plain', 'Service Unavailable');
      if (pathOf(req) !== '/mcp') return sendText(res, 404, 'text/plain', 'Not Found');
      // A session the legacy face opened finishes there (a drift does the same), whatever the face is now.
      if (face === 'legacy' || legacy.owns(req)) return legacy.handle(req, res, body);
      if (face === 'modern-only') return modernOnly.handle(req, res, body);
      return modern.handle(req, res, body);
    };
    const listener = await listenHttp(name, port, log, handle);
    return {
      url: loopbackUrl(listener.port, '/mcp'),
      supports: () => [...GEO_FACE_REVISIONS[faces.default]],
      setFace: (face, address) => faces.set(face, address),
      faces: () => ({ default: faces.default, byAddress: faces.byAddress() }),
      async close() {
        await Promise.all([listener.close(), modern.close(), modernOnly.close(), legacy.closeAll()]);
      },
    };
  },
};
