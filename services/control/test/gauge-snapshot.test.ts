// Control's state gauges serve a snapshot (gauge-snapshot.ts): scrapes of an unchanged fleet read
// nothing, a change is read once however many scrapes follow, an expensive read is spaced ten
// times its duration apart, and a failed read keeps the last snapshot.
import { describe, expect, it } from 'vitest';
import { GaugeSnapshot } from '../src/gauge-snapshot';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('gauge snapshot', () => {
  it('reads once for many scrapes while nothing changes, then once per change', async () => {
    let value = 1;
    const snap = new GaugeSnapshot(async () => value, { minGapMs: 0 });
    expect(await snap.get()).toBe(1);
    for (let i = 0; i < 20; i++) expect(await snap.get()).toBe(1);
    expect(snap.reads).toBe(1);
    value = 2;
    snap.changed();
    // A cheap read with a change waiting: the next scrape sees it.
    expect(await snap.get()).toBe(2);
    expect(await snap.get()).toBe(2);
    expect(snap.reads).toBe(2);
    snap.stop();
  });

  it('spaces an expensive read ten times its duration apart, and a scrape never starts one', async () => {
    let value = 1;
    const snap = new GaugeSnapshot(
      async () => {
        await sleep(60);
        return value;
      },
      { minGapMs: 0 },
    );
    expect(await snap.get()).toBe(1);
    value = 2;
    snap.changed();
    snap.changed();
    // The gap after a 60 ms read is ~600 ms: scrapes meanwhile get the old snapshot at once.
    const t0 = performance.now();
    expect(await snap.get()).toBe(1);
    expect(performance.now() - t0).toBeLessThan(50);
    expect(snap.reads).toBe(1);
    await sleep(900);
    expect(await snap.get()).toBe(2);
    expect(snap.reads).toBe(2);
    snap.stop();
  });

  it('reads again when older than maxAgeMs, and at every scrape with maxAgeMs 0', async () => {
    let reads = 0;
    const aged = new GaugeSnapshot(async () => ++reads, { maxAgeMs: 30 });
    expect(await aged.get()).toBe(1);
    await sleep(50);
    expect(await aged.get()).toBe(2);
    aged.stop();
    let n = 0;
    const every = new GaugeSnapshot(async () => ++n, { maxAgeMs: 0 });
    await every.get();
    await every.get();
    expect(n).toBe(2);
  });

  it('keeps the last snapshot when a read fails, says so, and reads again later', async () => {
    let fail = false;
    const errors: string[] = [];
    const snap = new GaugeSnapshot(
      async () => {
        if (fail) throw new Error('database away');
        return 'ok';
      },
      { minGapMs: 0 },
      (err) => errors.push(err.message),
    );
    expect(await snap.get()).toBe('ok');
    fail = true;
    snap.changed();
    expect(await snap.get()).toBe('ok');
    expect(errors).toEqual(['database away']);
    fail = false;
    await sleep(20);
    expect(await snap.get()).toBe('ok');
    snap.stop();
  });

  it('fails a first scrape when the store cannot be read at all', async () => {
    const snap = new GaugeSnapshot(async () => {
      throw new Error('down');
    });
    await expect(snap.get()).rejects.toThrow(/could not be read/);
    snap.stop();
  });
});
