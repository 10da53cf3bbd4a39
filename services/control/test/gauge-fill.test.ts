// Fleet-wide gauges filled a slice at a time (gauge-fill.ts): the event loop turns during a large
// scrape (ingest shares it), the scrape still shows every series, and two scrapes at once share a
// fill instead of emptying each other's.
import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FILL_SLICE, fillInSlices } from '../src/gauge-fill';

const SERVERS = Array.from({ length: 5 * FILL_SLICE + 7 }, (_, i) => ({ server: `s${i}`, up: i % 3 !== 0 }));

function fleetGauge(list = async () => SERVERS) {
  const registry = new Registry();
  let filled = 0;
  new Gauge({
    name: 'fleet_up',
    help: 'x',
    labelNames: ['server'] as const,
    registers: [registry],
    collect: fillInSlices(list, (s, set) => {
      filled++;
      set({ server: s.server }, s.up ? 1 : 0);
    }),
  });
  return { registry, filled: () => filled };
}

function seriesOf(text: string): Map<string, string> {
  const series = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^fleet_up\{server="([^"]+)"\} (\d)$/.exec(line);
    if (m) series.set(m[1]!, m[2]!);
  }
  return series;
}

describe('a fleet-wide gauge filled in slices', () => {
  it('lets the event loop turn before the fill is done, and shows every series', async () => {
    const { registry, filled } = fleetGauge();
    // What ingest would do meanwhile: an I/O-phase callback queued as the scrape starts.
    let filledWhenLoopTurned: number | undefined;
    setImmediate(() => {
      filledWhenLoopTurned = filled();
    });
    const text = await registry.metrics();
    expect(filledWhenLoopTurned).toBeDefined();
    expect(filledWhenLoopTurned!).toBeLessThan(SERVERS.length);
    const series = seriesOf(text);
    expect(series.size).toBe(SERVERS.length);
    expect(series.get('s3')).toBe('0');
    expect(series.get('s4')).toBe('1');
  });

  it('gives two scrapes at once the whole fleet each (one fill, not two emptying each other)', async () => {
    const { registry, filled } = fleetGauge();
    const [a, b] = await Promise.all([registry.metrics(), registry.metrics()]);
    expect(seriesOf(a).size).toBe(SERVERS.length);
    expect(seriesOf(b).size).toBe(SERVERS.length);
    expect(filled()).toBe(SERVERS.length);
    // A later scrape fills again, from what the list says then.
    await registry.metrics();
    expect(filled()).toBe(2 * SERVERS.length);
  });

  it('drops series the list no longer has', async () => {
    let list = SERVERS;
    const { registry } = fleetGauge(async () => list);
    expect(seriesOf(await registry.metrics()).size).toBe(SERVERS.length);
    list = SERVERS.slice(0, 10);
    expect([...seriesOf(await registry.metrics()).keys()]).toEqual(SERVERS.slice(0, 10).map((s) => s.server));
  });
});
