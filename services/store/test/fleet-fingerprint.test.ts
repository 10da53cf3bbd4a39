// fleetFingerprint: control compares it every 30 s and reads the whole schedule only when it moved
// (schedule.ts). It must move on every change to what the schedule is read from, whoever makes it,
// and stay put while runs are written (they move test states, which the schedule does not read).
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTest, fleetFingerprint, recordRun, retireTest, type Store, updateServer } from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, minute, resultOf, serverWithTests } from './fixtures';

describe.each(BACKENDS)('the fleet fingerprint on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  it('moves on every change to servers and tests, by the API or by hand, and not on runs', async () => {
    const seen = new Set<string>();
    const moved = async () => {
      const f = await fleetFingerprint(store.db);
      const fresh = !seen.has(f);
      seen.add(f);
      return fresh;
    };
    expect(await moved()).toBe(true); // the empty fleet
    expect(await moved()).toBe(false); // read again, nothing changed

    const { server, tests } = await serverWithTests(store.db, ['newest']);
    expect(await moved()).toBe(true);

    // Runs move test states and partitions, not the fleet.
    await recordRun(store.db, resultOf(tests[0]!, 'eu-west', minute(1), handshakeRun()));
    await recordRun(store.db, resultOf(tests[0]!, 'us-east', minute(2), handshakeRun({ negotiated: '2025-11-25' })));
    expect(await moved()).toBe(false);

    await updateServer(store.db, server.id, { intervalMs: 30_000 });
    expect(await moved()).toBe(true);
    const pinned = await createTest(store.db, { serverId: server.id, mode: 'pinned', pinnedRevision: '2025-03-26' });
    expect(await moved()).toBe(true);
    await retireTest(store.db, pinned.id);
    expect(await moved()).toBe(true);

    // By hand, behind every control's back: an update that keeps the row count, then a delete.
    await store.db.execute(sql`update servers set timeout_ms = 5000 where id = ${server.id}`);
    expect(await moved()).toBe(true);
    await store.db.execute(sql`delete from tests where id = ${pinned.id}`);
    expect(await moved()).toBe(true);
    expect(await moved()).toBe(false);
  });
});
