// The layer in front of a defective target: a real official-SDK server listens on a loopback port
// of its own (outside the fleet's ports), and this proxy on the target's port forwards every
// request to it over HTTP, letting one defect rewrite one request or one answer on the way. The
// SDK server itself is untouched, so whatever the defect does not rewrite is the SDK's own answer.
import { Agent, type IncomingHttpHeaders, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { RequestLog } from '../request-log';
import { listenHttp, pathOf, type RequestBody, sendText } from '../serve';
import { loopbackUrl, type RunningTarget, type TargetContext } from '../target';

/** A whole answer, buffered so a defect can rewrite it. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** A request as the defect may change it before it goes on. */
export interface Forward {
  headers: Record<string, string>;
  text: string;
}

export interface Exchange {
  req: IncomingMessage;
  body: RequestBody;
  /** The client's TCP connection, numbered from 1 in the order the proxy accepted them. */
  connection: number;
  /** Sends the request (or a rewritten one) to the SDK server and buffers its answer. */
  forward(rewritten?: Partial<Forward>): Promise<Reply>;
}

/** One deliberate defect: what a POST to the endpoint gets. GET and DELETE pass through untouched. */
export type Defect = (exchange: Exchange) => Promise<Reply>;

/** The SDK server's answers are ours to trust only up to a size: beyond it the proxy gives up. */
const MAX_REPLY_BYTES = 4 * 1024 * 1024;
/** Headers that belong to one hop, not to the message. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host']);

/** Starts `sdk` (the real server) on an ephemeral port, and the proxy with `defect` on the target's port. */
export async function startDefective(
  ctx: TargetContext,
  sdk: (ctx: TargetContext) => Promise<RunningTarget>,
  defect: Defect,
): Promise<RunningTarget> {
  // A log of its own: the fleet's log counts what clients sent the proxy, not the proxy's forwards.
  const inner = await sdk({ name: ctx.name, port: 0, log: new RequestLog() });
  const target = new URL(inner.url);
  const agent = new Agent({ keepAlive: true });
  const connections = new WeakMap<Socket, number>();
  let accepted = 0;
  const connectionOf = (socket: Socket): number => {
    let n = connections.get(socket);
    if (n === undefined) {
      accepted += 1;
      n = accepted;
      connections.set(socket, n);
    }
    return n;
  };

  const listener = await listenHttp(ctx.name, ctx.port, ctx.log, async (req, res, body) => {
    if (pathOf(req) !== target.pathname) return sendText(res, 404, 'text/plain', 'Not Found');
    const connection = connectionOf(req.socket);
    if (req.method !== 'POST' || body === undefined) return pipeThrough(agent, target, req, res);
    const original: Forward = { headers: forwardHeaders(req.headers), text: body.text };
    const reply = await defect({
      req,
      body,
      connection,
      forward: (rewritten = {}) => send(agent, target, req.method ?? 'POST', { ...original, ...rewritten }),
    });
    res.writeHead(reply.status, reply.headers);
    res.end(reply.text);
  });
  return {
    url: loopbackUrl(listener.port, target.pathname),
    supports: () => inner.supports(),
    async close() {
      agent.destroy();
      await Promise.all([listener.close(), inner.close()]);
    },
  };
}

/** The headers of a message as they go on to the next hop (hop-by-hop ones dropped). */
export function forwardHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function send(agent: Agent, target: URL, method: string, forward: Forward): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      target,
      { method, agent, headers: { ...forward.headers, 'content-length': Buffer.byteLength(forward.text) } },
      (incoming) => {
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on('data', (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size > MAX_REPLY_BYTES) incoming.destroy(new Error('upstream answer too large'));
          else chunks.push(chunk);
        });
        incoming.on('error', reject);
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 502,
            headers: forwardHeaders(incoming.headers),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(forward.text);
  });
}

/** Event streams (GET) and session ends (DELETE) go through as they are, streamed. */
function pipeThrough(agent: Agent, target: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const outgoing = request(
      target,
      { method: req.method, agent, headers: forwardHeaders(req.headers) },
      (incoming) => {
        res.writeHead(incoming.statusCode ?? 502, forwardHeaders(incoming.headers));
        incoming.pipe(res);
        incoming.on('end', resolve);
        incoming.on('error', () => resolve());
      },
    );
    outgoing.on('error', () => {
      if (!res.headersSent) sendText(res, 502, 'text/plain', 'upstream unavailable');
      else res.destroy();
      resolve();
    });
    res.on('close', () => outgoing.destroy());
    req.pipe(outgoing);
  });
}
