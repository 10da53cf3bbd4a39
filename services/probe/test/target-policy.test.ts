// The target policy: where probes may go.
import { describe, expect, it } from 'vitest';
import { TargetPolicy, type TargetPolicyRanges } from '../src';

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

  describe('a floor narrowed by a job', () => {
    const floor = (ranges: Partial<TargetPolicyRanges> = {}, onRefused?: (reason: string) => void) =>
      new TargetPolicy({ allow: [], deny: [], ...ranges }, { floor: true, ...(onRefused ? { onRefused } : {}) });

    it('dials an address only where both allow it: a job cannot widen the floor', () => {
      // The default floor: public addresses only. A job that allows loopback does not open it.
      const job = { allow: ['127.0.0.0/8', '10.0.0.0/8'], deny: [] };
      const publicOnly = floor().narrow(job);
      expect(publicOnly.refuses('127.0.0.1')).toBe(
        '127.0.0.1 is loopback, private or link-local and the probe floor (MCP_FLEET_PROBE_ALLOW) does not cover it',
      );
      expect(publicOnly.refuses('10.1.2.3')).toMatch(/the probe floor \(MCP_FLEET_PROBE_ALLOW\)/);
      expect(publicOnly.refuses('93.184.216.34')).toBeUndefined();
      // A floor that allows 10.0.0.0/8 but not loopback: the job's 10/8 passes, its 127/8 does not.
      const tens = floor({ allow: ['10.0.0.0/8'] }).narrow(job);
      expect(tens.refuses('10.1.2.3')).toBeUndefined();
      expect(tens.refuses('127.0.0.1')).toMatch(/probe floor/);
      expect(tens.refusesUrl(new URL('http://localhost:9/'))).toMatch(/probe floor/);
    });

    it('lets the job narrow the floor: its allow, deny and schemes still hold', () => {
      const wide = floor({ allow: ['127.0.0.0/8', '10.0.0.0/8'] });
      const narrowed = wide.narrow({ allow: ['127.0.0.0/8'], deny: ['127.0.0.2/32'], schemes: ['https'] });
      expect(narrowed.refuses('127.0.0.1')).toBeUndefined();
      // The job's refusals read as today's policy refusals.
      expect(narrowed.refuses('127.0.0.2')).toBe('127.0.0.2 is in a range the policy denies');
      expect(narrowed.refuses('10.1.2.3')).toBe(
        '10.1.2.3 is loopback, private or link-local and policy.allow does not cover it',
      );
      expect(narrowed.refusesScheme('http:')).toBe(
        'the scheme http: is not one the policy allows (policy.schemes: https)',
      );
      expect(narrowed.refusesScheme('https:')).toBeUndefined();
    });

    it('takes the union of deny lists and the intersection of schemes', () => {
      const f = floor({ allow: ['127.0.0.0/8'], deny: ['127.0.0.3/32'], schemes: ['http'] });
      const narrowed = f.narrow({ allow: ['127.0.0.0/8'], deny: ['127.0.0.2/32'], schemes: ['http', 'https'] });
      expect(narrowed.refuses('127.0.0.1')).toBeUndefined();
      expect(narrowed.refuses('127.0.0.2')).toMatch(/the policy denies/);
      expect(narrowed.refuses('127.0.0.3')).toBe(
        '127.0.0.3 is in a range the probe floor denies (MCP_FLEET_PROBE_DENY)',
      );
      expect(narrowed.refusesScheme('http')).toBeUndefined();
      expect(narrowed.refusesScheme('https')).toBe(
        'the scheme https: is not one the probe floor allows (MCP_FLEET_PROBE_SCHEMES: http)',
      );
    });

    it('keeps metadata and link-local refused unless the floor itself names them', () => {
      const job = { allow: ['169.254.169.254/32', 'fd00:ec2::254', '0.0.0.0/0'], deny: [] };
      const broadFloor = floor({ allow: ['0.0.0.0/0', '::/0'] }).narrow(job);
      for (const a of ['169.254.169.254', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', 'fd00:ec2::254'])
        expect(broadFloor.refuses(a), a).toMatch(/the probe floor \(MCP_FLEET_PROBE_ALLOW\) does not name it/);
      const naming = floor({ allow: ['169.254.169.254/32'] }).narrow(job);
      expect(naming.refuses('169.254.169.254')).toBeUndefined();
      // The floor names it, the job does not: still refused, by the job's policy.
      expect(
        floor({ allow: ['169.254.169.254/32'] })
          .narrow({ allow: [], deny: [] })
          .refuses('169.254.169.254'),
      ).toMatch(/policy\.allow does not name it/);
    });

    it("tells the floor of what it refused that the job's policy let through, and of nothing else", () => {
      const told: string[] = [];
      const narrowed = floor({}, (r) => told.push(r)).narrow({ allow: ['127.0.0.0/8'], deny: ['127.0.0.2/32'] });
      expect(narrowed.refuses('127.0.0.1')).toMatch(/probe floor/);
      expect(narrowed.refuses('127.0.0.2')).toMatch(/the policy denies/);
      expect(narrowed.refuses('93.184.216.34')).toBeUndefined();
      expect(narrowed.refusesScheme('ftp')).toMatch(/the policy allows/);
      expect(told).toEqual([
        '127.0.0.1 is loopback, private or link-local and the probe floor (MCP_FLEET_PROBE_ALLOW) does not cover it',
      ]);
    });
  });
});
