// The periodic read of the schedule (schedule.ts): every 30 s control compares the fleet's
// fingerprint and reads the schedule only when it moved, so a change made behind its back (by
// hand, or by another control whose notice was lost) is scheduled, and a steady fleet is not
// re-read. Real parts: an embedded store and the in-process bus.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryBus } from '@mcp-fleet/bus';
import { createLogger } from '@mcp-fleet/log';
import { createServer, createTest, openStore, type Store } from '@mcp-fleet/store';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createControlMetrics } from '../src/metrics';
import { Schedule } from '../src/schedule';

let dir: string;
let store: Store;
let schedule: Schedule;
let reads = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-schedule-'));
  store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  const log = createLogger('test', 'silent');
  const metrics = createControlMetrics({ poison: () => 0, agentsSeen: async () => [] });
  // Count full reads through the entries gauge the read sets.
  const set = metrics.entries.set.bind(metrics.entries);
  metrics.entries.set = ((v: number) => {
    reads++;
    set(v);
  }) as typeof metrics.entries.set;
  schedule = new Schedule({
    db: store.db,
    bus: createMemoryBus({ log }),
    log,
    metrics,
    regions: () => ['eu-west'],
    policy: () => ({ allow: ['127.0.0.0/8'], deny: [] }),
  });
});

afterAll(async () => {
  schedule?.stop();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the periodic read of the schedule', () => {
  it('reads again only when the fleet moved, and schedules a change made by hand', async () => {
    const server = await createServer(store.db, {
      name: 'orders',
      url: 'http://127.0.0.1:9/mcp',
      headers: {},
      regions: null,
      intervalMs: 60_000,
      timeoutMs: 10_000,
    });
    await createTest(store.db, { serverId: server.id, mode: 'newest' });
    await schedule.reload();
    expect(schedule.scheduler.size).toBe(1);
    const before = reads;

    await schedule.reloadIfChanged();
    await schedule.reloadIfChanged();
    expect(reads).toBe(before);

    // By hand: a pinned test appears without any control's API or notice.
    await store.db.execute(
      sql`insert into tests (server_id, mode, pinned_revision) values (${server.id}, 'pinned', '2025-03-26')`,
    );
    await schedule.reloadIfChanged();
    expect(reads).toBe(before + 1);
    expect(schedule.scheduler.size).toBe(2);

    // And retired by hand: off the schedule at the next comparison.
    await store.db.execute(sql`update tests set retired_at = now() where mode = 'pinned'`);
    await schedule.reloadIfChanged();
    expect(schedule.scheduler.size).toBe(1);
  });
});
