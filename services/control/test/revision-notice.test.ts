// The revision a job carries, kept by the scheduling control from the database's notices
// (migration 0012, docs/control-replicas.md): a run written by another control's ingest — here
// straight into the store, as that control's transaction would — moves the revision this control's
// next jobs carry, without this control reading anything back per tick. A notice not in the
// trigger's shape moves nothing. Real parts: Postgres, the in-process bus, a real control.
import { createMemoryBus, type Job } from '@mcp-fleet/bus';
import { createLogger } from '@mcp-fleet/log';
import { listActiveTests, openStore, recordRun, type Store } from '@mcp-fleet/store';
import { handshakeRun, resultOf } from '@mcp-fleet/store/testing';
import { createTestDatabase, LOOPBACK_FLOOR, type TestDatabase, testKeyring, waitFor } from '@mcp-fleet/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Control, parseFleet, startControl } from '../src';

const FLEET = `regions: [eu-west]
defaults: { interval: 1s, timeout: 500ms }
servers:
  - { name: moving, url: "http://127.0.0.1:9/mcp", tests: [{ revision: newest }] }
policy: { allow: ["127.0.0.0/8"] }
`;

describe('the revision jobs carry, told by the database', () => {
  let db: TestDatabase;
  let store: Store;
  let control: Control;
  const bus = createMemoryBus({ log: createLogger('test', 'silent') });
  const jobs: Job[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('mcpfleet_revision_jobs');
    store = await openStore({ databaseUrl: db.url, keyring: testKeyring() });
    await store.migrate();
    control = await startControl({
      store,
      bus,
      log: createLogger('test', 'silent'),
      fleet: parseFleet(FLEET, 'revision-notice'),
      port: 0,
      probeFloor: LOOPBACK_FLOOR,
      leasePollMs: 100,
    });
    // The test is the region's agent: it takes every job and runs none.
    bus.consumeJobs(
      'eu-west',
      async (d) => {
        jobs.push(d.value);
        await d.ack();
      },
      { concurrency: 4 },
    );
  });

  afterAll(async () => {
    await control?.stop();
    await bus.close();
    await store?.close();
    await db?.drop();
  });

  const latest = () => jobs.at(-1)?.currentRevision;

  it("carries a move another control's ingest wrote, from the next job on", async () => {
    await waitFor('a first job', () => jobs.length > 0, 10_000);
    expect(latest()).toBeNull();
    const [test] = await listActiveTests(store.db);
    const written = { id: test!.testId, serverId: test!.serverId } as Parameters<typeof resultOf>[0];
    await recordRun(store.db, resultOf(written, 'eu-west', new Date(), handshakeRun({ negotiated: '2025-11-25' })));
    await waitFor('a job at 2025-11-25', () => latest() === '2025-11-25', 10_000);
    await recordRun(
      store.db,
      resultOf(written, 'eu-west', new Date(Date.now() + 1), handshakeRun({ negotiated: '2026-07-28' })),
    );
    await waitFor('a job at 2026-07-28', () => latest() === '2026-07-28', 10_000);

    // Trust boundary: any session on the database may NOTIFY on the channel.
    for (const hostile of [`${test!.testId}|eu-west|2099-01-01`, 'garbage', `${test!.testId}|eu-west`])
      await store.db.execute(sql`select pg_notify('mcp_fleet_revision_moved', ${hostile})`);
    const seen = jobs.length;
    await waitFor('two more jobs', () => jobs.length >= seen + 2, 10_000);
    expect(latest()).toBe('2026-07-28');
  });
});
