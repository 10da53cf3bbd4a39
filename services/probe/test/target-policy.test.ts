// The target policy: where probes may go.
import { describe, expect, it } from 'vitest';
import { TargetPolicy } from '../src';

describe('the target policy', () => {
  it('refuses loopback, private and link-local addresses unless allowed', () => {
    const none = new TargetPolicy({ allow: [], deny: [] });
    for (const a of ['127.0.0.1', '10.1.2.3', '192.168.1.1', '169.254.169.254', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(none.refuses(a), a).toMatch(/policy\.allow/);
    expect(none.refuses('93.184.216.34')).toBeUndefined();
    expect(none.refuses('example.com')).toBeUndefined();

    const loopback = new TargetPolicy({ allow: ['127.0.0.0/8', '10.20.0.0/16'], deny: [] });
    expect(loopback.refuses('127.0.0.1')).toBeUndefined();
    expect(loopback.refuses('::ffff:127.0.0.1')).toBeUndefined();
    expect(loopback.refuses('10.20.3.4')).toBeUndefined();
    expect(loopback.refuses('10.21.3.4')).toMatch(/policy\.allow/);
  });

  it('denies what deny names even when allow covers it, and reads URLs with address hosts', () => {
    const p = new TargetPolicy({ allow: ['127.0.0.0/8'], deny: ['127.0.0.2/32'] });
    expect(p.refuses('127.0.0.2')).toMatch(/denies/);
    expect(p.refusesUrl(new URL('http://127.0.0.1:80/'))).toBeUndefined();
    expect(p.refusesUrl(new URL('http://127.0.0.2/'))).toMatch(/denies/);
    expect(new TargetPolicy({ allow: [], deny: [] }).refusesUrl(new URL('http://localhost:9/'))).toMatch(/loopback/);
    expect(new TargetPolicy({ allow: [], deny: [] }).refusesUrl(new URL('http://[::1]:9/'))).toMatch(/loopback/);
  });
});
