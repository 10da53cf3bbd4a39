// Retention on both databases: runs, detections and agents are pruned by when control received
// them (the database's clock), never by an agent's own times; each server's newest detection, era
// moves and test states stay; a pruned run leaves no dangling reference (checked in SQL); and a
// database from before (old retention's dangling references, a future finished_at) migrates cleanly.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq, inArray, type SQL, sql } from 'drizzle-orm';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agents,
  detections,
  eraMoves,
  eraMovesList,
  getTestStates,
  latestDetection,
  listAgents,
  MIGRATIONS_DIR,
  pruneAgents,
  pruneDetections,
  pruneHistory,
  pruneRuns,
  recordDetection,
  recordRun,
  retentionCutoffs,
  runs,
  type Store,
  upsertAgentHeartbeat,
} from '../src';
import { BACKENDS, type Backend } from './backends';
import { handshakeRun, resultOf, serverWithTests } from './fixtures';

const DAY_MS = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY_MS);
/** A skewed agent's clock: decades off either way. */
const FAR_PAST = new Date(Date.UTC(2001, 0, 1));
const FAR_FUTURE = new Date(Date.UTC(2100, 0, 1));

/** Rows of a query, on either driver. */
async function rows<T>(store: Store, query: SQL): Promise<T[]> {
  return ((await store.db.execute(query)) as unknown as { rows: T[] }).rows;
}

/** References to runs that no longer exist. */
async function dangling(store: Store): Promise<{ moves: number; states: number }> {
  const [row] = await rows<{ moves: number; states: number }>(
    store,
    sql`select
      (select count(*)::int from era_moves m where m.run_id is not null
        and not exists (select 1 from runs r where r.id = m.run_id)) as moves,
      (select count(*)::int from test_states s where s.last_run_id is not null
        and not exists (select 1 from runs r where r.id = s.last_run_id)) as states`,
  );
  return row!;
}

/** As if control had received these runs `days` days ago. */
async function receivedDaysAgo(store: Store, ids: number[], days: number): Promise<void> {
  await store.db
    .update(runs)
    .set({ receivedAt: sql`now() - make_interval(days => ${days})` })
    .where(inArray(runs.id, ids));
}

describe.each(BACKENDS)('retention on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  const idOf = (answer: Awaited<ReturnType<typeof recordRun>>) => {
    if (answer.duplicate) throw new Error('a duplicate');
    return answer.runId;
  };

  it('keys runs on when control wrote them, not on a skewed agent’s finished_at', async () => {
    const { tests } = await serverWithTests(store.db);
    const test = tests[0]!;
    // A skewed agent reports runs finished decades ago and decades ahead; a sane one, now.
    const past = idOf(await recordRun(store.db, resultOf(test, 'eu-west', FAR_PAST)));
    const future = idOf(await recordRun(store.db, resultOf(test, 'us-east', FAR_FUTURE)));
    const now = idOf(await recordRun(store.db, resultOf(test, 'eu-west', new Date())));
    // Each was received now, whatever it says: the database set received_at.
    const received = await rows<{ id: number; fresh: boolean }>(
      store,
      sql`select id::int, received_at > now() - interval '1 minute' and received_at <= now() as fresh
          from runs where id in (${past}, ${future}, ${now}) order by id`,
    );
    expect(received).toEqual([
      { id: past, fresh: true },
      { id: future, fresh: true },
      { id: now, fresh: true },
    ]);
    const ids = () =>
      store.db
        .select({ id: runs.id })
        .from(runs)
        .where(inArray(runs.id, [past, future, now]));

    // A 30-day retention keeps all three: the one "finished" in 2001 was received just now.
    expect(await pruneRuns(store.db, { receivedBefore: daysAgo(30) })).toBe(0);
    expect(await ids()).toHaveLength(3);

    // Forty days on (by control's clock), the one "finishing" in 2100 goes like any other.
    await receivedDaysAgo(store, [future, now], 40);
    expect(await pruneRuns(store.db, { receivedBefore: daysAgo(30) })).toBe(2);
    expect((await ids()).map((r) => r.id)).toEqual([past]);
  });

  it('prunes in batches until every old run is gone', async () => {
    const { tests } = await serverWithTests(store.db);
    const made: number[] = [];
    for (let i = 0; i < 5; i++) made.push(idOf(await recordRun(store.db, resultOf(tests[0]!, 'eu-west', new Date()))));
    await receivedDaysAgo(store, made, 31);
    expect(await pruneRuns(store.db, { receivedBefore: daysAgo(30), batchSize: 2 })).toBe(5);
    expect(await pruneRuns(store.db, { receivedBefore: daysAgo(30), batchSize: 2 })).toBe(0);
  });

  it('a pruned run leaves no dangling reference; its era moves and test state stay and still read', async () => {
    const { server, tests } = await serverWithTests(store.db);
    const test = tests[0]!;
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
    const made = [
      idOf(await recordRun(store.db, resultOf(test, 'eu-west', at(3), handshakeRun({ negotiated: '2025-06-18' })))),
      idOf(await recordRun(store.db, resultOf(test, 'eu-west', at(2), handshakeRun({ negotiated: '2026-07-28' })))),
      idOf(await recordRun(store.db, resultOf(test, 'eu-west', at(1), handshakeRun({ negotiated: '2025-11-25' })))),
    ];
    // Each move is one run old (pending, the second superseded): the raw history has them both.
    const moves = () => eraMovesList(store.db, { serverId: server.id, limit: 10, view: 'raw' });
    expect((await moves()).moves.map((m) => m.runId)).toEqual([made[2], made[1]]);
    expect((await getTestStates(store.db, test.id))[0]?.lastRunId).toBe(made[2]);

    await receivedDaysAgo(store, made, 31);
    const pruned = await pruneHistory(store.db, retentionCutoffs(30));
    expect(pruned.runs).toBeGreaterThanOrEqual(3);
    expect(await dangling(store)).toEqual({ moves: 0, states: 0 });

    // The moves are history: kept, readable, without their runs.
    const after = await moves();
    expect(after.moves).toMatchObject([
      { serverName: server.name, fromRevision: '2026-07-28', toRevision: '2025-11-25', downgrade: true, runId: null },
      { serverName: server.name, fromRevision: '2025-06-18', toRevision: '2026-07-28', eraChanged: true, runId: null },
    ]);
    // The test still speaks what it spoke; only its link to the pruned run is gone.
    expect((await getTestStates(store.db, test.id))[0]).toMatchObject({
      currentRevision: '2025-11-25',
      lastOutcome: 'success',
      lastRunId: null,
    });
    // No foreign key guards run ids since runs are partitioned (migration 0007): retention's own
    // forgetRuns keeps them from dangling, which dangling() above checks.
  });

  it('prunes detections by when control recorded them (its clock), keeping each server’s newest', async () => {
    const a = (await serverWithTests(store.db)).server;
    const b = (await serverWithTests(store.db)).server;
    const detection = (outcome: string) => ({ outcome, newestSupported: null });
    const record = (serverId: string, days: number, outcome: string) =>
      recordDetection(store.db, {
        jobId: `det-${serverId}-${days}`,
        serverId,
        region: 'eu-west',
        detection: detection(outcome),
        at: daysAgo(days),
      });
    await record(a.id, 40, 'NONE');
    await record(a.id, 35, 'NONE');
    await record(a.id, 1, 'DETECTED');
    // b's detection interval was switched off: its last detection, however old, is still its answer.
    await record(b.id, 50, 'NONE');
    await record(b.id, 40, 'DETECTED');
    const left = async (serverId: string) =>
      (await store.db.select().from(detections).where(eq(detections.serverId, serverId))).map((d) => d.outcome);

    expect(await pruneDetections(store.db, { before: daysAgo(30), batchSize: 1 })).toBe(3);
    expect(await left(a.id)).toEqual(['DETECTED']);
    expect(await left(b.id)).toEqual(['DETECTED']);
    expect((await latestDetection(store.db, b.id))?.outcome).toBe('DETECTED');
    expect(await pruneDetections(store.db, { before: daysAgo(30) })).toBe(0);

    // Ingest gives no time: a detection is stamped with control's clock, never an agent's.
    const before = Date.now();
    await recordDetection(store.db, { jobId: null, serverId: a.id, region: null, detection: detection('NONE') });
    const at = (await latestDetection(store.db, a.id))!.at.getTime();
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(at).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('forgets agents control has not heard from in a week, by its clock, not the heartbeat’s', async () => {
    const beat = (id: string, at: Date) =>
      upsertAgentHeartbeat(store.db, {
        id,
        region: 'eu-west',
        version: '0.1.0',
        inFlight: 0,
        startedAt: at,
        at,
      });
    const heardDaysAgo = (id: string, days: number) =>
      store.db
        .update(agents)
        .set({ receivedAt: sql`now() - make_interval(days => ${days})` })
        .where(eq(agents.id, id));
    const ids = async () => (await listAgents(store.db)).map((a) => a.id).filter((id) => id.startsWith('ret-'));

    await beat('ret-gone', new Date());
    await beat('ret-future', FAR_FUTURE); // a skewed clock must not keep it listed forever
    await beat('ret-past', FAR_PAST); // nor have it forgotten at once
    await beat('ret-back', FAR_FUTURE);
    await heardDaysAgo('ret-gone', 8);
    await heardDaysAgo('ret-future', 8);
    await heardDaysAgo('ret-back', 8);
    // ret-back's clock went back: its heartbeat is older than the stored one and changes none of
    // what it reported, but control did hear it.
    await beat('ret-back', new Date());

    expect(await pruneAgents(store.db, { heardBefore: daysAgo(7) })).toBe(2);
    expect(await ids()).toEqual(['ret-back', 'ret-past']);
    const back = (await listAgents(store.db)).find((a) => a.id === 'ret-back');
    expect(back?.lastSeen).toEqual(FAR_FUTURE);
  });
});

describe.each(BACKENDS)('the retention migration on %s', (name, make) => {
  let backend: Backend;
  let store: Store;
  let dir: string;
  beforeAll(async () => {
    backend = make();
    // Unmigrated (PGlite's first start would otherwise apply every migration).
    store = await backend.open({ firstStartMigrates: false });
    // The migrations before this one, from a copy of /migrations whose journal stops there.
    dir = mkdtempSync(join(tmpdir(), 'mcpfleet-migrations-'));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const journal = JSON.parse(readFileSync(join(dir, 'meta', '_journal.json'), 'utf8')) as {
      entries: { tag: string }[];
    };
    // The migration that brings runs their received_at, whatever it is named.
    const at = journal.entries.findIndex((e) =>
      /ADD COLUMN "received_at"/.test(readFileSync(join(dir, `${e.tag}.sql`), 'utf8')),
    );
    expect(at).toBeGreaterThan(0);
    journal.entries = journal.entries.slice(0, at);
    writeFileSync(join(dir, 'meta', '_journal.json'), JSON.stringify(journal));
    const migrate = name === 'postgres' ? migratePg : migratePglite;
    await migrate(store.db as never, { migrationsFolder: dir });
  });
  afterAll(async () => {
    await backend.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('backfills received_at (never in the future) and clears the references the old retention left dangling', async () => {
    // A server and its test as the old schema held them (the store's functions write today's columns).
    const server = { id: randomUUID() };
    const test = { id: randomUUID() };
    await store.db.execute(sql`insert into servers (id, name, url, interval_ms, timeout_ms)
      values (${server.id}, 'old-server', 'https://old.example.com/mcp', 60000, 10000)`);
    await store.db.execute(sql`insert into tests (id, server_id, mode) values (${test.id}, ${server.id}, 'newest')`);
    // As the old schema stood: no received_at, no foreign keys; the old retention deleted run 1.
    const run = (id: number, finishedAt: Date) =>
      store.db.execute(sql`insert into runs (id, job_id, test_id, server_id, region, agent, mode, outcome, message,
          requests, millis, scheduled_at, started_at, finished_at)
        values (${id}, ${`old-${id}`}, ${test.id}, ${server.id}, 'eu-west', 'a', 'newest', 'success', 'ok', 2, 10,
          ${finishedAt.toISOString()}, ${finishedAt.toISOString()}, ${finishedAt.toISOString()})`);
    await run(2, FAR_PAST);
    await run(3, FAR_FUTURE);
    await run(4, daysAgo(1));
    await store.db.execute(sql`insert into era_moves (server_id, test_id, region, run_id, from_revision, to_revision,
        downgrade, era_changed, at)
      values (${server.id}, ${test.id}, 'eu-west', 1, '2025-06-18', '2026-07-28', false, true, ${FAR_PAST.toISOString()}),
             (${server.id}, ${test.id}, 'eu-west', 4, '2026-07-28', '2025-11-25', true, true, now())`);
    await store.db.execute(sql`insert into test_states (test_id, region, current_revision, last_run_id)
      values (${test.id}, 'eu-west', '2025-11-25', 4), (${test.id}, 'us-east', '2026-07-28', 1)`);
    await store.db.execute(sql`insert into agents (id, region, version, in_flight, started_at, last_seen)
      values ('old-future', 'eu-west', '0.1.0', 0, now(), ${FAR_FUTURE.toISOString()}),
             ('old-past', 'eu-west', '0.1.0', 0, now(), ${FAR_PAST.toISOString()})`);

    await store.migrate();

    const received = await rows<{ id: number; past: boolean; future: boolean }>(
      store,
      sql`select id::int, received_at < now() - interval '1 year' as past, received_at > now() as future
          from runs order by id`,
    );
    expect(received).toEqual([
      { id: 2, past: true, future: false },
      { id: 3, past: false, future: false },
      { id: 4, past: false, future: false },
    ]);
    expect(await dangling(store)).toEqual({ moves: 0, states: 0 });
    const moves = await store.db.select().from(eraMoves).orderBy(eraMoves.id);
    expect(moves.map((m) => m.runId)).toEqual([null, 4]);

    // Retention now: the run from 2001 goes, the one "from 2100" stays (received at the migration);
    // the agent last seen in 2001 goes, the one "seen in 2100" stays for a week.
    const pruned = await pruneHistory(store.db, retentionCutoffs(30));
    expect(pruned).toMatchObject({ runs: 1, agents: 1 });
    expect((await store.db.select({ id: runs.id }).from(runs).orderBy(runs.id)).map((r) => r.id)).toEqual([3, 4]);
    expect((await listAgents(store.db)).map((a) => a.id)).toEqual(['old-future']);
    expect(await dangling(store)).toEqual({ moves: 0, states: 0 });
  });
});
