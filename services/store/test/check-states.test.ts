// A conformance test's checks as ingest files them: per (test, region, check) the latest status
// and since when, a check_changes row per flip, nothing twice for a job delivered twice, and the
// reads the API and gauges make of them. Against real Postgres and PGlite.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkChanges,
  checkStates,
  conformanceFailing,
  createTest,
  eraMoves,
  pruneHistory,
  recordRun,
  retentionCutoffs,
  retireTest,
  runs,
  type Store,
  serverConformance,
  type Test,
} from '../src';
import { BACKENDS } from './backends';
import { conformanceRun, handshakeRun, minute, resultOf, serverWithTests } from './fixtures';

describe.each(BACKENDS)('conformance checks on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  const conformanceTest = async () => {
    const { server, tests } = await serverWithTests(store.db);
    const test = await createTest(store.db, { serverId: server.id, mode: 'newest', depth: 'conformance' });
    return { server, handshake: tests[0]!, test };
  };
  const run = (
    test: Test,
    region: string,
    n: number,
    statuses: Record<string, 'pass' | 'fail' | 'skip'>,
    jobId?: string,
  ) =>
    recordRun(store.db, {
      ...resultOf(test, region, minute(n), handshakeRun(), jobId),
      conformance: conformanceRun('legacy', statuses),
    });
  const states = (testId: string) =>
    store.db
      .select()
      .from(checkStates)
      .where(eq(checkStates.testId, testId))
      .orderBy(checkStates.region, checkStates.checkId);
  const changes = (testId: string) =>
    store.db.select().from(checkChanges).where(eq(checkChanges.testId, testId)).orderBy(checkChanges.id);

  it('files each check with since when; an unchanged status keeps its since, a flip moves it and is a change', async () => {
    const { test } = await conformanceTest();
    await run(test, 'eu-west', 1, {
      server_info_present: 'pass',
      ping_succeeds: 'pass',
      list_prompts_succeeds: 'skip',
    });
    let s = await states(test.id);
    expect(s.map((c) => [c.checkId, c.status, c.level, c.era, c.since])).toEqual([
      ['list_prompts_succeeds', 'skip', 'MUST', 'legacy', minute(1)],
      ['ping_succeeds', 'pass', 'MUST', 'legacy', minute(1)],
      ['server_info_present', 'pass', 'MUST', 'legacy', minute(1)],
    ]);
    // First run: every check changes from nothing.
    expect((await changes(test.id)).map((c) => [c.checkId, c.fromStatus, c.toStatus])).toEqual([
      ['server_info_present', null, 'pass'],
      ['ping_succeeds', null, 'pass'],
      ['list_prompts_succeeds', null, 'skip'],
    ]);

    const second = await run(test, 'eu-west', 2, {
      server_info_present: 'pass',
      ping_succeeds: 'fail',
      list_prompts_succeeds: 'skip',
    });
    s = await states(test.id);
    const byId = Object.fromEntries(s.map((c) => [c.checkId, c]));
    expect(byId.server_info_present).toMatchObject({ status: 'pass', since: minute(1), lastRunAt: minute(2) });
    expect(byId.ping_succeeds).toMatchObject({ status: 'fail', since: minute(2), message: 'ping_succeeds failed' });
    expect(!second.duplicate && byId.ping_succeeds?.lastRunId === second.runId).toBe(true);
    const flips = (await changes(test.id)).slice(3);
    expect(flips.map((c) => [c.checkId, c.fromStatus, c.toStatus, c.at])).toEqual([
      ['ping_succeeds', 'pass', 'fail', minute(2)],
    ]);

    // Still failing: since stays at the minute it began.
    await run(test, 'eu-west', 3, {
      server_info_present: 'pass',
      ping_succeeds: 'fail',
      list_prompts_succeeds: 'skip',
    });
    expect((await states(test.id)).find((c) => c.checkId === 'ping_succeeds')).toMatchObject({
      since: minute(2),
      lastRunAt: minute(3),
    });
    expect(await changes(test.id)).toHaveLength(4);
  });

  it('records a move once: a conformance test beside a handshake test of the same choice leaves it to that one', async () => {
    const { server, handshake, test } = await conformanceTest();
    const moved = handshakeRun({ negotiated: '2025-11-25' });
    for (const t of [handshake, test]) {
      await recordRun(store.db, resultOf(t, 'eu-west', minute(1)));
      await recordRun(store.db, resultOf(t, 'eu-west', minute(2), moved));
    }
    const moves = await store.db.select().from(eraMoves).where(eq(eraMoves.serverId, server.id));
    expect(moves.map((m) => [m.testId, m.fromRevision, m.toRevision])).toEqual([
      [handshake.id, '2025-06-18', '2025-11-25'],
    ]);
    // Alone (its handshake twin retired), a conformance test records its own moves.
    await retireTest(store.db, handshake.id);
    await recordRun(store.db, resultOf(test, 'eu-west', minute(3)));
    const after = await store.db.select().from(eraMoves).where(eq(eraMoves.serverId, server.id));
    expect(after.filter((m) => m.testId === test.id).map((m) => m.toRevision)).toEqual(['2025-06-18']);
  });

  it('a job delivered twice files its checks once, and the run keeps its check list', async () => {
    const { test } = await conformanceTest();
    const jobId = `job-twice-${test.id}`;
    const first = await run(test, 'us-east', 1, { ping_succeeds: 'pass' }, jobId);
    const again = await run(test, 'us-east', 1, { ping_succeeds: 'fail' }, jobId);
    expect(again).toEqual({ duplicate: true });
    expect((await states(test.id)).map((c) => c.status)).toEqual(['pass']);
    expect(await changes(test.id)).toHaveLength(1);
    const [row] = await store.db.select().from(runs).where(eq(runs.jobId, jobId));
    expect(!first.duplicate && row?.id === first.runId).toBe(true);
    expect(row?.checks).toMatchObject([{ id: 'ping_succeeds', status: 'pass' }]);
  });

  it("takes a check's level from probe's table, files a repeated id once, and files nothing for a handshake test (hostile agent)", async () => {
    const { handshake, test } = await conformanceTest();
    const forged = conformanceRun('legacy', { ping_succeeds: 'fail' });
    forged.checks[0]!.level = 'SHOULD';
    forged.checks.push({ ...forged.checks[0]!, status: 'pass' });
    await recordRun(store.db, { ...resultOf(test, 'eu-west', minute(5)), conformance: forged });
    expect((await states(test.id)).map((c) => [c.checkId, c.level, c.status])).toEqual([
      ['ping_succeeds', 'MUST', 'fail'],
    ]);
    await recordRun(store.db, { ...resultOf(handshake, 'eu-west', minute(5)), conformance: forged });
    expect(await states(handshake.id)).toEqual([]);
    const [row] = await store.db.select().from(runs).where(eq(runs.testId, handshake.id));
    expect(row?.checks).toBeNull();
  });

  it('reads a server its check states per region and last run, and the fleet its matrix and failing MUST checks', async () => {
    const { server, test } = await conformanceTest();
    await run(test, 'eu-west', 1, { server_info_present: 'pass', ping_succeeds: 'fail', list_tools_succeeds: 'pass' });
    await run(test, 'us-east', 1, { server_info_present: 'pass', ping_succeeds: 'pass', list_tools_succeeds: 'skip' });
    await run(test, 'us-east', 2, { server_info_present: 'pass', ping_succeeds: 'pass', list_tools_succeeds: 'skip' });

    const [one] = await serverConformance(store.db, server.id);
    expect(one).toMatchObject({ testId: test.id, mode: 'newest' });
    expect(one!.regions.map((r) => r.region)).toEqual(['eu-west', 'us-east']);
    expect(one!.regions[1]!.checks.find((c) => c.checkId === 'ping_succeeds')).toMatchObject({
      status: 'pass',
      since: minute(1),
    });
    expect(one!.regions[1]!.lastRun).toMatchObject({ finishedAt: minute(2), checks: expect.any(Array) });

    // The matrix itself is conformanceMatrixNow's (conformance-reads.test.ts).
    const failing = (await conformanceFailing(store.db)).find((f) => f.server === server.name);
    expect(failing).toEqual({ serverId: server.id, server: server.name, mustFailing: 1 });
    // Control's gauges read some servers at a time: the same answer for this one, none for another.
    expect(await conformanceFailing(store.db, { serverIds: [server.id] })).toEqual([failing]);
    expect(await conformanceFailing(store.db, { serverIds: [] })).toEqual([]);
  });

  it('prunes check changes with their runs; the states keep their since', async () => {
    const { test } = await conformanceTest();
    await run(test, 'eu-west', 1, { ping_succeeds: 'pass' });
    await run(test, 'eu-west', 2, { ping_succeeds: 'fail' });
    await store.db
      .update(runs)
      .set({ receivedAt: new Date(Date.now() - 40 * 86_400_000) })
      .where(eq(runs.testId, test.id));
    const pruned = await pruneHistory(store.db, retentionCutoffs(30));
    expect(pruned.checkChanges).toBeGreaterThanOrEqual(2);
    expect(await changes(test.id)).toEqual([]);
    expect(await states(test.id)).toMatchObject([{ status: 'fail', since: minute(2), lastRunId: null }]);
  });
});
