// The loopback guard (loopback-guard.ts, a setup file of every test): a connection beyond
// loopback fails at once with the guard's error, before any packet or DNS query leaves; loopback
// addresses and local names connect as before.
import dns from 'node:dns';
import { createServer, get } from 'node:http';
import { type AddressInfo, connect, createServer as createTcpServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { handshake } from '@mcp-fleet/probe';
import { isLoopbackAddress } from '@mcp-fleet/probe/loopback';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { takeViolations } from '../src/loopback-guard';

/** The error a connection attempt ends in, and how long it took. */
async function attempt(what: () => Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = Date.now();
  try {
    await what();
  } catch (err) {
    return { err, ms: Date.now() - started };
  }
  return { err: undefined, ms: Date.now() - started };
}

const codeOf = (err: unknown): string | undefined => {
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  return e?.code ?? e?.cause?.code;
};

const socketError = (open: () => import('node:net').Socket) =>
  new Promise((resolve, reject) => {
    const s = open();
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', reject);
  });

let port: number;
const server = createServer((_req, res) => res.end('ok'));
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the loopback guard', () => {
  it('is installed', () => {
    expect(isLoopbackAddress('127.0.0.2')).toBe(true);
    expect(isLoopbackAddress('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopbackAddress('[::1]')).toBe(true);
    expect(isLoopbackAddress('192.0.2.1')).toBe(false);
    expect(isLoopbackAddress('::ffff:192.0.2.1')).toBe(false);
  });

  it('refuses addresses and names beyond loopback at once, and looks no name up', async () => {
    const lookup = vi.spyOn(dns, 'lookup');
    try {
      const tries: [string, () => Promise<unknown>][] = [
        ['net.connect 192.0.2.1', () => socketError(() => connect(80, '192.0.2.1'))],
        ['net.connect [2001:db8::1]', () => socketError(() => connect({ port: 80, host: '2001:db8::1' }))],
        ['net.connect ::ffff:192.0.2.1', () => socketError(() => connect({ port: 80, host: '::ffff:192.0.2.1' }))],
        ['tls.connect example.com', () => socketError(() => tlsConnect({ port: 443, host: 'example.com' }))],
        [
          'http.get example.com',
          () => new Promise((resolve, reject) => get('http://example.com/', resolve).once('error', reject).end()),
        ],
        ['fetch example.com', () => fetch('https://example.com/')],
        ['fetch 192.0.2.1', () => fetch('http://192.0.2.1:8080/')],
        ['undici 192.0.2.1', () => request('http://192.0.2.1/')],
        ['undici 169.254.169.254', () => request('http://169.254.169.254/latest/meta-data/')],
      ];
      for (const [what, run] of tries) {
        const { err, ms } = await attempt(run);
        expect(codeOf(err), what).toBe('ERR_LOOPBACK_GUARD');
        expect(ms, what).toBeLessThan(1_000);
      }
      expect(lookup).not.toHaveBeenCalled();
      const seen = takeViolations();
      expect(seen).toHaveLength(tries.length);
      expect(seen[0]).toMatch(/^loopback guard: a test tried to reach 192\.0\.2\.1:80; tests reach only/);
      expect(seen[3]).toMatch(/example\.com:443 \(a name this machine does not resolve itself\)/);
    } finally {
      lookup.mockRestore();
    }
  });

  it('fails the probe fast, as an unreachable target, and the test is told', async () => {
    const run = await handshake('http://192.0.2.1/mcp', { revision: 'newest', timeoutMs: 5_000 });
    expect(run.outcome).toBe('unreachable');
    expect(run.message).toMatch(/ERR_LOOPBACK_GUARD/);
    expect(run.millis).toBeLessThan(1_000);
    expect(takeViolations()).toHaveLength(1);
  });

  it('lets loopback through: 127.0.0.1, 127.0.0.2, localhost and unix sockets', async () => {
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('ok');
    expect(await (await fetch(`http://localhost:${port}/`)).text()).toBe('ok');
    expect((await request(`http://127.0.0.1:${port}/`)).statusCode).toBe(200);
    const other = createTcpServer((s) => s.end());
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.2', resolve));
    await expect(socketError(() => connect((other.address() as AddressInfo).port, '127.0.0.2'))).resolves.toBe(
      'connected',
    );
    await new Promise((resolve) => other.close(resolve));
    // A port nobody listens on is refused by the kernel, not by the guard.
    const closed = await attempt(() => socketError(() => connect(1, '127.0.0.1')));
    expect(codeOf(closed.err)).toBe('ECONNREFUSED');
    const path = `/tmp/mcp-fleet-guard-${process.pid}.sock`;
    const unix = createTcpServer((s) => s.end());
    await new Promise<void>((resolve) => unix.listen(path, resolve));
    await expect(socketError(() => connect(path))).resolves.toBe('connected');
    await new Promise((resolve) => unix.close(resolve));
    expect(takeViolations()).toEqual([]);
  });
});
