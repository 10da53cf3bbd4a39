import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createServer,
  createTest,
  DuplicateNameError,
  getServer,
  getServerByName,
  getTest,
  getTestStates,
  listActiveServers,
  listActiveTests,
  recordRun,
  retireServer,
  retireTest,
  type Store,
  updateServer,
} from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, minute, resultOf, serverWithTests } from './fixtures';

describe.each(BACKENDS)('the fleet on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  it('creates, finds, updates and retires a server, keeping its history', async () => {
    const created = await createServer(store.db, {
      name: 'orders',
      url: 'https://orders.example.com/mcp',
      headers: { Authorization: 'Bearer t0ken' },
      regions: ['eu-west'],
      intervalMs: 60_000,
      timeoutMs: 10_000,
      detectionIntervalMs: 900_000,
    });
    expect(created).toMatchObject({
      name: 'orders',
      regions: ['eu-west'],
      detectionIntervalMs: 900_000,
      source: 'api',
      retiredAt: null,
    });
    expect(await getServerByName(store.db, 'orders')).toEqual(created);
    expect(await getServer(store.db, created.id)).toEqual(created);
    expect((await listActiveServers(store.db)).map((s) => s.name)).toContain('orders');

    const updated = await updateServer(store.db, created.id, {
      url: 'https://orders.example.com/v2/mcp',
      regions: null,
      source: 'file',
    });
    expect(updated).toMatchObject({ url: 'https://orders.example.com/v2/mcp', regions: null, source: 'file' });
    expect(updated?.intervalMs).toBe(60_000);
    expect(updated!.headers).toEqual({ Authorization: 'Bearer t0ken' });
    expect(updated!.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());

    const test = await createTest(store.db, { serverId: created.id, mode: 'newest' });
    expect(await retireServer(store.db, created.id)).toBe(true);
    expect(await retireServer(store.db, created.id)).toBe(false);
    expect(await getServerByName(store.db, 'orders')).toBeNull();
    expect((await getServer(store.db, created.id))?.retiredAt).toBeInstanceOf(Date);
    expect((await getTest(store.db, test.id))?.retiredAt).toBeInstanceOf(Date);
    expect(await listActiveTests(store.db, created.id)).toEqual([]);
    expect(await updateServer(store.db, created.id, { intervalMs: 1 })).toBeNull();

    // The name is free again; the retired server keeps its id and rows.
    const again = await createServer(store.db, {
      name: 'orders',
      url: 'https://o.example.com',
      intervalMs: 1,
      timeoutMs: 1,
    });
    expect(again.id).not.toBe(created.id);
  });

  it('refuses a second active server with the same name without echoing its credentials', async () => {
    await createServer(store.db, { name: 'twice', url: 'https://a.example.com', intervalMs: 1, timeoutMs: 1 });
    const err = await createServer(store.db, {
      name: 'twice',
      url: 'https://b.example.com',
      headers: { Authorization: 'Bearer do-not-print-me' },
      intervalMs: 1,
      timeoutMs: 1,
    }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(DuplicateNameError);
    expect(err).toMatchObject({ code: '23505' });
    expect(String(err)).toContain('"twice"');
    expect(String(err)).not.toContain('do-not-print-me');
  });

  it('creates newest-supported and pinned tests, checks them, and retires them', async () => {
    const { server } = await serverWithTests(store.db, []);
    const newest = await createTest(store.db, { serverId: server.id, mode: 'newest' });
    const pinned = await createTest(store.db, { serverId: server.id, mode: 'pinned', pinnedRevision: '2025-06-18' });
    expect(newest).toMatchObject({ mode: 'newest', pinnedRevision: null, retiredAt: null });
    expect(pinned).toMatchObject({ mode: 'pinned', pinnedRevision: '2025-06-18' });

    await expect(createTest(store.db, { serverId: server.id, mode: 'pinned' })).rejects.toThrow(/known revision/);
    await expect(
      createTest(store.db, { serverId: server.id, mode: 'pinned', pinnedRevision: '2099-01-01' as never }),
    ).rejects.toThrow(/known revision/);
    await expect(
      createTest(store.db, { serverId: server.id, mode: 'newest', pinnedRevision: '2025-06-18' }),
    ).rejects.toThrow(/pins no revision/);

    const active = await listActiveTests(store.db, server.id);
    expect(active.map((t) => t.testId)).toEqual([newest.id, pinned.id]);
    expect(active[0]).toMatchObject({
      serverId: server.id,
      serverName: server.name,
      url: server.url,
      headers: { Authorization: 'Bearer s3cret-token' },
      regions: ['eu-west', 'us-east'],
      intervalMs: 60_000,
      timeoutMs: 10_000,
      detectionIntervalMs: null,
      currentRevisions: {},
    });

    expect(await retireTest(store.db, pinned.id)).toBe(true);
    expect(await retireTest(store.db, pinned.id)).toBe(false);
    expect((await listActiveTests(store.db, server.id)).map((t) => t.testId)).toEqual([newest.id]);
    expect(await getTest(store.db, '00000000-0000-0000-0000-000000000000')).toBeNull();

    await retireServer(store.db, server.id);
    await expect(createTest(store.db, { serverId: server.id, mode: 'newest' })).rejects.toThrow(/no active server/);
  });

  it('lists every active test with the revision it speaks per region, for the scheduler', async () => {
    const { server, tests } = await serverWithTests(store.db, ['newest']);
    const test = tests[0]!;
    await recordRun(store.db, resultOf(test, 'eu-west', minute(1), handshakeRun({ negotiated: '2026-07-28' })));
    await recordRun(store.db, resultOf(test, 'us-east', minute(1), handshakeRun({ negotiated: '2025-11-25' })));
    await recordRun(
      store.db,
      resultOf(test, 'ap-south', minute(1), handshakeRun({ negotiated: null, outcome: 'timeout' })),
    );

    const all = await listActiveTests(store.db);
    const mine = all.find((t) => t.testId === test.id);
    expect(mine?.currentRevisions).toEqual({ 'eu-west': '2026-07-28', 'us-east': '2025-11-25' });
    expect(all.every((t) => t.serverName)).toBe(true);
    expect((await getTestStates(store.db, test.id)).map((s) => [s.region, s.currentRevision, s.failing])).toEqual([
      ['ap-south', null, true],
      ['eu-west', '2026-07-28', false],
      ['us-east', '2025-11-25', false],
    ]);
    expect(server.retiredAt).toBeNull();
  });
});
