// A test's current revision told as it moves (migration 0012's trigger, revision-notice.ts): a
// session LISTENing on the channel, as the scheduling control's lease session does, hears each move
// and each region's first revision once its transaction commits — from either ingest path — and
// nothing for the runs that move nothing. And a hostile NOTIFY on the channel is not a move.
import { createTestDatabase, type TestDatabase, testKeyring, waitFor } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openStore,
  parseRevisionMoved,
  REVISION_MOVED_CHANNEL,
  recordRun,
  recordRuns,
  type SessionConnection,
  type Store,
} from '../src';
import { handshakeRun, minute, resultOf, serverWithTests } from './fixtures';

describe('revision moves told on Postgres', () => {
  let db: TestDatabase;
  let store: Store;
  let session: SessionConnection;
  const heard: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('mcpfleet_revision_notice');
    store = await openStore({ databaseUrl: db.url, keyring: testKeyring() });
    await store.migrate();
    session = (await store.openSession())!;
    session.on('notification', (msg) => {
      if (msg.channel === REVISION_MOVED_CHANNEL) heard.push(msg.payload ?? '');
    });
    await session.query(`listen ${REVISION_MOVED_CHANNEL}`);
  });

  afterAll(async () => {
    await session?.end();
    await store?.close();
    await db?.drop();
  });

  it('tells a first revision and each move, from the batch and the one-run paths, and nothing else', async () => {
    const { tests } = await serverWithTests(store.db, ['newest', '2025-03-26']);
    const [newest, pinned] = tests as [NonNullable<(typeof tests)[0]>, NonNullable<(typeof tests)[0]>];
    // First runs in two regions, written by the batch path (one insert for both).
    await recordRuns(store.db, [
      resultOf(newest, 'eu-west', minute(1), handshakeRun({ negotiated: '2025-11-25' })),
      resultOf(newest, 'us-east', minute(1), handshakeRun({ negotiated: '2025-11-25' })),
    ]);
    await waitFor('the first revisions', () => heard.length >= 2, 5_000);
    expect(heard.sort()).toEqual([`${newest.id}|eu-west|2025-11-25`, `${newest.id}|us-east|2025-11-25`]);
    heard.length = 0;

    // Runs that move nothing (the same revision; a pin failing keeps its revision): silence.
    await recordRuns(store.db, [resultOf(newest, 'eu-west', minute(2), handshakeRun({ negotiated: '2025-11-25' }))]);
    await recordRun(store.db, resultOf(pinned, 'eu-west', minute(1), handshakeRun({ negotiated: '2025-03-26' })));
    await waitFor("the pin's first revision", () => heard.length >= 1, 5_000);
    expect(heard).toEqual([`${pinned.id}|eu-west|2025-03-26`]);
    heard.length = 0;
    await recordRun(
      store.db,
      resultOf(
        pinned,
        'eu-west',
        minute(2),
        handshakeRun({ mode: 'pinned', negotiated: null, outcome: 'unsupported_version', message: 'gone' }),
      ),
    );

    // A move (an era move, on the one-run path): told once, after its commit.
    await recordRun(store.db, resultOf(newest, 'eu-west', minute(3), handshakeRun({ negotiated: '2026-07-28' })));
    await waitFor('the move', () => heard.length >= 1, 5_000);
    // A notice sent after the move would have arrived by now: the quiet runs above sent none.
    await session.query('select 1');
    expect(heard).toEqual([`${newest.id}|eu-west|2026-07-28`]);
    expect(parseRevisionMoved(heard[0]!)).toEqual({ testId: newest.id, region: 'eu-west', revision: '2026-07-28' });
  });

  it('a move rolled back is never told', async () => {
    heard.length = 0;
    const { tests } = await serverWithTests(store.db, ['newest']);
    const test = tests[0]!;
    await recordRun(store.db, resultOf(test, 'eu-west', minute(1), handshakeRun({ negotiated: '2025-11-25' })));
    await waitFor('the first revision', () => heard.length >= 1, 5_000);
    heard.length = 0;
    await store.db
      .transaction(async (tx) => {
        await recordRun(tx, resultOf(test, 'eu-west', minute(2), handshakeRun({ negotiated: '2026-07-28' })));
        throw new Error('rolled back');
      })
      .catch(() => {});
    await session.query('select 1');
    await new Promise((r) => setTimeout(r, 200));
    expect(heard).toEqual([]);
  });
});

describe('a notice on the channel, as anyone may send one', () => {
  const id = '3f2b0c1e-7a7d-4c59-9d6e-0b6f1e2a9c41';
  it('is a move only in the shape the trigger writes, with a known revision', () => {
    expect(parseRevisionMoved(`${id}|eu-west|2025-06-18`)).toEqual({
      testId: id,
      region: 'eu-west',
      revision: '2025-06-18',
    });
    for (const hostile of [
      '',
      `${id}|eu-west`,
      `${id}|eu-west|2025-06-18|extra`,
      `${id}|eu-west|2099-01-01`,
      `not-a-uuid|eu-west|2025-06-18`,
      `${id}|EU WEST|2025-06-18`,
      `${id}|${'r'.repeat(300)}|2025-06-18`,
      `${id}|eu-west|__proto__`,
    ])
      expect(parseRevisionMoved(hostile), hostile).toBeNull();
  });
});
