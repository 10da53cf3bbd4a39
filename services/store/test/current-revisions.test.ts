// What a scheduling control reads back before publishing: the current revisions of the tests due,
// as ingest (any control's) left them — on both backends. And fleet applies taking turns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentRevisions, lockFleetApply, recordRun, type Store } from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, minute, resultOf, serverWithTests } from './fixtures';

describe.each(BACKENDS)('current revisions on %s', (name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  it("reads each asked test's revision per region, only where one is known", async () => {
    const { tests } = await serverWithTests(store.db, ['newest', '2025-03-26']);
    const [newest, pinned] = tests;
    const { tests: others } = await serverWithTests(store.db, ['newest']);
    await recordRun(store.db, resultOf(newest!, 'eu-west', minute(1), handshakeRun({ negotiated: '2026-07-28' })));
    await recordRun(store.db, resultOf(newest!, 'us-east', minute(1), handshakeRun({ negotiated: '2025-11-25' })));
    // A later run moves it: the read follows.
    await recordRun(store.db, resultOf(newest!, 'us-east', minute(2), handshakeRun({ negotiated: '2026-07-28' })));
    await recordRun(store.db, resultOf(others[0]!, 'eu-west', minute(1), handshakeRun({ negotiated: '2025-06-18' })));
    const read = await currentRevisions(store.db, [newest!.id, pinned!.id, newest!.id]);
    expect(Object.fromEntries(read)).toEqual({
      [`${newest!.id}|eu-west`]: '2026-07-28',
      [`${newest!.id}|us-east`]: '2026-07-28',
    });
    expect((await currentRevisions(store.db, [])).size).toBe(0);
  });

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
