// Fleet applies taking turns (apply-lock.ts), on both backends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockFleetApply, type Store } from '../src';
import { BACKENDS } from './backends';

describe.each(BACKENDS)('the fleet apply lock on %s', (name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  it('makes fleet applies take turns: a second waits for the first transaction to end', async () => {
    const events: string[] = [];
    const apply = (who: string, holdMs: number) =>
      store.db.transaction(async (tx) => {
        await lockFleetApply(tx);
        events.push(`${who} locked`);
        await new Promise((r) => setTimeout(r, holdMs));
        events.push(`${who} done`);
      });
    const first = apply('first', 300);
    await new Promise((r) => setTimeout(r, 50));
    await Promise.all([first, apply('second', 0)]);
    expect(events).toEqual(['first locked', 'first done', 'second locked', 'second done']);
    expect(name).toMatch(/postgres|pglite/);
  });
});
