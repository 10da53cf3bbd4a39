// Surface ingest in the store, on both databases: first sight is a head and no change; a new hash
// is diffed into classified changes and moves the head; the same hash only refreshes it; a late
// run or another depth's test moves nothing; retention keeps every blob something refers to.
import { type Surface, snapshotOf } from '@mcp-fleet/probe';
import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTest,
  pruneRuns,
  pruneSurfaceBlobs,
  recordRun,
  runs,
  type Store,
  SurfaceRefusedError,
  surfaceBlobs,
  surfaceChanges,
  surfaceHeads,
} from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, resultOf, serverWithTests } from './fixtures';

const base: Surface = {
  era: 'legacy',
  revision: '2025-06-18',
  serverInfo: { name: 'orders', version: '1.0.0' },
  capabilities: { tools: {} },
  tools: [
    {
      name: 'create_order',
      description: 'Creates an order.',
      inputSchema: {
        type: 'object',
        properties: { sku: { type: 'string' }, currency: { type: 'string' } },
        required: ['sku'],
      },
      annotations: { readOnlyHint: false },
    },
  ],
  resources: [],
  resourceTemplates: [],
  prompts: [],
  truncated: false,
};
const changed: Surface = {
  ...base,
  tools: [
    { ...base.tools[0]!, inputSchema: { ...(base.tools[0]!.inputSchema as object), required: ['sku', 'currency'] } },
    { name: 'list_orders', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  ],
};

describe.each(BACKENDS)('surface ingest on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  const at = (minutes: number) => new Date(Date.UTC(2026, 11, 1, 12, minutes));
  const surfaceTest = async () => {
    const { server } = await serverWithTests(store.db, []);
    return createTest(store.db, { serverId: server.id, mode: 'newest', depth: 'surface' });
  };
  const withSurfaces = (r: ReturnType<typeof resultOf>, ...surfaces: Surface[]) => ({
    ...r,
    surfaces: surfaces.map(snapshotOf),
  });

  it('first sight, a change, the same again, a late run: heads, changes and references', async () => {
    const test = await surfaceTest();
    const first = await recordRun(store.db, withSurfaces(resultOf(test, 'eu-west', at(0)), base));
    expect(first).toMatchObject({ duplicate: false, surfaceChanges: [] });
    const second = await recordRun(store.db, withSurfaces(resultOf(test, 'eu-west', at(5)), changed));
    if (second.duplicate) throw new Error('a duplicate');
    expect(second.surfaceChanges.map((c) => `${c.severity} ${c.kind} ${c.name} ${c.change}`).sort()).toEqual([
      'breaking tool create_order required_added',
      'info tool list_orders added',
    ]);
    const rows = await store.db.select().from(surfaceChanges).where(eq(surfaceChanges.testId, test.id));
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.runId === second.runId && r.era === 'legacy' && r.region === 'eu-west')).toBe(true);
    expect(rows[0]!.at.toISOString()).toBe(at(5).toISOString());
    const [run] = await store.db.select().from(runs).where(eq(runs.id, second.runId));
    expect(run!.surfaces).toEqual([{ era: 'legacy', revision: '2025-06-18', hash: snapshotOf(changed).hash }]);

    // The same again: the head is refreshed, nothing recorded.
    const third = await recordRun(store.db, withSurfaces(resultOf(test, 'eu-west', at(10)), changed));
    expect(third).toMatchObject({ surfaceChanges: [] });
    // A late run of an older slot with the old surface: kept, but the head does not go back.
    const late = await recordRun(store.db, withSurfaces(resultOf(test, 'eu-west', at(3)), base));
    expect(late).toMatchObject({ stale: true, surfaceChanges: [] });
    const [head] = await store.db.select().from(surfaceHeads).where(eq(surfaceHeads.serverId, test.serverId));
    expect(head).toMatchObject({ hash: snapshotOf(changed).hash, since: at(5), lastSeenAt: at(10) });
    expect(await store.db.select().from(surfaceChanges).where(eq(surfaceChanges.testId, test.id))).toHaveLength(2);
    // The same content is one blob, however many runs refer to it.
    const blobs = await store.db
      .select()
      .from(surfaceBlobs)
      .where(inArray(surfaceBlobs.hash, [snapshotOf(base).hash, snapshotOf(changed).hash]));
    expect(blobs).toHaveLength(2);
  });

  it('a handshake test carrying surfaces files none; a forged snapshot is refused before anything is written', async () => {
    const { tests } = await serverWithTests(store.db);
    const r = withSurfaces(resultOf(tests[0]!, 'eu-west', at(0)), base);
    const answer = await recordRun(store.db, r);
    if (answer.duplicate) throw new Error('a duplicate');
    const [run] = await store.db.select().from(runs).where(eq(runs.id, answer.runId));
    expect(run!.surfaces).toBeNull();
    expect(await store.db.select().from(surfaceHeads).where(eq(surfaceHeads.serverId, tests[0]!.serverId))).toEqual([]);

    const test = await surfaceTest();
    const forged = resultOf(test, 'eu-west', at(0), handshakeRun());
    const good = snapshotOf(base);
    await expect(
      recordRun(store.db, { ...forged, surfaces: [{ ...good, hash: snapshotOf(changed).hash }] }),
    ).rejects.toThrow(SurfaceRefusedError);
    await expect(recordRun(store.db, { ...forged, surfaces: [{ ...good, body: '{"era":1}' }] })).rejects.toThrow(
      /surfaces\[0\]/,
    );
    expect(await store.db.select().from(runs).where(eq(runs.jobId, forged.jobId))).toEqual([]);
  });

  it('retention deletes a blob nothing refers to, and keeps heads, changes and kept runs', async () => {
    const test = await surfaceTest();
    const orphan: Surface = { ...base, serverInfo: { name: 'orphan', version: '9' } };
    const r = await recordRun(store.db, withSurfaces(resultOf(test, 'us-east', at(0)), base));
    const o = await recordRun(store.db, withSurfaces(resultOf(test, 'us-east', at(5)), orphan));
    await recordRun(store.db, withSurfaces(resultOf(test, 'us-east', at(10)), base));
    if (r.duplicate || o.duplicate) throw new Error('a duplicate');
    // The orphan's run goes; its blob is still the from/to of two changes: kept.
    await store.db.update(runs).set({ receivedAt: sql`now() - interval '60 days'` }).where(eq(runs.id, o.runId));
    await pruneRuns(store.db, { receivedBefore: new Date(Date.now() - 30 * 86_400_000) });
    await pruneSurfaceBlobs(store.db);
    const hashes = async () =>
      (await store.db.select({ hash: surfaceBlobs.hash }).from(surfaceBlobs)).map((b) => b.hash);
    expect(await hashes()).toContain(snapshotOf(orphan).hash);
    // Without its changes, nothing refers to it: it goes; the head's blob stays.
    await store.db.delete(surfaceChanges).where(eq(surfaceChanges.testId, test.id));
    expect(await pruneSurfaceBlobs(store.db)).toBeGreaterThanOrEqual(1);
    expect(await hashes()).not.toContain(snapshotOf(orphan).hash);
    expect(await hashes()).toContain(snapshotOf(base).hash);
  });
});
