// Every era-signal rule (docs/protocol.md#era-signals) and every non-signal, over real HTTP. A
// signal shows as a lookup in the run; a non-signal leaves the run to fail on its own reply with
// no lookup.
import { describe, expect, it } from 'vitest';
import { handshake, LOOKUP_MAX_REQUESTS, NOT_IDENTIFIED } from '../src';
import { useSim } from './use-sim';

const fleet = useSim();

/** The `replies` target answers every request with the status and body its path names. */
const reply = (status: number, body: string) => new URL(`/reply/${status}/${body}`, fleet().target('replies').url).href;
const lookedUp = async (url: string, revision: '2026-07-28' | '2025-11-25' | '2024-11-05') =>
  (await handshake(url, { revision, timeoutMs: 5_000 })).lookup.performed;

describe('on a stateless revision (server/discover)', () => {
  it.each([400, 404, 405])('HTTP %i whose body is not an era error code is a signal', async (status) => {
    expect(await lookedUp(reply(status, 'jsonrpc-32000'), '2026-07-28')).toBe(true);
    expect(await lookedUp(reply(status, 'html'), '2026-07-28')).toBe(true);
  });

  it.each([-32020, -32021, -32022])('HTTP 400 with JSON-RPC %i is not a signal', async (code) => {
    expect(await lookedUp(reply(400, `jsonrpc${code}`), '2026-07-28')).toBe(false);
  });

  it.each([200, 400, 404, 422])('-32601 (method not found) at HTTP %i is a signal', async (status) => {
    expect(await lookedUp(reply(status, 'jsonrpc-32601'), '2026-07-28')).toBe(true);
  });

  it('a 422 with another body is not a signal', async () => {
    expect(await lookedUp(reply(422, 'html'), '2026-07-28')).toBe(false);
  });
});

describe('on a sessions revision (initialize)', () => {
  it.each([-32020, -32021, -32022, -32601])('a 4xx whose body is JSON-RPC %i is a signal', async (code) => {
    expect(await lookedUp(reply(400, `jsonrpc${code}`), '2025-11-25')).toBe(true);
    expect(await lookedUp(reply(404, `jsonrpc${code}`), '2025-11-25')).toBe(true);
  });

  it('a 4xx with another body is not a signal', async () => {
    expect(await lookedUp(reply(400, 'jsonrpc-32000'), '2025-11-25')).toBe(false);
    expect(await lookedUp(reply(404, 'html'), '2025-11-25')).toBe(false);
  });

  it.each([401, 403])('HTTP %i is never a signal, even with an era error body', async (status) => {
    expect(await lookedUp(reply(status, 'jsonrpc-32022'), '2025-11-25')).toBe(false);
  });
});

describe('on the HTTP+SSE transport (GET)', () => {
  it('a GET that does not open a stream is a signal', async () => {
    expect(await lookedUp(reply(405, 'jsonrpc-32000'), '2024-11-05')).toBe(true);
    expect(await lookedUp(fleet().target('website').url, '2024-11-05')).toBe(true);
  });

  it('a stream whose first event is not endpoint (or none within 2 s) is a signal', async () => {
    const run = await handshake(fleet().target('sse-no-endpoint').url, { revision: '2024-11-05' });
    expect(run.lookup.performed).toBe(true);
    expect(run.millis).toBeGreaterThanOrEqual(2_000);
  });

  it('an endpoint that comes after 3 s is too late: a signal, not a success', async () => {
    const run = await handshake(fleet().target('sse-slow-endpoint').url, { revision: '2024-11-05' });
    expect(run.outcome).not.toBe('success');
    expect(run.lookup.performed).toBe(true);
  });
});

describe('never signals: timeouts, connection errors, 5xx, 401, 403, 429', () => {
  const cases: [string, () => string, string][] = [
    ['a timeout', () => fleet().target('silent').url, 'timeout'],
    ['a refused connection', () => fleet().target('closed').url, 'unreachable'],
    ['HTTP 503', () => fleet().target('unavailable').url, 'server_error'],
    ['HTTP 500 with an era error body', () => reply(500, 'jsonrpc-32601'), 'server_error'],
    ['HTTP 401', () => fleet().target('bearer').url, 'auth_required'],
    ['HTTP 403', () => reply(403, 'jsonrpc-32601'), 'auth_required'],
    ['HTTP 429', () => fleet().target('rate-limited').url, 'rate_limited'],
  ];
  for (const revision of ['2026-07-28', '2025-11-25', '2024-11-05'] as const) {
    it.each(cases)(`${revision}: %s`, async (_what, target, outcome) => {
      const run = await handshake(target(), { revision, timeoutMs: 1_500 });
      expect(run.outcome).toBe(outcome);
      expect(run.lookup.performed).toBe(false);
      expect(run.requests).toBe(1);
    });
  }
});

describe('the lookup', () => {
  it('tries discover, then initialize proposing 2025-11-25, then the GET, in at most 4 requests', async () => {
    const run = await handshake(reply(404, 'html'), { revision: 'newest' });
    expect(run.outcome).toBe('not_mcp');
    expect(run.message).toBe(NOT_IDENTIFIED);
    expect(run.assertion?.name).toBe('mcp.initialize');
    const seen = fleet().requests('replies');
    expect(seen.map((r) => `${r.method} ${r.jsonRpcMethod ?? ''}`.trim())).toEqual([
      'POST server/discover',
      'POST initialize',
      'GET',
    ]);
    expect(seen.length).toBeLessThanOrEqual(LOOKUP_MAX_REQUESTS);
    expect(run.lookup.requests).toBe(seen.length);
  });

  it('stops at the first generation that answers', async () => {
    const run = await handshake(fleet().target('sessions-2025-11-25').url, { revision: 'newest' });
    expect(run.lookup.found).toBe('2025-11-25');
    // discover, initialize, DELETE of the session the initialize minted: never the GET.
    const lookupRequests = fleet().requests('sessions-2025-11-25').slice(0, run.lookup.requests);
    expect(lookupRequests.map((r) => r.method)).toEqual(['POST', 'POST', 'DELETE']);
  });

  it.each([
    [401, 'auth required: HTTP 401 (the server asked for credentials)'],
    [403, 'auth required: HTTP 403 (the server asked for credentials)'],
    [500, 'server error: HTTP 500 (the server failed; it may be down or overloaded)'],
    [503, 'server error: HTTP 503 (the server failed; it may be down or overloaded)'],
  ])('HTTP %i ends it, and the run leads with its cause, not "did not identify itself"', async (status, message) => {
    const run = await handshake(reply(status, 'html'), { revision: 'newest' });
    expect(run.message).toBe(message);
    expect(run.assertion?.message).toBe(message);
    expect(run.lookup.requests).toBe(1);
    expect(fleet().requests('replies')).toHaveLength(1);
  });

  it('a run keeps at most one lookup, even when the repeat meets another signal', async () => {
    // The stateless opening meets a signal, the lookup finds 2025-11-25, the run repeats there once.
    const run = await handshake(fleet().target('sessions-2025-11-25').url, {
      revision: 'newest',
      current: '2026-07-28',
    });
    const discovers = fleet()
      .requests('sessions-2025-11-25')
      .filter((r) => r.jsonRpcMethod === 'server/discover');
    expect(discovers).toHaveLength(2); // the signal, then the lookup's own; no third
    expect(run.lookup.performed).toBe(true);
  });
});
