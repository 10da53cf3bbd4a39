// Hostile servers below HTTP: raw TCP listeners that answer a request with headers that never
// finish, a megabyte of headers, bytes that are not HTTP, a body without a status line (HTTP/0.9),
// or informational responses forever. Each answers once per connection, after the request's
// first bytes arrive; every timer stops when the socket closes, and close() destroys every socket.
import type { Socket } from 'node:net';
import { listenTcp } from '../serve';
import { loopbackUrl, type RunningTarget, type TargetContext, type TargetDefinition } from '../target';

export const SLOWLORIS_BYTE_MS = 300;
export const HUGE_HEADERS_BYTES = 1024 * 1024;

/** Listen on raw TCP; `answer` runs once per connection, when the request begins to arrive. */
async function startRaw(ctx: TargetContext, answer: (socket: Socket) => void): Promise<RunningTarget> {
  const listener = await listenTcp(ctx.name, ctx.port, ctx.log, (socket) => {
    socket.on('error', () => {});
    socket.once('data', () => {
      // The rest of the request is read and dropped, so the client never blocks on writing it.
      socket.resume();
      answer(socket);
    });
  });
  return { url: loopbackUrl(listener.port, '/mcp'), supports: () => [], close: () => listener.close() };
}

/** Calls `tick` every `ms` while the socket lives; a tick is skipped while the client is not reading. */
function every(socket: Socket, ms: number, tick: () => string | Buffer): void {
  const timer = setInterval(() => {
    if (socket.destroyed || socket.writableNeedDrain) return;
    socket.write(tick());
  }, ms);
  timer.unref();
  socket.on('close', () => clearInterval(timer));
}

/** Writes chunks as fast as the client reads them; `undefined` ends the connection. */
function pump(socket: Socket, next: () => string | Buffer | undefined): void {
  const write = (): void => {
    while (!socket.destroyed) {
      const chunk = next();
      if (chunk === undefined) {
        socket.end();
        return;
      }
      if (!socket.write(chunk)) {
        socket.once('drain', write);
        return;
      }
    }
  };
  write();
}

// --- (1) headers that never finish ----------------------------------------------------------------

export const hostileSlowloris: TargetDefinition = {
  name: 'hostile-slowloris',
  kind: 'odd',
  description: `A status line, then one more header byte every ${SLOWLORIS_BYTE_MS} ms, forever (headers never end)`,
  start: (ctx) =>
    startRaw(ctx, (socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: ');
      every(socket, SLOWLORIS_BYTE_MS, () => 'a');
    }),
};

// --- (9) a megabyte of headers ---------------------------------------------------------------------

export const hostileHugeHeaders: TargetDefinition = {
  name: 'hostile-huge-headers',
  kind: 'odd',
  description: '200 with 1 MiB of response headers (1024 headers of 1 KiB), then a JSON-RPC body',
  start: (ctx) =>
    startRaw(ctx, (socket) => {
      const value = 'x'.repeat(1024 - 'X-Pad-000001: \r\n'.length); // each header line is 1 KiB
      const count = Math.ceil(HUGE_HEADERS_BYTES / 1024);
      const body = '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}';
      let i = -1;
      pump(socket, () => {
        i += 1;
        if (i === 0) return 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n';
        if (i <= count) return `X-Pad-${String(i).padStart(6, '0')}: ${value}\r\n`;
        if (i === count + 1) return `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
        return undefined;
      });
    }),
};

// --- (11) garbage, not HTTP ------------------------------------------------------------------------

export const hostileGarbage: TargetDefinition = {
  name: 'hostile-garbage',
  kind: 'odd',
  description: 'Answers a request with 16 KiB of bytes that are not HTTP, then closes',
  start: (ctx) =>
    startRaw(ctx, (socket) => {
      // A fixed pseudo-random sequence: the same garbage every run.
      const garbage = Buffer.alloc(16 * 1024);
      let x = 0x2545f491;
      for (let i = 0; i < garbage.length; i += 1) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        garbage[i] = x & 0xff;
      }
      garbage.write('\u0000\u00ff\u0013\u0037', 0, 'latin1'); // never "HTTP/"
      socket.end(garbage);
    }),
};

// --- (bonus) HTTP/0.9: a body with no status line --------------------------------------------------

export const hostileHttp09: TargetDefinition = {
  name: 'hostile-http09',
  kind: 'odd',
  description: 'Answers as HTTP/0.9 would: a JSON-RPC body with no status line or headers, then closes',
  start: (ctx) =>
    startRaw(ctx, (socket) => {
      socket.end(
        '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"hostile","version":"0.9"}}}\n',
      );
    }),
};

// --- (bonus) informational responses forever -------------------------------------------------------

export const hostileInformational: TargetDefinition = {
  name: 'hostile-informational',
  kind: 'odd',
  description: 'Answers with a 103 Early Hints every 5 ms, forever, never a final response',
  start: (ctx) =>
    startRaw(ctx, (socket) => {
      every(socket, 5, () => 'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n');
    }),
};
