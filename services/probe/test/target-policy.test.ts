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

  it('opens link-local and cloud metadata addresses only to an allow entry inside their range', () => {
    const broad = new TargetPolicy({ allow: ['0.0.0.0/0', '::/0', '100.64.0.0/10', 'fc00::/7'], deny: [] });
    for (const a of [
      '169.254.169.254',
      '169.254.170.2',
      'fe80::1',
      'fd00:ec2::254',
      'fd20:ce::254',
      '100.100.100.200',
      '192.0.0.192',
      '168.63.129.16',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::169.254.169.254',
    ])
      expect(broad.refuses(a), a).toMatch(/needs an allow entry inside/);
    // The broad allow still covers what is merely private, loopback or shared.
    for (const a of ['10.1.2.3', '127.0.0.1', '100.64.1.1', 'fd12::1']) expect(broad.refuses(a), a).toBeUndefined();
    expect(new TargetPolicy({ allow: [], deny: [] }).refuses('168.63.129.16')).toBe(
      '168.63.129.16 is a cloud metadata address and policy.allow does not name it (it needs an allow entry inside 168.63.129.16/32)',
    );
    const named = new TargetPolicy({ allow: ['169.254.169.254/32', 'fd00:ec2::254'], deny: [] });
    expect(named.refuses('169.254.169.254')).toBeUndefined();
    expect(named.refuses('fd00:ec2::254')).toBeUndefined();
    expect(named.refuses('169.254.170.2')).toMatch(/169\.254\.0\.0\/16/);
    expect(
      new TargetPolicy({ allow: ['169.254.0.0/16'], deny: ['169.254.169.254'] }).refuses('169.254.169.254'),
    ).toMatch(/denies/);
    // NAT64 carries the IPv4 address it reaches: judged as that address.
    expect(new TargetPolicy({ allow: [], deny: [] }).refuses('64:ff9b::a00:1')).toMatch(/^10\.0\.0\.1 is loopback/);
    expect(new TargetPolicy({ allow: [], deny: [] }).refuses('64:ff9b::808:808')).toBeUndefined();
    expect(new TargetPolicy({ allow: [], deny: [] }).refusesUrl(new URL('http://[::ffff:169.254.169.254]/'))).toMatch(
      /169\.254\.169\.254 is loopback, private or link-local/,
    );
  });

  it('allows the schemes policy.schemes lists (default http and https)', () => {
    const any = new TargetPolicy({ allow: [], deny: [] });
    expect(any.refusesUrl(new URL('http://93.184.216.34/'))).toBeUndefined();
    expect(any.refusesUrl(new URL('https://example.com/'))).toBeUndefined();
    expect(any.refusesUrl(new URL('ftp://example.com/'))).toBe(
      'the scheme ftp: is not one the policy allows (policy.schemes: http, https)',
    );
    const https = new TargetPolicy({ allow: [], deny: [], schemes: ['https'] });
    expect(https.refusesUrl(new URL('http://example.com/'))).toMatch(/the scheme http: is not one/);
    expect(https.refusesUrl(new URL('https://example.com/'))).toBeUndefined();
    expect(https.refusesScheme('HTTPS:')).toBeUndefined();
  });

  it('reads localhost names, with or without a trailing dot, as loopback', () => {
    const none = new TargetPolicy({ allow: [], deny: [] });
    for (const u of ['http://localhost./', 'http://a.localhost/', 'http://LOCALHOST:1/'])
      expect(none.refusesUrl(new URL(u)), u).toMatch(/loopback/);
  });
});
