// The small pieces on their own: backoff, metric labels, span URLs.
import { describe, expect, it } from 'vitest';
import { nakDelayMs, revisionLabel, spanUrl } from '../src';

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
