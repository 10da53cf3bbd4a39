// The surface reads: what a server offers now per region and era, the change history (filters,
// newest first, keyset pages), the breaking-change count of a range and one blob by hash. Rows are
// written directly with drizzle, as ingest would after a surface run; blob bodies are valid Surfaces.
import { createHash } from 'node:crypto';
import type { Surface, SurfaceChange } from '@mcp-fleet/probe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  breakingChangeCount,
  breakingChangesByServer,
  listSurfaceChanges,
  type Server,
  type Store,
  SurfaceCursorError,
  surfaceBlob,
  surfaceBlobs,
  surfaceChange,
  surfaceChanges,
  surfaceHeads,
  surfaceNow,
  type Test,
} from '../src';
import { BACKENDS } from './backends';
import { serverWithTests } from './fixtures';

const MIN = 60_000;

function surface(era: 'legacy' | 'modern', tools: Surface['tools'], extra: Partial<Surface> = {}): Surface {
  return {
    era,
    revision: era === 'modern' ? '2026-07-28' : '2025-06-18',
    serverInfo: { name: 'orders', version: '1.0.0' },
    capabilities: { tools: { listChanged: true } },
    tools,
    resources: [],
    resourceTemplates: [],
    prompts: [],
    truncated: false,
    ...extra,
  };
}

const createOrder = (required: string[]): Surface['tools'][number] => ({
  name: 'create_order',
  description: 'Create an order',
  inputSchema: {
    type: 'object',
    properties: { sku: { type: 'string' }, currency: { type: 'string' } },
    required,
  },
  annotations: { readOnlyHint: false, destructiveHint: false },
});

describe.each(BACKENDS)('surface reads on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  let alpha: Server;
  let bravo: Server;
  let alphaTest: Test;
  let bravoTest: Test;
  const now = Date.now();
  const ago = (minutes: number) => new Date(now - minutes * MIN);
  const hashes: Record<string, string> = {};

  async function blob(key: string, s: Surface, stored: unknown = s) {
    const body = JSON.stringify(s);
    const hash = createHash('sha256').update(body).digest('hex');
    hashes[key] = hash;
    await store.db
      .insert(surfaceBlobs)
      .values({ hash, body: stored, bytes: body.length, truncated: s.truncated })
      .onConflictDoNothing();
    return hash;
  }

  async function change(
    server: Server,
    test: Test,
    region: string,
    at: Date,
    c: SurfaceChange,
    from = hashes.v1!,
    to = hashes.v2!,
  ) {
    await store.db.insert(surfaceChanges).values({
      serverId: server.id,
      testId: test.id,
      region,
      era: 'modern',
      runId: null,
      ...c,
      fromHash: from,
      toHash: to,
      at,
    });
  }

  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
    const db = store.db;
    const A = await serverWithTests(db, ['newest'], { name: 'alpha' });
    const B = await serverWithTests(db, ['newest'], { name: 'bravo', regions: ['eu-west'] });
    [alpha, bravo] = [A.server, B.server];
    [alphaTest, bravoTest] = [A.tests[0]!, B.tests[0]!];

    const v1 = await blob('v1', surface('modern', [createOrder(['sku'])]));
    const v2 = await blob('v2', surface('modern', [createOrder(['sku', 'currency'])]));
    const legacy = await blob(
      'legacy',
      surface('legacy', [createOrder(['sku'])], {
        truncated: true,
        prompts: [{ name: 'summarise', arguments: [{ name: 'text', required: true }] }],
      }),
    );
    // alpha: modern in eu-west (changed 30 min ago) and us-east (not yet), legacy in eu-west.
    await db.insert(surfaceHeads).values([
      {
        serverId: alpha.id,
        region: 'eu-west',
        era: 'modern',
        revision: '2026-07-28',
        hash: v2,
        since: ago(30),
        lastSeenAt: ago(1),
      },
      {
        serverId: alpha.id,
        region: 'us-east',
        era: 'modern',
        revision: '2026-07-28',
        hash: v1,
        since: ago(300),
        lastSeenAt: ago(2),
      },
      {
        serverId: alpha.id,
        region: 'eu-west',
        era: 'legacy',
        revision: '2025-06-18',
        hash: legacy,
        since: ago(400),
        lastSeenAt: ago(3),
      },
    ]);

    await change(alpha, alphaTest, 'eu-west', ago(30), {
      severity: 'breaking',
      kind: 'tool',
      name: 'create_order',
      change: 'required_added',
      message: 'tool `create_order`: parameter `currency` now required',
      path: 'inputSchema.required',
    });
    // Two changes at the same instant: id breaks the tie.
    await change(alpha, alphaTest, 'eu-west', ago(20), {
      severity: 'warning',
      kind: 'tool',
      name: 'create_order',
      change: 'annotation_changed',
      message: 'tool `create_order`: readOnlyHint now true',
    });
    await change(alpha, alphaTest, 'eu-west', ago(20), {
      severity: 'info',
      kind: 'prompt',
      name: 'summarise',
      change: 'added',
      message: 'prompt `summarise` added',
    });
    await change(bravo, bravoTest, 'eu-west', ago(10), {
      severity: 'breaking',
      kind: 'resource',
      name: 'file:///orders.csv',
      change: 'removed',
      message: 'resource `file:///orders.csv` removed',
    });
    await change(bravo, bravoTest, 'eu-west', ago(60 * 48), {
      severity: 'breaking',
      kind: 'capability',
      name: 'prompts',
      change: 'removed',
      message: 'capability `prompts` removed',
    });
  });

  afterAll(() => backend.dispose());

  it('gives what a server offers now per region and era, modern first, with the surface itself', async () => {
    const now = await surfaceNow(store.db, alpha.id);
    expect(now.map((s) => [s.era, s.region, s.hash])).toEqual([
      ['modern', 'eu-west', hashes.v2],
      ['modern', 'us-east', hashes.v1],
      ['legacy', 'eu-west', hashes.legacy],
    ]);
    const [euModern, , legacy] = now;
    expect(euModern!.surface.tools[0]!.inputSchema).toEqual(createOrder(['sku', 'currency']).inputSchema);
    expect(euModern!.since).toEqual(ago(30));
    expect(euModern!.lastSeenAt).toEqual(ago(1));
    expect(euModern!.truncated).toBe(false);
    expect(legacy!.truncated).toBe(true);
    expect(legacy!.surface.truncated).toBe(true);
    expect(legacy!.surface.prompts).toEqual([{ name: 'summarise', arguments: [{ name: 'text', required: true }] }]);
    expect(await surfaceNow(store.db, bravo.id)).toEqual([]);
    // Not a uuid (a hostile path segment): nothing, not a database error.
    expect(await surfaceNow(store.db, "x' or 1=1 --")).toEqual([]);
  });

  it('lists changes newest first, id breaking ties, with the server name', async () => {
    const { changes, next } = await listSurfaceChanges(store.db, { limit: 10 });
    expect(changes.map((c) => [c.serverName, c.severity, c.kind])).toEqual([
      ['bravo', 'breaking', 'resource'],
      ['alpha', 'info', 'prompt'],
      ['alpha', 'warning', 'tool'],
      ['alpha', 'breaking', 'tool'],
      ['bravo', 'breaking', 'capability'],
    ]);
    expect(next).toBeNull();
    expect(changes[3]).toMatchObject({
      serverId: alpha.id,
      region: 'eu-west',
      era: 'modern',
      message: 'tool `create_order`: parameter `currency` now required',
      path: 'inputSchema.required',
      fromHash: hashes.v1,
      toHash: hashes.v2,
    });
  });

  it('filters by server, range, severity, kind and region', async () => {
    const messages = async (f: Parameters<typeof listSurfaceChanges>[1]) =>
      (await listSurfaceChanges(store.db, f)).changes.map((c) => c.name);
    expect(await messages({ serverId: alpha.id, limit: 10 })).toEqual(['summarise', 'create_order', 'create_order']);
    expect(await messages({ severity: 'breaking', limit: 10 })).toEqual([
      'file:///orders.csv',
      'create_order',
      'prompts',
    ]);
    expect(await messages({ severity: 'breaking', since: ago(60 * 24), limit: 10 })).toEqual([
      'file:///orders.csv',
      'create_order',
    ]);
    // until is exclusive: the change at exactly ago(20) is out.
    expect(await messages({ since: ago(60), until: ago(20), limit: 10 })).toEqual(['create_order']);
    expect(await messages({ kind: 'prompt', limit: 10 })).toEqual(['summarise']);
    expect(await messages({ region: 'us-east', limit: 10 })).toEqual([]);
    // Values no caller should send match nothing, and are not an error.
    expect(await messages({ severity: 'fatal' as 'breaking', limit: 10 })).toEqual([]);
    expect(await messages({ kind: 'tools; drop table' as 'tool', limit: 10 })).toEqual([]);
    expect(await messages({ serverId: 'not-a-uuid', limit: 10 })).toEqual([]);
  });

  it('pages by cursor without losing or repeating a change, ties included', async () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listSurfaceChanges(store.db, { limit: 2, cursor });
      seen.push(...page.changes.map((c) => c.id));
      cursor = page.next ?? undefined;
      pages += 1;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    const all = (await listSurfaceChanges(store.db, { limit: 10 })).changes.map((c) => c.id);
    expect(seen).toEqual(all);
    // A page with a filter keeps it on the next page.
    const first = await listSurfaceChanges(store.db, { serverId: alpha.id, limit: 1 });
    const second = await listSurfaceChanges(store.db, { serverId: alpha.id, limit: 5, cursor: first.next! });
    expect(second.changes.map((c) => c.serverName)).toEqual(['alpha', 'alpha']);
    expect(second.next).toBeNull();
  });

  it('gives one change by id, null for an unknown or odd id', async () => {
    const [newest] = (await listSurfaceChanges(store.db, { limit: 1 })).changes;
    expect(await surfaceChange(store.db, newest!.id)).toEqual(newest);
    expect(await surfaceChange(store.db, 987_654)).toBeNull();
    expect(await surfaceChange(store.db, Number.NaN)).toBeNull();
    expect(await surfaceChange(store.db, -1)).toBeNull();
  });

  it('refuses a cursor it did not give', async () => {
    await expect(listSurfaceChanges(store.db, { limit: 5, cursor: 'bm90LWEtY3Vyc29y' })).rejects.toThrow(
      SurfaceCursorError,
    );
  });

  it('counts breaking changes in a range, for the fleet and per server', async () => {
    expect(await breakingChangeCount(store.db, { since: ago(60 * 24) })).toBe(2);
    expect(await breakingChangeCount(store.db, { since: ago(60 * 24 * 7) })).toBe(3);
    expect(await breakingChangeCount(store.db, { since: ago(60 * 24), until: ago(15) })).toBe(1);
    expect(await breakingChangeCount(store.db, { since: ago(60 * 24), serverId: bravo.id })).toBe(1);
    expect(await breakingChangeCount(store.db, { since: ago(5) })).toBe(0);
    const byServer = await breakingChangesByServer(store.db, { since: ago(60 * 24 * 7) });
    expect(Object.fromEntries(byServer)).toEqual({ [alpha.id]: 1, [bravo.id]: 2 });
  });

  it('gives a blob by hash, null for an unknown or malformed hash', async () => {
    const v2 = await surfaceBlob(store.db, hashes.v2!);
    expect(v2).toEqual(surface('modern', [createOrder(['sku', 'currency'])]));
    expect(await surfaceBlob(store.db, 'f'.repeat(64))).toBeNull();
    expect(await surfaceBlob(store.db, "'; select 1")).toBeNull();
  });

  it('reads a malformed stored body as an empty surface, not a crash', async () => {
    const odd = await blob('odd', surface('legacy', []), { tools: 'nope', prompts: [null, { name: 7 }], era: 3 });
    const s = await surfaceBlob(store.db, odd);
    expect(s).toMatchObject({ tools: [], prompts: [], resources: [], resourceTemplates: [], capabilities: {} });
    expect(s!.serverInfo).toBeNull();
  });
});
