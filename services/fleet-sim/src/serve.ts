import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { jsonRpcMethodOf, type RequestLog } from './request-log';

/** Every target binds loopback only: the sim must never be reachable from elsewhere. */
export const LOOPBACK = '127.0.0.1';

/** Same bound as the SDKs' own body readers. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A POST body the wrapper already read, so the SDK must get it handed over. */
export interface RequestBody {
  text: string;
  /** The parsed JSON, or undefined when the text is not JSON. */
  json: unknown;
}

export type TargetHandler = (req: IncomingMessage, res: ServerResponse, body: RequestBody | undefined) => unknown;

export interface Listener {
  port: number;
  close(): Promise<void>;
}

/**
 * What to pass as an SDK's `parsedBody`: the JSON when it parsed, otherwise the raw text, so
 * the SDK answers malformed input with its own parse error instead of waiting on a drained stream.
 */
export function sdkBody(body: RequestBody | undefined): unknown {
  if (body === undefined) return undefined;
  return body.json ?? body.text;
}

/**
 * Serves one target over HTTP through the shared wrapper: every request is recorded on
 * arrival, POST bodies are read once (to note the JSON-RPC method) and handed to the handler.
 */
export async function listenHttp(
  target: string,
  port: number,
  log: RequestLog,
  handler: TargetHandler,
): Promise<Listener> {
  const server = createHttpServer((req, res) => {
    const record = log.record(target, req);
    const handle = async () => {
      let body: RequestBody | undefined;
      if (req.method === 'POST') {
        const text = await readBody(req);
        if (text === undefined) {
          sendJson(res, 413, { error: 'request body too large' });
          return;
        }
        body = { text, json: parseJson(text) };
        const jsonRpcMethod = jsonRpcMethodOf(body.json);
        if (jsonRpcMethod !== undefined) record.jsonRpcMethod = jsonRpcMethod;
      }
      await handler(req, res, body);
    };
    handle().catch(() => {
      // An SDK that throws after answering (e.g. the 1.x SSE transport) needs no second answer.
      if (!res.headersSent) sendText(res, 500, 'text/plain', 'internal error');
      else if (!res.writableEnded) res.end();
    });
  });
  return listen(server, target, port, log);
}

/** A bare TCP listener for targets below HTTP; connections are counted and left to the caller. */
export async function listenTcp(
  target: string,
  port: number,
  log: RequestLog,
  onSocket: (socket: Socket) => void,
): Promise<Listener> {
  const server = createTcpServer(onSocket);
  return listen(server, target, port, log);
}

/** A port on loopback that nothing listens on: bind it, note it, let it go. */
export async function reserveClosedPort(port: number): Promise<number> {
  if (port !== 0) return port;
  const server = createTcpServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, resolve);
  });
  const { port: free } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return free;
}

async function listen(server: Server, target: string, port: number, log: RequestLog): Promise<Listener> {
  // Track sockets ourselves: open event streams and keep-alive connections would otherwise hold close().
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    log.countConnection(target);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, LOOPBACK, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as { port: number };
  let closing: Promise<void> | undefined;
  return {
    port: bound,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.byteLength;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function sendText(
  res: ServerResponse,
  status: number,
  contentType: string,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': contentType, ...headers });
  res.end(text);
}

/** The JSON-RPC error body the 1.x session servers use for HTTP-level rejections. */
export function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

export function pathOf(req: IncomingMessage): string {
  return new URL(req.url ?? '/', 'http://sim.invalid').pathname;
}

export function queryParam(req: IncomingMessage, name: string): string | undefined {
  return new URL(req.url ?? '/', 'http://sim.invalid').searchParams.get(name) ?? undefined;
}

export function sessionIdOf(req: IncomingMessage): string | undefined {
  const value = req.headers['mcp-session-id'];
  return Array.isArray(value) ? value[0] : value;
}
