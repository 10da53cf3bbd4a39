// The small pieces on their own: backoff, metric labels, span URLs, the address policy.
import { describe, expect, it } from 'vitest';
import { AddressPolicy, nakDelayMs, revisionLabel, spanUrl } from '../src';

describe('nak backoff', () => {
  it('doubles from 1 s per redelivery and stops at 30 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50].map(nakDelayMs)).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });
});

describe('revision labels stay bounded', () => {
  it('keeps known revisions, says none for null and other for anything else', () => {
    expect(revisionLabel('2025-06-18')).toBe('2025-06-18');
    expect(revisionLabel(null)).toBe('none');
    expect(revisionLabel('2099-01-01')).toBe('other');
    expect(revisionLabel('x'.repeat(64))).toBe('other');
  });
});

describe('span URLs', () => {
  it('drop credentials, query string and fragment', () => {
    expect(spanUrl('https://user:pa55@mcp.example.com:8443/mcp?api_key=secret#frag')).toBe(
      'https://mcp.example.com:8443/mcp',
    );
    expect(spanUrl('http://127.0.0.1:9000/messages?sessionId=abc')).toBe('http://127.0.0.1:9000/messages');
    expect(spanUrl('not a url')).toBe('');
  });
});

describe('address policy', () => {
  it('refuses loopback, private and link-local addresses unless allowed', () => {
    const none = new AddressPolicy([]);
    for (const a of ['127.0.0.1', '10.1.2.3', '192.168.1.1', '169.254.169.254', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(none.refuses(a), a).toMatch(/policy\.allow/);
    expect(none.refuses('93.184.216.34')).toBeUndefined();
    expect(none.refuses('example.com')).toBeUndefined();

    const loopback = new AddressPolicy(['127.0.0.0/8', '10.20.0.0/16']);
    expect(loopback.refuses('127.0.0.1')).toBeUndefined();
    expect(loopback.refuses('::ffff:127.0.0.1')).toBeUndefined();
    expect(loopback.refuses('10.20.3.4')).toBeUndefined();
    expect(loopback.refuses('10.21.3.4')).toMatch(/policy\.allow/);
  });
});
