// The fleet-wide families' text format (fleet-exposition.ts): what a scrape reads parses as the
// Prometheus text format, hostile label values escaped (never breaking a line), a label set once.
import { describe, expect, it } from 'vitest';
import { familyHead, seriesLines } from '../src/fleet-exposition';
import { samples } from './exposition-samples';

describe('fleet-wide families as text', () => {
  it('escapes what a help text holds', () => {
    expect(familyHead('fleet_up', 'Up.\nSecond line \\ of help.')).toBe(
      '# HELP fleet_up Up.\\nSecond line \\\\ of help.\n# TYPE fleet_up gauge',
    );
  });

  it('writes one line per series, escaping what a label value holds', () => {
    const hostile = 'a"b\\c\nfleet_up{server="x"} 1';
    const text = seriesLines('fleet_up', [
      [{ server: 'orders', region: 'eu-west' }, 1],
      [{ server: hostile, region: 'us-east' }, 0],
      [{ server: 'nan' }, Number.NaN],
      [{ server: 'half' }, 1.5],
      [{ server: 'inf' }, Number.POSITIVE_INFINITY],
    ]);
    expect(text.split('\n')).toHaveLength(5);
    expect(samples(text)).toEqual([
      ['fleet_up', { server: 'orders', region: 'eu-west' }, '1'],
      ['fleet_up', { server: hostile, region: 'us-east' }, '0'],
      ['fleet_up', { server: 'nan' }, 'NaN'],
      ['fleet_up', { server: 'half' }, '1.5'],
      ['fleet_up', { server: 'inf' }, '+Inf'],
    ]);
  });

  it('writes a label set once (Prometheus refuses a whole scrape with a series twice)', () => {
    const text = seriesLines('fleet_up', [
      [{ server: 'orders', region: 'eu-west' }, 1],
      [{ server: 'orders', region: 'eu-west' }, 0],
    ]);
    expect(samples(text)).toEqual([['fleet_up', { server: 'orders', region: 'eu-west' }, '1']]);
  });

  it('writes nothing for no series', () => {
    expect(seriesLines('fleet_up', [])).toBe('');
  });
});
