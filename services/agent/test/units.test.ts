// The small pieces on their own: backoff, metric labels and initial series, span URLs.
import { parseMetrics } from '@mcp-fleet/testkit';
import { describe, expect, it } from 'vitest';
import { AgentMetrics, nakDelayMs, revisionLabel, spanUrl } from '../src';

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

describe('counters alerts take increase() of', () => {
  it('start at 0 for every known label set, so the first event after a start is an increase', async () => {
    const metrics = new AgentMetrics({ region: 'eu-west', version: 'test', defaultMetrics: false });
    const samples = parseMetrics(await metrics.registry.metrics());
    const series = (name: string) => samples.filter((s) => s.name === name);
    expect(series('mcp_downgrades_total')).toEqual([
      expect.objectContaining({ labels: { region: 'eu-west' }, value: 0 }),
    ]);
    // Every move between two of the five revisions: 5 × 4.
    expect(series('mcp_era_moves_total')).toHaveLength(20);
    expect(
      series('mcp_era_moves_total').every((s) => s.value === 0 && s.labels.from_version !== s.labels.to_version),
    ).toBe(true);
    expect(
      series('mcp_detection_total')
        .map((s) => s.labels.outcome)
        .sort(),
    ).toEqual(['detected', 'none', 'rate_limited']);
  });
});
