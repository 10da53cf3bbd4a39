// The scheduling lease on a real Postgres: two leases on one database, exactly one held; the other
// takes it when the holder's session dies (pg_terminate_backend, as a killed control's would) or
// when the holder stops; a holder whose session was lost schedules on until, back in touch, it sees
// the other holding. PGlite's control always holds it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@mcp-fleet/log';
import { openStore, type Store } from '@mcp-fleet/store';
import { createTestDatabase, type TestDatabase, testKeyring, waitFor } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Lease } from '../src/lease';

const log = createLogger('test', 'silent');
const POLL_MS = 100;

describe('the scheduling lease on Postgres', () => {
  let db: TestDatabase;
  let store: Store;
  const leases: Lease[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('mcpfleet_lease');
    store = await openStore({ databaseUrl: db.url, poolSize: 2, keyring: testKeyring() });
  });

  afterAll(async () => {
    await Promise.all(leases.map((l) => l.stop()));
    await store?.close();
    await db?.drop();
  });

  /** A lease as a control makes it, with every change it is told. */
  function lease(name: string) {
    const changes: boolean[] = [];
    const l = new Lease({
      open: () => store.openSession(),
      pollMs: () => POLL_MS,
      onChange: (held) => {
        changes.push(held);
      },
      log,
    });
    leases.push(l);
    return Object.assign(l, { name, changes });
  }

  /** The backends holding an advisory lock in this database (the leases' sessions). */
  async function holders(): Promise<number[]> {
    const client = (await store.openSession())!;
    try {
      const { rows } = await client.query<{ pid: number }>(
        `select pid from pg_locks where locktype = 'advisory' and granted
           and database = (select oid from pg_database where datname = current_database())`,
      );
      return rows.map((r) => r.pid);
    } finally {
      await client.end();
    }
  }

  async function terminate(pid: number): Promise<void> {
    const client = (await store.openSession())!;
    try {
      await client.query('select pg_terminate_backend($1)', [pid]);
    } finally {
      await client.end();
    }
  }

  it('is held by exactly one; when the holder session dies, a live session holds it again, and only one', async () => {
    const a = lease('a');
    const b = lease('b');
    await a.start();
    await b.start();
    expect([a.held, b.held]).toEqual([true, false]);
    expect(a.changes).toEqual([true]);
    expect(b.changes).toEqual([false]);
    // Tries go on: still one holder after several of them.
    await new Promise((r) => setTimeout(r, POLL_MS * 4));
    expect([a.held, b.held]).toEqual([true, false]);
    const [pid, ...more] = await holders();
    expect(more).toEqual([]);

    const killedAt = Date.now();
    await terminate(pid!);
    // Whoever asks first after the session died holds it: b, or a on its new session (under load a
    // can reconnect before b's next try). Never both, and never the dead session.
    const [newPid, ...others] = await waitFor(
      'the lock held again by a live session',
      async () => {
        const now = await holders();
        return now.length > 0 && now[0] !== pid ? now : undefined;
      },
      20_000,
    );
    const takeoverMs = Date.now() - killedAt;
    await waitFor('exactly one holder', async () => (a.held !== b.held ? true : undefined), 20_000);
    expect(others).toEqual([]);
    expect(newPid).not.toBe(pid);
    console.log(`[lease] takeover after pg_terminate_backend: ${takeoverMs} ms (poll ${POLL_MS} ms)`);
    // Generous: a loaded CI machine; the figure itself is printed above and measured in control-ha.
    expect(takeoverMs).toBeLessThan(20_000);
  });

  it('passes to the other when the holder stops', async () => {
    const [a, b] = leases as (Lease & { changes: boolean[] })[];
    const holder = a!.held ? a! : b!;
    const other = holder === a ? b! : a!;
    await holder.stop();
    expect(holder.held).toBe(false);
    await waitFor('the other to take it', async () => other.held || undefined, 20_000);
    expect((await holders()).length).toBe(1);
  });

  it('a holder keeps it while its session is alive: no second holder under many tries', async () => {
    const c = lease('c');
    await c.start();
    await new Promise((r) => setTimeout(r, POLL_MS * 5));
    expect(leases.filter((l) => l.held).length).toBe(1);
    expect(c.held).toBe(false);
  });
});

describe('the scheduling lease on PGlite', () => {
  it('is always held: one process, nobody to share it with', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-lease-'));
    const store = await openStore({ dataDir: join(dir, 'pgdata'), keyring: null });
    try {
      const changes: boolean[] = [];
      const l = new Lease({
        open: () => store.openSession(),
        pollMs: () => POLL_MS,
        onChange: (h) => void changes.push(h),
        log,
      });
      await l.start();
      expect(l.held).toBe(true);
      await l.stop();
      expect(changes).toEqual([true, false]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
