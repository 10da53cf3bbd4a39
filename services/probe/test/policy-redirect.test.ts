// The deny path, on loopback: a policy that allows 127.0.0.1 and denies 127.0.0.2. A target on
// 127.0.0.1 redirects to 127.0.0.2, where a listener counts every connection it is offered; the
// probe records the redirect and never follows it, and a probe sent to 127.0.0.2 directly is
// refused before it dials. Also: a scheme the policy does not list is refused before any dial.
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { Dispatcher } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { detect, guardedDispatcher, handshake, TargetPolicy } from '../src';

/** A listener on `host` that counts connections and answers each with a plain 200 (it should see none). */
async function countingListener(host: string): Promise<{ server: TcpServer; port: number; connections: () => number }> {
  let connections = 0;
  const server = createTcpServer((socket) => {
    connections += 1;
    socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, connections: () => connections };
}

let denied: Awaited<ReturnType<typeof countingListener>>;
let redirector: HttpServer;
let redirectorUrl: string;
let redirectorConnections = 0;
let redirectorRequests = 0;
let deniedUrl: string;
const dispatchers: Dispatcher[] = [];
const policy = (schemes?: string[]) => {
  const d = guardedDispatcher(
    new TargetPolicy({ allow: ['127.0.0.1/32'], deny: ['127.0.0.2/32'], ...(schemes ? { schemes } : {}) }),
  );
  dispatchers.push(d);
  return d;
};

beforeAll(async () => {
  denied = await countingListener('127.0.0.2');
  deniedUrl = `http://127.0.0.2:${denied.port}/mcp`;
  redirector = createHttpServer((req, res) => {
    redirectorRequests += 1;
    req.resume();
    res.writeHead(302, { location: deniedUrl, 'content-type': 'text/html' }).end('<a>moved</a>');
  });
  redirector.on('connection', () => {
    redirectorConnections += 1;
  });
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
  redirectorUrl = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await Promise.allSettled(dispatchers.map((d) => d.destroy()));
  redirector.closeAllConnections();
  await new Promise((resolve) => redirector.close(resolve));
  await new Promise((resolve) => denied.server.close(resolve));
});

beforeEach(() => {
  redirectorRequests = 0;
  redirectorConnections = 0;
});

describe('a policy that allows 127.0.0.1 and denies 127.0.0.2', () => {
  it('a handshake records the redirect to the denied address and does not follow it', async () => {
    const run = await handshake(redirectorUrl, { revision: '2025-11-25', dispatcher: policy(), timeoutMs: 5_000 });
    expect(run.outcome).toBe('protocol_error');
    expect(run.message).toBe(
      `initialize: the server redirected to ${deniedUrl} (HTTP 302, text/html); redirects are not followed`,
    );
    expect(run.evidence).toMatchObject({ status: 302 });
    expect(redirectorRequests).toBe(1);
    expect(denied.connections()).toBe(0);
  });

  it('a detection records the redirect for every revision and does not follow it', async () => {
    const d = await detect(redirectorUrl, { dispatcher: policy(), timeoutMs: 5_000 });
    expect(d.outcome).toBe('NONE');
    expect(d.revisions.map((r) => r.evidence?.status)).toEqual([302, 302, 302, 302, 302]);
    expect(d.revisions[0]!.evidence?.message).toContain(`redirected to ${deniedUrl}`);
    expect(redirectorRequests).toBeGreaterThanOrEqual(5);
    expect(denied.connections()).toBe(0);
  });

  it('a probe sent to the denied address directly is refused before it dials', async () => {
    const run = await handshake(deniedUrl, { revision: 'newest', dispatcher: policy(), timeoutMs: 5_000 });
    expect(run.outcome).toBe('unreachable');
    expect(run.message).toMatch(/127\.0\.0\.2 is in a range the policy denies/);
    const d = await detect(deniedUrl, { dispatcher: policy(), timeoutMs: 5_000 });
    expect(d.outcome).toBe('NONE');
    for (const r of d.revisions) {
      expect(r.evidence?.status).toBeNull();
      expect(r.evidence?.message).toMatch(/127\.0\.0\.2 is in a range the policy denies/);
    }
    expect(denied.connections()).toBe(0);
  });

  it('so is an allowed address under a scheme the policy does not list', async () => {
    const run = await handshake(redirectorUrl, { revision: 'newest', dispatcher: policy(['https']), timeoutMs: 5_000 });
    expect(run.outcome).toBe('unreachable');
    expect(run.message).toMatch(/the scheme http: is not one the policy allows \(policy\.schemes: https\)/);
    expect(redirectorConnections).toBe(0);
    // The same target under the default schemes is reached (the listener above is live).
    await handshake(redirectorUrl, { revision: 'newest', dispatcher: policy(), timeoutMs: 5_000 });
    expect(redirectorConnections).toBeGreaterThan(0);
  });

  it('a host name is judged by the addresses it resolves to, before any dial', async () => {
    // The mirror image: 127.0.0.1 denied, so `localhost` (which resolves to it) is refused after DNS.
    const local = await countingListener('127.0.0.1');
    const mirrored = guardedDispatcher(new TargetPolicy({ allow: ['127.0.0.0/8'], deny: ['127.0.0.1/32', '::1/128'] }));
    dispatchers.push(mirrored);
    try {
      const run = await handshake(`http://localhost:${local.port}/mcp`, {
        revision: 'newest',
        dispatcher: mirrored,
        timeoutMs: 5_000,
      });
      expect(run.outcome).toBe('unreachable');
      expect(run.message).toMatch(/localhost resolves to (127\.0\.0\.1|::1) is in a range the policy denies/);
      expect(local.connections()).toBe(0);
    } finally {
      await new Promise((resolve) => local.server.close(resolve));
    }
  });
});
