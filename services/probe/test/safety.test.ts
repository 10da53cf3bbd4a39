// What a probe does with replies it should not trust: redirects are recorded, not followed;
// transport errors are classified into reachability failures an operator can act on.
import { describe, expect, it } from 'vitest';
import { detect, handshake } from '../src';
import { classifyError } from '../src/exchange';
import { useSim } from './use-sim';

const fleet = useSim({ only: ['replies'] });

describe('redirects', () => {
  it('are recorded in the outcome and evidence, never followed', async () => {
    const url = new URL('/reply/302/html', fleet().target('replies').url).href;
    const run = await handshake(url, { revision: '2025-11-25' });
    expect(run.outcome).toBe('protocol_error');
    expect(run.message).toBe(
      'initialize: the server redirected to /reply/200/html (HTTP 302, text/html); redirects are not followed',
    );
    expect(run.evidence).toMatchObject({ status: 302 });
    expect(
      fleet()
        .requests('replies')
        .map((r) => r.path),
    ).toEqual(['/reply/302/html']);
  });

  it('show in a detection as the 3xx they are', async () => {
    const d = await detect(new URL('/reply/307/jsonrpc-32000', fleet().target('replies').url));
    expect(d.outcome).toBe('NONE');
    expect(d.revisions.every((r) => r.evidence?.status === 307)).toBe(true);
    expect(
      fleet()
        .requests('replies')
        .every((r) => r.path === '/reply/307/jsonrpc-32000'),
    ).toBe(true);
  });
});

describe('transport errors', () => {
  // The codes Node and undici raise; reaching a real DNS or TLS failure would mean leaving loopback.
  it.each([
    ['ECONNREFUSED', 'connection_refused'],
    ['ENOTFOUND', 'dns'],
    ['EAI_AGAIN', 'dns'],
    ['CERT_HAS_EXPIRED', 'tls'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls'],
    ['ECONNRESET', 'connection_reset'],
    ['UND_ERR_SOCKET', 'connection_reset'],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout'],
    ['UND_ERR_HEADERS_OVERFLOW', 'malformed_http'],
    ['HPE_INVALID_CONSTANT', 'malformed_http'],
    ['EHOSTUNREACH', 'network'],
  ])('%s is %s', (code, failure) => {
    const err = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('x'), { code }) });
    expect(classifyError(err)[0]).toBe(failure);
  });
});
