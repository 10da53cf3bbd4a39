// The fleet-wide families as text (fleet-exposition.ts): what a scrape reads parses as the
// Prometheus text format (hostile label values escaped, not breaking a line), the event loop turns
// while a large fleet renders (ingest shares it), and a snapshot's text is rendered once.
import { describe, expect, it } from 'vitest';
import { FleetExposition, type FleetFamily, RENDER_SLICE } from '../src/fleet-exposition';

type Up = { server: string; region: string; up: boolean | null };
let rendered = 0;
const families: FleetFamily<Up>[] = [
  {
    name: 'fleet_up',
    help: 'Up.\nSecond line \\ of help.',
    series: (s) => {
      rendered++;
      return s.up === null ? null : [{ server: s.server, region: s.region }, s.up ? 1 : 0];
    },
  },
  { name: 'fleet_seconds', help: 'Seconds.', series: (s) => [{ server: s.server }, s.up ? 1.5 : Number.NaN] },
];

const textOf = async (exposition: FleetExposition<Up>, items: Up[]) => (await exposition.bytes(items)).toString();

/** Every sample line as [name, labels, value], parsed the way the text format is. */
function samples(text: string) {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-z_]+)\{((?:[a-z_]+="(?:[^"\\]|\\.)*",?)*)\} (\S+)$/.exec(l);
      if (!m) throw new Error(`not a sample line: ${l}`);
      const labels = Object.fromEntries(
        [...m[2]!.matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [
          x[1],
          x[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c)),
        ]),
      );
      return [m[1], labels, m[3]] as const;
    });
}

describe('fleet-wide families as text', () => {
  it('renders HELP, TYPE and one line per series, escaping what a label value or help holds', async () => {
    const hostile = 'a"b\\c\nfleet_up{server="x"} 1';
    const text = await textOf(new FleetExposition(families), [
      { server: 'orders', region: 'eu-west', up: true },
      { server: hostile, region: 'us-east', up: false },
      { server: 'new', region: 'eu-west', up: null },
    ]);
    expect(text.split('\n').slice(0, 2)).toEqual([
      '# HELP fleet_up Up.\\nSecond line \\\\ of help.',
      '# TYPE fleet_up gauge',
    ]);
    expect(text).toContain('\n\n# HELP fleet_seconds Seconds.\n# TYPE fleet_seconds gauge\n');
    expect(samples(text)).toEqual([
      ['fleet_up', { server: 'orders', region: 'eu-west' }, '1'],
      ['fleet_up', { server: hostile, region: 'us-east' }, '0'],
      ['fleet_seconds', { server: 'orders' }, '1.5'],
      ['fleet_seconds', { server: hostile }, 'NaN'],
      ['fleet_seconds', { server: 'new' }, 'NaN'],
    ]);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('writes a label set once (Prometheus refuses a whole scrape with a series twice)', async () => {
    const text = await textOf(new FleetExposition(families), [
      { server: 'orders', region: 'eu-west', up: true },
      { server: 'orders', region: 'eu-west', up: false },
    ]);
    expect(samples(text).filter(([name]) => name === 'fleet_up')).toEqual([
      ['fleet_up', { server: 'orders', region: 'eu-west' }, '1'],
    ]);
  });

  it('gives a family with no series its HELP and TYPE all the same', async () => {
    expect(await textOf(new FleetExposition(families), [])).toBe(
      '# HELP fleet_up Up.\\nSecond line \\\\ of help.\n# TYPE fleet_up gauge\n\n# HELP fleet_seconds Seconds.\n# TYPE fleet_seconds gauge\n',
    );
  });

  it('lets the event loop turn while a large fleet renders, and shows every series', async () => {
    const fleet = Array.from({ length: 3 * RENDER_SLICE }, (_, i) => ({ server: `s${i}`, region: 'r', up: true }));
    rendered = 0;
    let renderedWhenLoopTurned: number | undefined;
    setImmediate(() => {
      renderedWhenLoopTurned = rendered;
    });
    const text = await textOf(new FleetExposition(families), fleet);
    expect(renderedWhenLoopTurned).toBeDefined();
    expect(renderedWhenLoopTurned!).toBeLessThan(fleet.length);
    expect(samples(text)).toHaveLength(2 * fleet.length);
  });

  it('renders a snapshot once, whatever the scrapes (two at once share it); a new snapshot again', async () => {
    const exposition = new FleetExposition(families);
    const snapshot = [{ server: 'a', region: 'r', up: true }];
    rendered = 0;
    const [a, b] = await Promise.all([exposition.bytes(snapshot), exposition.bytes(snapshot)]);
    expect(a).toBe(b); // the very same bytes
    expect(await exposition.bytes(snapshot)).toBe(a);
    expect(rendered).toBe(1);
    const next = [{ server: 'a', region: 'r', up: false }];
    expect(samples(await textOf(exposition, next))[0]).toEqual(['fleet_up', { server: 'a', region: 'r' }, '0']);
    expect(rendered).toBe(2);
  });
});
