// Every failure used to read "not an MCP server". Against real listeners on loopback, one per cause:
// a detection whose revisions all fail the same way names that cause at the top (its revisions
// learnt nothing), and a handshake's message leads with it. Causes that differ, or an answer about
// the revision itself, leave the cause null.
import type { LookupAddress } from 'node:dns';
import { SIM_BEARER_TOKEN } from '@mcp-fleet/fleet-sim';
import type { Dispatcher } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Detection,
  DnsLookups,
  detect,
  guardedDispatcher,
  handshake,
  learntNothing,
  type Resolver,
  TargetPolicy,
} from '../src';
import { useSim } from './use-sim';

const fleet = useSim({
  only: [
    'closed',
    'silent',
    'bearer',
    'unavailable',
    'website',
    'modern',
    'rate-limited',
    'hostile-tls-expired',
    'hostile-tls-self-signed',
    'hostile-tls-wrong-name',
  ],
});
const url = (name: string) => fleet().target(name).url;

const dispatchers: Dispatcher[] = [];
afterAll(async () => {
  await Promise.all(dispatchers.map((d) => d.close()));
});

/** Every revision is "unknown": its evidence shows the cause, so it says nothing about support. */
function expectNothingLearnt(d: Detection) {
  expect(d.revisions).toHaveLength(5);
  for (const r of d.revisions) {
    expect(r.supported).toBe(false);
    expect(r.evidence).toBeDefined();
    expect(learntNothing(r.evidence)).toBe(true);
  }
}

describe('one cause explains every revision: the detection names it, the run leads with it', () => {
  it('a closed port: unreachable, connection refused', async () => {
    const d = await detect(url('closed'));
    expect(d).toMatchObject({ outcome: 'NONE', cause: 'unreachable' });
    expectNothingLearnt(d);
    const run = await handshake(url('closed'), { revision: 'newest' });
    expect(run).toMatchObject({ outcome: 'unreachable', message: 'unreachable: the connection was refused' });
  });

  it('HTTP 401: auth required', async () => {
    const d = await detect(url('bearer'));
    expect(d).toMatchObject({ outcome: 'NONE', cause: 'auth_required' });
    expectNothingLearnt(d);
    const run = await handshake(url('bearer'), { revision: 'newest' });
    expect(run).toMatchObject({
      outcome: 'auth_required',
      message: 'auth required: HTTP 401 (the server asked for credentials)',
    });
    const pinned = await handshake(url('bearer'), { revision: '2025-11-25' });
    expect(pinned.message).toBe('auth required: HTTP 401 (the server asked for credentials)');
    // With the credential the same server is detected: the 401 was the whole story.
    const ok = await detect(url('bearer'), { headers: { Authorization: `Bearer ${SIM_BEARER_TOKEN}` } });
    expect(ok).toMatchObject({ outcome: 'DETECTED', cause: null });
  });

  it('HTTP 503: server error', async () => {
    const d = await detect(url('unavailable'));
    expect(d).toMatchObject({ outcome: 'NONE', cause: 'server_error' });
    expectNothingLearnt(d);
    const run = await handshake(url('unavailable'), { revision: 'newest' });
    expect(run).toMatchObject({
      outcome: 'server_error',
      message: 'server error: HTTP 503 (the server failed; it may be down or overloaded)',
    });
  });

  it('a server that never answers: timeout', async () => {
    const d = await detect(url('silent'), { timeoutMs: 500 });
    expect(d).toMatchObject({ outcome: 'NONE', cause: 'timeout' });
    expectNothingLearnt(d);
    const run = await handshake(url('silent'), { revision: 'newest', timeoutMs: 500 });
    expect(run.outcome).toBe('timeout');
    expect(run.message).toMatch(/^timeout: no answer within \d+ ms$/);
  });

  it.each([
    ['hostile-tls-expired', 'the certificate has expired (CERT_HAS_EXPIRED)'],
    ['hostile-tls-self-signed', 'the certificate is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT)'],
    [
      'hostile-tls-wrong-name',
      'the certificate is issued by a CA this machine does not trust (UNABLE_TO_VERIFY_LEAF_SIGNATURE)',
    ],
  ])('%s: TLS', async (name, words) => {
    const d = await detect(url(name));
    expect(d).toMatchObject({ outcome: 'NONE', cause: 'tls' });
    expectNothingLearnt(d);
    const run = await handshake(url(name), { revision: 'newest' });
    expect(run).toMatchObject({ outcome: 'unreachable', message: `TLS: ${words}` });
  });

  it('a name that does not resolve: DNS', async () => {
    // The loopback guard refuses to look up any name but a local one, and a lookup of a missing
    // name would leave the machine; so the system resolver's place is taken by one answering
    // ENOTFOUND for `*.invalid.localhost` as getaddrinfo does for a name with no records (and
    // 127.0.0.1 for anything else). Everything above it — the bounded lookups, the guarded
    // dispatcher, the probe — is the real code.
    const resolver: Resolver = (hostname, _options, callback) => {
      if (hostname.endsWith('.invalid.localhost'))
        return callback(
          Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }),
          [],
        );
      callback(null, [{ address: '127.0.0.1', family: 4 } satisfies LookupAddress]);
    };
    const dispatcher = guardedDispatcher(
      new TargetPolicy({ allow: ['127.0.0.0/8'], deny: [] }),
      new DnsLookups({}, resolver),
    );
    dispatchers.push(dispatcher);
    const at = new URL(url('modern'));
    at.hostname = 'mcp.invalid.localhost';
    const d = await detect(at, { dispatcher });
    expect(d).toMatchObject({ outcome: 'NONE', cause: 'dns' });
    expectNothingLearnt(d);
    const run = await handshake(at, { revision: 'newest', dispatcher });
    expect(run).toMatchObject({
      outcome: 'unreachable',
      message: 'DNS: the host name could not be resolved (ENOTFOUND)',
    });
    // The same dispatcher reaches the same server under a name that resolves: DNS was the whole story.
    at.hostname = 'mcp.localhost';
    expect(await detect(at, { dispatcher })).toMatchObject({ outcome: 'DETECTED', cause: null });
  });

  it('an address the probe floor refuses: policy', async () => {
    const dispatcher = guardedDispatcher(new TargetPolicy({ allow: [], deny: [] }, { floor: true }));
    dispatchers.push(dispatcher);
    const d = await detect(url('modern'), { dispatcher });
    expect(d).toMatchObject({ outcome: 'NONE', cause: 'policy' });
    expectNothingLearnt(d);
    for (const r of d.revisions) expect(r.evidence?.reachabilityFailure).toBe('policy');
    const run = await handshake(url('modern'), { revision: 'newest', dispatcher });
    expect(run.outcome).toBe('unreachable');
    expect(run.message).toBe(
      'refused by policy: 127.0.0.1 is loopback, private or link-local and the probe floor (MCP_FLEET_PROBE_ALLOW) does not cover it',
    );
  });
});

describe('no single cause: the cause is null', () => {
  it('a website answers about every revision (HTTP 200 / 405 HTML): NONE, not an MCP server, and each revision was learnt', async () => {
    const d = await detect(url('website'));
    expect(d).toMatchObject({ outcome: 'NONE', cause: null });
    for (const r of d.revisions) expect(learntNothing(r.evidence)).toBe(false);
    const run = await handshake(url('website'), { revision: 'newest' });
    expect(run.outcome).toBe('not_mcp');
    expect(run.message).toBe('the target did not identify itself as an MCP server');
  });

  it('a detected server has no cause', async () => {
    expect(await detect(url('modern'))).toMatchObject({ outcome: 'DETECTED', cause: null });
  });

  it('a 429 is RATE_LIMITED, not a cause; its revisions learnt nothing', async () => {
    const d = await detect(url('rate-limited'));
    expect(d).toMatchObject({ outcome: 'RATE_LIMITED', cause: null });
    for (const r of d.revisions) expect(learntNothing(r.evidence)).toBe(true);
  });
});
