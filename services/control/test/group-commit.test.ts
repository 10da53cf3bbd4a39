// The group commit in front of store's recordRuns: batches grow while the writers are busy, each
// item gets its own answer or its own error, a failed write fails only its own batch's items, and
// no more batches run at once than there are writers.
import { describe, expect, it } from 'vitest';
import { GroupCommit, type Settled } from '../src/group-commit';

/** A writer that takes `ms` per batch, records the batches and how many ran at once. */
function writer(ms: number, answer: (n: number) => Settled<string> = (n) => ({ ok: true, answer: `done ${n}` })) {
  const batches: number[][] = [];
  let running = 0;
  let most = 0;
  const write = async (items: number[]) => {
    batches.push(items);
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, ms));
    running--;
    return items.map(answer);
  };
  return { write, batches, most: () => most };
}

describe('group commit', () => {
  it('writes one item alone when nothing else arrives', async () => {
    const w = writer(1);
    const gc = new GroupCommit(w.write, { maxBatch: 8, writers: 2 });
    expect(await gc.add(1)).toBe('done 1');
    expect(w.batches).toEqual([[1]]);
  });

  it('gathers what arrives in one turn, and what arrives while the writers are busy', async () => {
    const w = writer(30);
    const sizes: number[] = [];
    const gc = new GroupCommit(w.write, { maxBatch: 100, writers: 1, onBatch: (n) => sizes.push(n) });
    const first = Array.from({ length: 5 }, (_, i) => gc.add(i));
    await new Promise((r) => setTimeout(r, 5));
    // The writer is busy with the first five: these wait and go together.
    const later = Array.from({ length: 20 }, (_, i) => gc.add(100 + i));
    expect(await Promise.all([...first, ...later])).toHaveLength(25);
    expect(w.batches.map((b) => b.length)).toEqual([5, 20]);
    expect(sizes).toEqual([5, 20]);
    expect(w.most()).toBe(1);
  });

  it('splits at maxBatch and runs at most `writers` batches at once', async () => {
    const w = writer(10);
    const gc = new GroupCommit(w.write, { maxBatch: 16, writers: 3 });
    await Promise.all(Array.from({ length: 200 }, (_, i) => gc.add(i)));
    expect(w.batches.every((b) => b.length <= 16)).toBe(true);
    expect(w.batches.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(w.most()).toBe(3);
  });

  it("gives each item its own error, and a failed write fails its batch's items only", async () => {
    let fail = false;
    const gc = new GroupCommit<number, string>(
      async (items) => {
        if (fail) throw new Error('database away');
        return items.map((n) =>
          n % 2 ? { ok: false, error: new Error(`bad ${n}`) } : { ok: true, answer: `ok ${n}` },
        );
      },
      { maxBatch: 4, writers: 1 },
    );
    const settled = await Promise.allSettled([1, 2, 3, 4].map((n) => gc.add(n)));
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([
      'bad 1',
      'ok 2',
      'bad 3',
      'ok 4',
    ]);
    fail = true;
    await expect(gc.add(6)).rejects.toThrow('database away');
    fail = false;
    expect(await gc.add(8)).toBe('ok 8');
  });

  it('refuses a batch size or writer count that is not a whole number ≥ 1', () => {
    const w = writer(1);
    expect(() => new GroupCommit(w.write, { maxBatch: 0, writers: 1 })).toThrow(/maxBatch/);
    expect(() => new GroupCommit(w.write, { maxBatch: 4, writers: 1.5 })).toThrow(/writers/);
  });
});
