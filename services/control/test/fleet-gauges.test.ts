// Control's fleet-wide gauges kept per server (fleet-gauges.ts), over a fleet held in memory in
// place of the store's reads: a run that moved one server has that server read again, not the
// fleet; a family none of whose lines changed is not assembled again; the whole fleet is read a
// slice at a time with the event loop turning; reads are spaced; a failed read keeps what was read.
import { describe, expect, it } from 'vitest';
import type { ServerGauges } from '../src/fleet-families';
import type { FleetGaugeReads } from '../src/fleet-gauge-reads';
import { CHEAP_WAIT_MS, FleetGauges, READ_SLICE } from '../src/fleet-gauges';
import { samples } from './exposition-samples';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const server = (name: string, over: Partial<ServerGauges> = {}): ServerGauges => ({
  id: `id-${name}`,
  name,
  regions: [{ region: 'eu-west', revision: '2025-11-25', era: 'legacy', up: true, failingPinnedTests: 0 }],
  tests: [{ test: 'newest/handshake', revision: 'newest', failing: false, regionsFailing: 0, regionsTotal: 1 }],
  disagreement: { afterMs: 600_000, openSince: null },
  mustFailing: null,
  ...over,
});

/** A fleet in memory, counting what is read of it; `delayMs` makes each read slow, `fail` makes it throw. */
class Fleet implements FleetGaugeReads {
  readonly servers_ = new Map<string, ServerGauges>();
  asked: string[][] = [];
  delayMs = 0;
  /** Listing the fleet (a whole read) takes this long. */
  wholeDelayMs = 0;
  fail = false;
  constructor(list: ServerGauges[]) {
    for (const s of list) this.servers_.set(s.id, s);
  }
  set(s: ServerGauges) {
    this.servers_.set(s.id, s);
  }
  async liveServerIds() {
    if (this.wholeDelayMs) await sleep(this.wholeDelayMs);
    if (this.fail) throw new Error('database away');
    return [...this.servers_.keys()];
  }
  async servers(ids: readonly string[]) {
    if (this.delayMs) await sleep(this.delayMs);
    if (this.fail) throw new Error('database away');
    this.asked.push([...ids]);
    return ids.flatMap((id) => this.servers_.get(id) ?? []);
  }
}

const scrape = async (gauges: FleetGauges) => (await gauges.bytes()).map((b) => b.toString()).join('\n');
const series = (text: string, name: string) => samples(text).filter(([n]) => n === name);

describe('fleet-wide gauges kept per server', () => {
  it('shows every family of every server, HELP and TYPE even for a family with no series', async () => {
    const fleet = new Fleet([
      server('orders', { mustFailing: 2 }),
      server('search', {
        regions: [
          { region: 'eu-west', revision: '1999-01-01', era: null, up: false, failingPinnedTests: 1 },
          { region: 'us-east', revision: null, era: null, up: null, failingPinnedTests: 0 },
        ],
        tests: [],
        disagreement: null,
      }),
    ]);
    const gauges = new FleetGauges(fleet);
    const text = await scrape(gauges);
    expect(series(text, 'mcp_server_revision_info')).toEqual([
      [
        'mcp_server_revision_info',
        { server: 'orders', region: 'eu-west', negotiated_version: '2025-11-25', era: 'legacy' },
        '1',
      ],
      // A revision control does not know (stored from a server's answer) stays a bounded label.
      [
        'mcp_server_revision_info',
        { server: 'search', region: 'eu-west', negotiated_version: 'other', era: 'unknown' },
        '1',
      ],
    ]);
    expect(series(text, 'mcp_server_up').map(([, l, v]) => [l.server, l.region, v])).toEqual([
      ['orders', 'eu-west', '1'],
      ['search', 'eu-west', '0'],
    ]);
    expect(series(text, 'mcp_server_failing_pinned_tests')).toHaveLength(3);
    expect(series(text, 'mcp_test_regions')).toEqual([
      ['mcp_test_regions', { server: 'orders', test: 'newest/handshake', revision: 'newest' }, '1'],
    ]);
    expect(series(text, 'mcp_server_region_disagreement')).toEqual([
      ['mcp_server_region_disagreement', { server: 'orders' }, '0'],
    ]);
    expect(series(text, 'mcp_conformance_passing')).toEqual([['mcp_conformance_passing', { server: 'orders' }, '0']]);
    expect(text.match(/^# TYPE \S+ gauge$/gm)).toHaveLength(10);
    gauges.stop();
  });

  it('reads again only the server a run moved, and assembles again only the families whose lines changed', async () => {
    const fleet = new Fleet(Array.from({ length: 50 }, (_, i) => server(`s${i}`)));
    const gauges = new FleetGauges(fleet, { minGapMs: 0 });
    const first = await gauges.bytes();
    for (let i = 0; i < 5; i++) expect(await gauges.bytes()).toEqual(first);
    expect(gauges.reads).toEqual({ whole: 1, some: 0, servers: 50 });

    // s7 stops passing in eu-west: one server read; only mcp_server_up's text is new.
    fleet.set(server('s7', { regions: [{ ...server('s7').regions[0]!, up: false }] }));
    fleet.asked = [];
    gauges.moved(['id-s7']);
    const after = await gauges.bytes();
    expect(fleet.asked).toEqual([['id-s7']]);
    expect(after.map((b, k) => b === first[k])).toEqual([true, false, true, true, true, true, true, true, true, true]);
    expect(series(after.join('\n'), 'mcp_server_up').find(([, l]) => l.server === 's7')?.[2]).toBe('0');

    // A run that moved nothing the gauges show: read, and every family's text is the one kept.
    gauges.moved(['id-s8']);
    const same = await gauges.bytes();
    expect(same.every((b, k) => b === after[k])).toBe(true);
    gauges.stop();
  });

  it('drops a server a read no longer finds (retired), and a stale id holding a live name', async () => {
    const fleet = new Fleet([server('orders'), server('billing')]);
    const gauges = new FleetGauges(fleet, { minGapMs: 0 });
    await gauges.bytes();
    fleet.servers_.delete('id-billing');
    gauges.moved(['id-billing']);
    expect(series(await scrape(gauges), 'mcp_server_up').map(([, l]) => l.server)).toEqual(['orders']);
    // orders retired and made again under the same name: the new id's lines replace the old's.
    fleet.servers_.delete('id-orders');
    fleet.set({ ...server('orders'), id: 'id-orders-2' });
    gauges.moved(['id-orders-2']);
    expect(series(await scrape(gauges), 'mcp_server_up')).toEqual([
      ['mcp_server_up', { server: 'orders', region: 'eu-west' }, '1'],
    ]);
    gauges.stop();
  });

  it("renders an open disagreement's duration at each scrape, and alerts once it lasts disagreementAfter", async () => {
    const fleet = new Fleet([server('orders', { disagreement: { afterMs: 300, openSince: Date.now() - 100 } })]);
    const gauges = new FleetGauges(fleet, { minGapMs: 0 });
    const seconds = async () => {
      const text = await scrape(gauges);
      const [[, , lasted]] = series(text, 'mcp_server_region_disagreement_seconds') as [[string, unknown, string]];
      const [[, , alerting]] = series(text, 'mcp_server_region_disagreement') as [[string, unknown, string]];
      return [Number(lasted), alerting] as const;
    };
    const [early, alertingEarly] = await seconds();
    expect(early).toBeGreaterThanOrEqual(0.1);
    expect(alertingEarly).toBe('0');
    await sleep(250);
    const [later, alertingLater] = await seconds();
    expect(later).toBeGreaterThan(early);
    expect(alertingLater).toBe('1');
    expect(gauges.reads.whole).toBe(1);
    gauges.stop();
  });

  it('reads the whole fleet a slice at a time, the event loop turning between slices', async () => {
    const fleet = new Fleet(Array.from({ length: 3 * READ_SLICE + 1 }, (_, i) => server(`s${i}`)));
    let slicesWhenLoopTurned: number | undefined;
    const check = () =>
      setImmediate(() => {
        slicesWhenLoopTurned ??= fleet.asked.length > 0 ? fleet.asked.length : undefined;
        if (slicesWhenLoopTurned === undefined) check();
      });
    check();
    const gauges = new FleetGauges(fleet);
    const text = await scrape(gauges);
    expect(fleet.asked.map((ids) => ids.length)).toEqual([READ_SLICE, READ_SLICE, READ_SLICE, 1]);
    expect(slicesWhenLoopTurned).toBeLessThan(4);
    expect(series(text, 'mcp_server_up')).toHaveLength(3 * READ_SLICE + 1);
    gauges.stop();
  });

  it('spaces an expensive read ten times its duration apart, and a scrape meanwhile serves what was read', async () => {
    const fleet = new Fleet([server('orders')]);
    fleet.delayMs = 250;
    const gauges = new FleetGauges(fleet, { minGapMs: 0 });
    await gauges.bytes();
    gauges.moved(['id-orders']);
    await sleep(400); // a read of some servers took 250 ms: not cheap
    const reads = gauges.reads.some;
    fleet.set(server('orders', { regions: [{ ...server('orders').regions[0]!, up: false }] }));
    gauges.moved(['id-orders']);
    gauges.moved(['id-orders']);
    const t0 = performance.now();
    expect(series(await scrape(gauges), 'mcp_server_up')[0]?.[2]).toBe('1');
    expect(performance.now() - t0).toBeLessThan(50);
    await sleep(3_000);
    expect(series(await scrape(gauges), 'mcp_server_up')[0]?.[2]).toBe('0');
    expect(gauges.reads.some).toBe(reads + 1);
    gauges.stop();
  });

  it('reads the servers a run moved at a scrape while an expensive whole read waits its gap', async () => {
    const fleet = new Fleet([server('orders'), server('billing')]);
    fleet.wholeDelayMs = 250;
    const gauges = new FleetGauges(fleet, { minGapMs: 0 });
    await gauges.bytes();
    gauges.changed(); // the fleet changed: a whole read waits ~2.5 s
    fleet.set(server('orders', { mustFailing: 1 }));
    gauges.moved(['id-orders']);
    const t0 = performance.now();
    expect(series(await scrape(gauges), 'mcp_conformance_must_failing')).toEqual([
      ['mcp_conformance_must_failing', { server: 'orders' }, '1'],
    ]);
    expect(performance.now() - t0).toBeLessThan(200);
    expect(gauges.reads).toMatchObject({ whole: 1, some: 1 });
    gauges.stop();
  });

  it('reads the whole fleet again when older than maxAgeMs, and at every scrape with maxAgeMs 0', async () => {
    const fleet = new Fleet([server('orders')]);
    const aged = new FleetGauges(fleet, { maxAgeMs: 30 });
    await aged.bytes();
    await sleep(50);
    await aged.bytes();
    expect(aged.reads.whole).toBe(2);
    aged.stop();
    const every = new FleetGauges(fleet, { maxAgeMs: 0 });
    await every.bytes();
    fleet.set(server('orders', { mustFailing: 1 }));
    expect(series(await scrape(every), 'mcp_conformance_must_failing')).toHaveLength(1);
    expect(every.reads.whole).toBe(2);
    every.stop();
  });

  it('waits a bounded while for a read it started because reads were cheap, when the fleet grew behind its back', async () => {
    const fleet = new Fleet([server('orders')]);
    const gauges = new FleetGauges(fleet, { maxAgeMs: 30 });
    await gauges.bytes();
    for (let i = 0; i < 20; i++) fleet.set(server(`s${i}`));
    fleet.delayMs = CHEAP_WAIT_MS + 1_500;
    await sleep(50);
    const t0 = performance.now();
    expect(series(await scrape(gauges), 'mcp_server_up')).toHaveLength(1);
    expect(performance.now() - t0).toBeLessThan(CHEAP_WAIT_MS + 1_000);
    await sleep(2_000);
    expect(series(await scrape(gauges), 'mcp_server_up')).toHaveLength(21);
    gauges.stop();
  });

  it('keeps what was read when a read fails, says so, and reads the server again later', async () => {
    const fleet = new Fleet([server('orders')]);
    const errors: string[] = [];
    const gauges = new FleetGauges(fleet, { minGapMs: 0 }, (err) => errors.push(err.message));
    await gauges.bytes();
    fleet.fail = true;
    fleet.set(server('orders', { mustFailing: 3 }));
    gauges.moved(['id-orders']);
    expect(series(await scrape(gauges), 'mcp_server_up')).toHaveLength(1);
    expect(errors).toEqual(['database away']);
    fleet.fail = false;
    await sleep(20);
    expect(series(await scrape(gauges), 'mcp_conformance_must_failing')[0]?.[2]).toBe('3');
    gauges.stop();
  });

  it('fails a first scrape when the store cannot be read at all', async () => {
    const fleet = new Fleet([]);
    fleet.fail = true;
    const gauges = new FleetGauges(fleet);
    await expect(gauges.bytes()).rejects.toThrow(/could not be read/);
    gauges.stop();
  });
});
