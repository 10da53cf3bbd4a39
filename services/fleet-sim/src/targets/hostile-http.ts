// Hostile and broken HTTP servers: they speak HTTP (through the shared wrapper) but answer with
// bodies that never end, never stop, are far too large, are bombs, are nested past reason, are not
// valid UTF-8, redirect in circles or toward denied addresses, reset mid-answer, or answer the
// wrong JSON-RPC id. Every stream respects backpressure and stops when the client leaves, so a
// probe that hangs up costs the sim nothing; close() destroys every socket.
import type { ServerResponse } from 'node:http';
import { createGzip } from 'node:zlib';
import { listenHttp, pathOf, queryParam, type RequestBody, sendJson, sendText, type TargetHandler } from '../serve';
import { loopbackUrl, type RunningTarget, type TargetContext, type TargetDefinition } from '../target';

export const GIB = 1024 * 1024 * 1024;
/** The gzip bomb inflates to this many zero bytes. */
export const GZIP_BOMB_INFLATED_BYTES = GIB;
export const DEEP_JSON_DEPTH = 100_000;
export const SSE_FLOOD_EVENTS_PER_SECOND = 10_000;
export const TRICKLE_BYTE_MS = 200;

/** Start an HTTP target that speaks no revision. */
async function startOdd(ctx: TargetContext, handler: TargetHandler, path = '/mcp'): Promise<RunningTarget> {
  const listener = await listenHttp(ctx.name, ctx.port, ctx.log, handler);
  return { url: loopbackUrl(listener.port, path), supports: () => [], close: () => listener.close() };
}

/** The JSON-RPC id of a POSTed request (1 when there is none, e.g. on a GET). */
function idOf(body: RequestBody | undefined): number | string {
  const id = (body?.json as { id?: unknown } | undefined)?.id;
  return typeof id === 'number' || typeof id === 'string' ? id : 1;
}

function methodOf(body: RequestBody | undefined): string | undefined {
  const method = (body?.json as { method?: unknown } | undefined)?.method;
  return typeof method === 'string' ? method : undefined;
}

/**
 * Writes what `next` gives as fast as the client reads it, never faster: a write that fills the
 * socket's buffer waits for `drain`. `undefined` ends the response; a client that leaves ends it too.
 */
function pump(res: ServerResponse, next: () => Buffer | string | undefined): void {
  const write = (): void => {
    while (!res.destroyed && !res.writableEnded) {
      const chunk = next();
      if (chunk === undefined) {
        res.end();
        return;
      }
      if (!res.write(chunk)) {
        res.once('drain', write);
        return;
      }
    }
  };
  write();
}

/** Runs `tick` every `ms` until the client leaves; a tick is skipped while the client is not reading. */
function every(res: ServerResponse, ms: number, tick: () => Buffer | string): void {
  let blocked = false;
  const timer = setInterval(() => {
    if (blocked || res.destroyed || res.writableEnded) return;
    if (!res.write(tick())) {
      blocked = true;
      res.once('drain', () => {
        blocked = false;
      });
    }
  }, ms);
  timer.unref();
  res.on('close', () => clearInterval(timer));
}

function openEventStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

// --- (2) a body that trickles forever -------------------------------------------------------------

export const hostileTrickleBody: TargetDefinition = {
  name: 'hostile-trickle-body',
  kind: 'odd',
  description: `Every request: 200 application/json at once, then the body one byte every ${TRICKLE_BYTE_MS} ms, forever`,
  start: (ctx) =>
    startOdd(ctx, (_req, res, body) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      const text = `{"jsonrpc":"2.0","id":${JSON.stringify(idOf(body))},"result":{"protocolVersion":"2025-11-25",`;
      let at = 0;
      // Past the JSON it has, it trickles spaces: still a body that never ends.
      every(res, TRICKLE_BYTE_MS, () => text[at++] ?? ' ');
    }),
};

// --- (3) an endless event stream without endpoint, fast -------------------------------------------

const COMMENTS = Buffer.from(': nothing to see here, keep waiting\n\n'.repeat(256));

export const hostileSseEndless: TargetDefinition = {
  name: 'hostile-sse-endless',
  kind: 'odd',
  description: 'Every request: an event stream of comments as fast as the client reads, never an event, never an end',
  start: (ctx) =>
    startOdd(ctx, (_req, res) => {
      openEventStream(res);
      pump(res, () => COMMENTS);
    }),
};

// --- (4) an event stream of 10 000 events per second ----------------------------------------------

export const hostileSseFlood: TargetDefinition = {
  name: 'hostile-sse-flood',
  kind: 'odd',
  description: `Every request: an event stream of ${SSE_FLOOD_EVENTS_PER_SECOND} JSON-RPC notifications per second, never an answer`,
  start: (ctx) =>
    startOdd(ctx, (_req, res) => {
      openEventStream(res);
      const perTick = SSE_FLOOD_EVENTS_PER_SECOND / 100;
      let n = 0;
      every(res, 10, () => {
        let batch = '';
        for (let i = 0; i < perTick; i += 1) {
          n += 1;
          batch += `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n}}}\n\n`;
        }
        return batch;
      });
    }),
};

// --- (5) a 1 GiB body ---------------------------------------------------------------------------

const FILLER = Buffer.alloc(64 * 1024, 'a');

export const hostileHugeBody: TargetDefinition = {
  name: 'hostile-huge-body',
  kind: 'odd',
  description:
    'Every request: 200 application/json, Content-Length 1 GiB, a JSON-RPC answer padded to 1 GiB (streamed)',
  start: (ctx) =>
    startOdd(ctx, (_req, res, body) => {
      const head = Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(idOf(body))},"result":{"padding":"`);
      const tail = Buffer.from('"}}');
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(GIB) });
      let left = GIB - head.length - tail.length;
      let stage: 'head' | 'filler' | 'tail' | 'done' = 'head';
      pump(res, () => {
        if (stage === 'head') {
          stage = 'filler';
          return head;
        }
        if (stage === 'filler') {
          const size = Math.min(left, FILLER.length);
          left -= size;
          if (left === 0) stage = 'tail';
          return size === FILLER.length ? FILLER : FILLER.subarray(0, size);
        }
        if (stage === 'tail') {
          stage = 'done';
          return tail;
        }
        return undefined;
      });
    }),
};

// --- (6) a gzip bomb ----------------------------------------------------------------------------

const BOMB_MEMBER_INFLATED = 16 * 1024 * 1024;
let bombMember: Promise<Buffer> | undefined;

/**
 * One gzip member of 16 MiB of zeros (about 16 KiB), made once by streaming a 64 KiB zero buffer
 * through zlib. The bomb sends it 64 times: concatenated members are one valid gzip body.
 */
function gzipBombMember(): Promise<Buffer> {
  bombMember ??= new Promise<Buffer>((resolve, reject) => {
    const gzip = createGzip({ level: 9 });
    const out: Buffer[] = [];
    gzip.on('data', (chunk: Buffer) => out.push(chunk));
    gzip.on('end', () => resolve(Buffer.concat(out)));
    gzip.on('error', reject);
    const zeros = Buffer.alloc(64 * 1024);
    let written = 0;
    const write = (): void => {
      while (written < BOMB_MEMBER_INFLATED) {
        written += zeros.length;
        if (!gzip.write(zeros)) {
          gzip.once('drain', write);
          return;
        }
      }
      gzip.end();
    };
    write();
  });
  return bombMember;
}

export const hostileGzipBomb: TargetDefinition = {
  name: 'hostile-gzip-bomb',
  kind: 'odd',
  description: 'Every request: 200 application/json, Content-Encoding: gzip, ~1 MiB that inflates to 1 GiB of zeros',
  start: (ctx) =>
    startOdd(ctx, async (_req, res) => {
      const member = await gzipBombMember();
      const copies = GZIP_BOMB_INFLATED_BYTES / BOMB_MEMBER_INFLATED;
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': String(member.length * copies),
      });
      let sent = 0;
      pump(res, () => (sent++ < copies ? member : undefined));
    }),
};

// --- (7) deeply nested JSON -----------------------------------------------------------------------

export const hostileDeepJson: TargetDefinition = {
  name: 'hostile-deep-json',
  kind: 'odd',
  description: `Every request: 200 application/json, a JSON-RPC result holding arrays nested ${DEEP_JSON_DEPTH} deep`,
  start: (ctx) =>
    startOdd(ctx, (_req, res, body) => {
      const nested = '['.repeat(DEEP_JSON_DEPTH) + ']'.repeat(DEEP_JSON_DEPTH);
      sendText(
        res,
        200,
        'application/json',
        `{"jsonrpc":"2.0","id":${JSON.stringify(idOf(body))},"result":{"nested":${nested}}}`,
      );
    }),
};

// --- (8) invalid UTF-8, and (bonus) strings no database will store -------------------------------

/**
 * A sessions server (2025-11-25 only) whose answers carry what a strict decoder rejects: it speaks
 * MCP otherwise, so probes must succeed and report what they saw as well-formed text.
 */
function sessionsServer(initialize: (requested: string, id: number | string) => Buffer | string): TargetHandler {
  return (req, res, body) => {
    if (req.method === 'GET' || req.method === 'DELETE')
      return sendText(res, 405, 'text/plain', 'Method Not Allowed', { allow: 'POST' });
    const method = methodOf(body);
    if (method === 'initialize') {
      const requested = (body?.json as { params?: { protocolVersion?: unknown } } | undefined)?.params?.protocolVersion;
      const answer = initialize(typeof requested === 'string' ? requested : '', idOf(body));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
      return;
    }
    if (method?.startsWith('notifications/')) return sendText(res, 202, 'text/plain', '');
    sendJson(res, 400, {
      jsonrpc: '2.0',
      id: idOf(body),
      error: { code: -32601, message: `Method not found: ${method ?? '(none)'}` },
    });
  };
}

export const hostileInvalidUtf8: TargetDefinition = {
  name: 'hostile-invalid-utf8',
  kind: 'odd',
  description: 'A 2025-11-25 sessions server whose initialize answer has bytes that are not UTF-8 in serverInfo',
  async start(ctx) {
    const listener = await listenHttp(
      ctx.name,
      ctx.port,
      ctx.log,
      sessionsServer((_requested, id) =>
        Buffer.concat([
          Buffer.from(
            `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"hostile-`,
          ),
          Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), // not UTF-8: stray bytes, a bad pair, an encoded surrogate
          Buffer.from('-utf8","version":"1.'),
          Buffer.from([0xc0, 0xaf]), // an overlong "/"
          Buffer.from('"},"instructions":"'),
          Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]), // a five-byte sequence
          Buffer.from('"}}'),
        ]),
      ),
    );
    return { url: loopbackUrl(listener.port, '/mcp'), supports: () => ['2025-11-25'], close: () => listener.close() };
  },
};

/**
 * 198 ASCII characters, then an emoji: a 200-unit preview keeps 199 code units and its cut mark, and
 * the 199th is the first half of the emoji's surrogate pair.
 */
export const EMOJI_AT_PREVIEW_EDGE = `<!doctype html><p>${'x'.repeat(198 - 18)}\u{1F600} and more text after the preview edge</p>\n`;

export const hostileUnicodeEscapes: TargetDefinition = {
  name: 'hostile-unicode-escapes',
  kind: 'odd',
  description:
    'A 2025-11-25 sessions server answering with \\u0000 and lone surrogates in serverInfo, protocolVersion and error messages; GET: HTML with an emoji at the preview edge',
  async start(ctx) {
    const answer = sessionsServer(
      (requested, id) =>
        `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"protocolVersion":${
          requested === '2025-11-25' ? '"2025-11-25"' : '"2025-\\u0000\\ud800"'
        },"capabilities":{},"serverInfo":{"name":"hostile\\u0000unicode\\ud800","version":"\\udfff1.0","title":"\\ud83d"}}}`,
    );
    const listener = await listenHttp(ctx.name, ctx.port, ctx.log, (req, res, body) => {
      if (req.method === 'GET') return sendText(res, 200, 'text/html; charset=utf-8', EMOJI_AT_PREVIEW_EDGE);
      if (methodOf(body) === 'server/discover') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          `{"jsonrpc":"2.0","id":${JSON.stringify(idOf(body))},"error":{"code":-32601,"message":"no\\u0000such\\ud800method"}}`,
        );
        return;
      }
      return answer(req, res, body);
    });
    return { url: loopbackUrl(listener.port, '/mcp'), supports: () => ['2025-11-25'], close: () => listener.close() };
  },
};

// --- (10) a redirect loop and (13) a redirect to a denied address --------------------------------

export const hostileRedirectLoop: TargetDefinition = {
  name: 'hostile-redirect-loop',
  kind: 'odd',
  description: 'Every request: 302 to itself',
  start: (ctx) =>
    startOdd(ctx, (req, res) => sendText(res, 302, 'text/plain', 'Found', { location: req.url ?? '/mcp' })),
};

/**
 * Where hostile-redirect-denied sends probes: 127.0.0.2, which a test's policy denies, on the port
 * a `/to/<port>` path prefix names (a test's listener there counts connections; in the path, since
 * a query value is a credential the probe redacts), else its own port.
 */
export const REDIRECT_DENIED_HOST = '127.0.0.2';

export const hostileRedirectDenied: TargetDefinition = {
  name: 'hostile-redirect-denied',
  kind: 'odd',
  description: `Every request: 307 to http://${REDIRECT_DENIED_HOST}:<port of a /to/<port> prefix, or its own><path>, an address a policy can deny`,
  async start(ctx) {
    let port = 0;
    const listener = await listenHttp(ctx.name, ctx.port, ctx.log, (req, res) => {
      const path = pathOf(req);
      const prefix = /^\/to\/(\d{1,5})(\/.*)?$/.exec(path);
      const asked = Number(prefix?.[1]);
      const to = Number.isInteger(asked) && asked > 0 && asked < 65536 ? asked : port;
      sendText(res, 307, 'text/plain', 'Temporary Redirect', {
        location: `http://${REDIRECT_DENIED_HOST}:${to}${prefix ? (prefix[2] ?? '/') : path}`,
      });
    });
    port = listener.port;
    return { url: loopbackUrl(port, '/mcp'), supports: () => [], close: () => listener.close() };
  },
};

// --- (12) a connection reset mid-answer ------------------------------------------------------------

export const hostileReset: TargetDefinition = {
  name: 'hostile-reset',
  kind: 'odd',
  description: 'Every request: 200 application/json, Content-Length 65536, 1 KiB of it, then a TCP reset',
  start: (ctx) =>
    startOdd(ctx, (req, res, body) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '65536' });
      const part = `{"jsonrpc":"2.0","id":${JSON.stringify(idOf(body))},"result":{"protocolVersion":"2025-11-25","padding":"`;
      res.write(part.padEnd(1024, 'a'), () => {
        const timer = setTimeout(() => req.socket.resetAndDestroy(), 20);
        timer.unref();
      });
    }),
};

// --- (16) JSON-RPC ids that do not match ------------------------------------------------------------

export const hostileWrongId: TargetDefinition = {
  name: 'hostile-wrong-id',
  kind: 'odd',
  description:
    'Answers initialize (2025-11-25) and server/discover (2026-07-28) correctly but under another JSON-RPC id',
  start: (ctx) =>
    startOdd(ctx, (req, res, body) => {
      if (req.method !== 'POST') return sendText(res, 405, 'text/plain', 'Method Not Allowed', { allow: 'POST' });
      const method = methodOf(body);
      if (method?.startsWith('notifications/')) return sendText(res, 202, 'text/plain', '');
      const id = idOf(body);
      const wrong = typeof id === 'number' ? id + 1000 : `${id}-not`;
      sendJson(res, 200, { jsonrpc: '2.0', id: wrong, result: honestResult(method) });
    }),
};

/** What an honest server answers to initialize or server/discover. */
function honestResult(method: string | undefined): Record<string, unknown> {
  if (method === 'server/discover')
    return {
      supportedVersions: ['2026-07-28'],
      capabilities: {},
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'hostile', version: '0.0.0' } },
    };
  return { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'hostile', version: '0.0.0' } };
}

// --- (bonus) a batch answer to a single request -----------------------------------------------------

export const hostileBatchAnswer: TargetDefinition = {
  name: 'hostile-batch-answer',
  kind: 'odd',
  description: 'Answers every POST with a JSON array (a batch) holding the right answer; GET → 405',
  start: (ctx) =>
    startOdd(ctx, (req, res, body) => {
      if (req.method !== 'POST') return sendText(res, 405, 'text/plain', 'Method Not Allowed', { allow: 'POST' });
      const method = methodOf(body);
      if (method?.startsWith('notifications/')) return sendText(res, 202, 'text/plain', '');
      sendJson(res, 200, [{ jsonrpc: '2.0', id: idOf(body), result: honestResult(method) }]);
    }),
};

// --- (bonus) one event-stream line that never ends ------------------------------------------------

export const SSE_HUGE_LINE_BYTES = 64 * 1024 * 1024;

export const hostileSseHugeLine: TargetDefinition = {
  name: 'hostile-sse-huge-line',
  kind: 'odd',
  description: 'Every request: an event stream whose first line is `data: ` and 64 MiB without a newline',
  start: (ctx) =>
    startOdd(ctx, (_req, res) => {
      openEventStream(res);
      let sent = 0;
      pump(res, () => {
        if (sent === 0) {
          sent += 1;
          return 'data: ';
        }
        if (sent > SSE_HUGE_LINE_BYTES) return undefined;
        sent += FILLER.length;
        return FILLER;
      });
    }),
};

// --- (bonus) a 250 KB JSON-RPC error message, to every request ------------------------------------

/** How long the error message of hostile-huge-error is, in characters (ASCII: as many bytes). */
export const HUGE_ERROR_MESSAGE_CHARS = 250_000;
export const HUGE_ERROR_CODE = -32600;
const HUGE_ERROR_MESSAGE =
  `Invalid Request: ${'the server says far too much '.repeat(HUGE_ERROR_MESSAGE_CHARS / 28)}`.slice(
    0,
    HUGE_ERROR_MESSAGE_CHARS,
  );

/** Header values are the server's to choose too: a JSON content type with 16 KB of parameter. */
export const HUGE_CONTENT_TYPE = `application/json; charset=utf-8; profile="${'p'.repeat(16 * 1024)}"`;

function hugeError(id: number | string | null): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code: HUGE_ERROR_CODE, message: HUGE_ERROR_MESSAGE } });
}

export const hostileHugeError: TargetDefinition = {
  name: 'hostile-huge-error',
  kind: 'odd',
  description: `Every request answered with a JSON-RPC error whose message is ${HUGE_ERROR_MESSAGE_CHARS / 1000} KB: POST and DELETE → 400 with it (and a 16 KB Content-Type); GET → an event stream whose endpoint's POSTs → 202, the error on the stream`,
  start: (ctx) => {
    // The HTTP+SSE opening: each GET's stream, by the number its endpoint names.
    const streams = new Map<string, ServerResponse>();
    let next = 0;
    return startOdd(ctx, (req, res, body) => {
      if (req.method === 'GET') {
        next += 1;
        const key = String(next);
        openEventStream(res);
        res.write(`event: endpoint\ndata: ${pathOf(req)}?stream=${key}\n\n`);
        streams.set(key, res);
        res.on('close', () => streams.delete(key));
        return;
      }
      const stream = req.method === 'POST' ? streams.get(queryParam(req, 'stream') ?? '') : undefined;
      if (stream) {
        // The answer goes on the stream, as the HTTP+SSE transport answers (a notification gets none).
        sendText(res, 202, 'text/plain', 'Accepted');
        if (methodOf(body) && !methodOf(body)?.startsWith('notifications/'))
          stream.write(`event: message\ndata: ${hugeError(idOf(body))}\n\n`);
        return;
      }
      res.writeHead(400, { 'content-type': HUGE_CONTENT_TYPE });
      res.end(hugeError(req.method === 'POST' ? idOf(body) : null));
    });
  },
};
