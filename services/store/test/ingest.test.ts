import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_STALE_AFTER_SECONDS,
  agents,
  eraMoves,
  getTestStates,
  latestDetection,
  listAgents,
  recordDetection,
  recordRun,
  runs,
  type Store,
  testStates,
  UnknownRecordError,
  upsertAgentHeartbeat,
} from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, minute, resultOf, serverWithTests } from './fixtures';

describe.each(BACKENDS)('results ingest on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  const runsOfJob = (jobId: string) => store.db.select().from(runs).where(eq(runs.jobId, jobId));
  const movesOfTest = (testId: string) =>
    store.db.select().from(eraMoves).where(eq(eraMoves.testId, testId)).orderBy(eraMoves.id);
  const stateOf = async (testId: string, region: string) =>
    (
      await store.db
        .select()
        .from(testStates)
        .where(and(eq(testStates.testId, testId), eq(testStates.region, region)))
    )[0];

  it('writes one run per job id when a result is delivered twice', async () => {
    const { tests } = await serverWithTests(store.db);
    const result = resultOf(tests[0]!, 'eu-west', minute(1));
    const first = await recordRun(store.db, result);
    expect(first).toMatchObject({ duplicate: false, eraMove: null, stale: false });
    // The second delivery changes nothing, even when it says something else.
    const second = await recordRun(store.db, { ...result, run: handshakeRun({ negotiated: '2026-07-28' }) });
    expect(second).toEqual({ duplicate: true });
    expect(await runsOfJob(result.jobId)).toHaveLength(1);
    expect((await stateOf(tests[0]!.id, 'eu-west'))?.currentRevision).toBe('2025-06-18');
  });

  it('writes one run when ten deliveries of a job arrive at once', async () => {
    const { tests } = await serverWithTests(store.db);
    const result = resultOf(tests[0]!, 'eu-west', minute(1));
    const answers = await Promise.all(Array.from({ length: 10 }, () => recordRun(store.db, result)));
    expect(answers.filter((a) => !a.duplicate)).toHaveLength(1);
    expect(await runsOfJob(result.jobId)).toHaveLength(1);
    expect(await getTestStates(store.db, tests[0]!.id)).toHaveLength(1);
  });

  it('keeps the newest run in the state when runs of one test arrive at once', async () => {
    const { tests } = await serverWithTests(store.db);
    const results = Array.from({ length: 10 }, (_, i) => resultOf(tests[0]!, 'us-east', minute(i)));
    const answers = await Promise.all(results.map((r) => recordRun(store.db, r)));
    expect(answers.every((a) => !a.duplicate)).toBe(true);
    const state = await stateOf(tests[0]!.id, 'us-east');
    expect(state?.lastRunAt).toEqual(minute(9));
    const newest = answers[9]!;
    expect(!newest.duplicate && state?.lastRunId === newest.runId).toBe(true);
  });

  it('starts a test at its first revision without an era move, then records each move', async () => {
    const { tests } = await serverWithTests(store.db);
    const test = tests[0]!;
    const at = (n: number, negotiated: string | null, outcome: 'success' | 'downgrade' | 'timeout' = 'success') =>
      recordRun(store.db, resultOf(test, 'eu-west', minute(n), handshakeRun({ negotiated, outcome })));

    expect(await at(1, '2025-06-18')).toMatchObject({ eraMove: null });
    expect(await movesOfTest(test.id)).toEqual([]);
    expect(await stateOf(test.id, 'eu-west')).toMatchObject({ currentRevision: '2025-06-18', lastOutcome: 'success' });

    expect(await at(2, '2025-06-18')).toMatchObject({ eraMove: null });
    expect(await at(3, '2026-07-28')).toMatchObject({
      eraMove: { from: '2025-06-18', to: '2026-07-28', downgrade: false, eraChanged: true },
    });
    expect(await at(4, '2025-11-25', 'downgrade')).toMatchObject({
      eraMove: { from: '2026-07-28', to: '2025-11-25', downgrade: true, eraChanged: true },
    });
    expect(await at(5, '2025-03-26', 'downgrade')).toMatchObject({
      eraMove: { from: '2025-11-25', to: '2025-03-26', downgrade: true, eraChanged: false },
    });
    // No answer, or one mcp-fleet does not know: the run fails, the revision stays.
    expect(await at(6, null, 'timeout')).toMatchObject({ eraMove: null });
    expect(await at(7, '2099-01-01')).toMatchObject({ eraMove: null });
    expect(await stateOf(test.id, 'eu-west')).toMatchObject({ currentRevision: '2025-03-26', failing: false });

    const moves = await movesOfTest(test.id);
    expect(moves.map((m) => [m.fromRevision, m.toRevision, m.downgrade, m.eraChanged])).toEqual([
      ['2025-06-18', '2026-07-28', false, true],
      ['2026-07-28', '2025-11-25', true, true],
      ['2025-11-25', '2025-03-26', true, false],
    ]);
    expect(moves[0]).toMatchObject({ serverId: test.serverId, region: 'eu-west', at: minute(3) });
    const [run3] = await store.db.select().from(runs).where(eq(runs.id, moves[0]!.runId!));
    expect(run3?.finishedAt).toEqual(minute(3));
    // Another region has a state of its own.
    expect(await at(8, '2025-06-18')).toMatchObject({ eraMove: { from: '2025-03-26', to: '2025-06-18' } });
    expect((await recordRun(store.db, resultOf(test, 'us-east', minute(9)))).duplicate).toBe(false);
    expect((await getTestStates(store.db, test.id)).map((s) => s.region)).toEqual(['eu-west', 'us-east']);
  });

  it('marks a failing pin and keeps its assertion; the next pass clears it', async () => {
    const { tests } = await serverWithTests(store.db, ['2025-06-18']);
    const pin = tests[0]!;
    const pinned = (parts: Parameters<typeof handshakeRun>[0]) => handshakeRun({ mode: 'pinned', ...parts });
    await recordRun(store.db, resultOf(pin, 'eu-west', minute(1), pinned({})));
    const assertion = {
      name: 'mcp.protocol.revision' as const,
      expected: '2025-06-18',
      actual: '2026-07-28',
      message: 'Server no longer speaks protocol 2025-06-18',
    };
    const failed = pinned({
      outcome: 'unsupported_version',
      negotiated: null,
      message: assertion.message,
      assertion,
      evidence: {
        status: 400,
        contentType: 'application/json',
        bodyPreview: '{"error":{}}',
        jsonRpcErrorCode: -32602,
        jsonRpcErrorMessage: 'Unsupported protocol version',
        millis: 4,
        reachabilityFailure: null,
        message: assertion.message,
      },
    });
    const answer = await recordRun(store.db, resultOf(pin, 'eu-west', minute(2), failed));
    expect(answer).toMatchObject({ duplicate: false, eraMove: null });
    expect(await stateOf(pin.id, 'eu-west')).toMatchObject({
      currentRevision: '2025-06-18',
      lastOutcome: 'unsupported_version',
      lastMessage: 'Server no longer speaks protocol 2025-06-18',
      lastAssertion: assertion,
      failing: true,
    });
    const [run] = await store.db
      .select()
      .from(runs)
      .where(eq(runs.id, answer.duplicate ? -1 : answer.runId));
    expect(run).toMatchObject({ mode: 'pinned', assertion, outcome: 'unsupported_version', millis: 13, requests: 2 });
    expect(run?.evidence).toMatchObject({ jsonRpcErrorCode: -32602 });

    await recordRun(store.db, resultOf(pin, 'eu-west', minute(3), pinned({})));
    expect(await stateOf(pin.id, 'eu-west')).toMatchObject({ failing: false, lastAssertion: null });
  });

  it('never moves a pinned test: a counter-offer fails the pin, it is no era move', async () => {
    const { tests } = await serverWithTests(store.db, ['2025-03-26']);
    const pin = tests[0]!;
    const pinned = (parts: Parameters<typeof handshakeRun>[0]) =>
      handshakeRun({ mode: 'pinned', requested: '2025-03-26', negotiated: '2025-03-26', ...parts });
    await recordRun(store.db, resultOf(pin, 'eu-west', minute(1), pinned({})));
    // A sessions server that dropped 2025-03-26 answers initialize with 2025-11-25, as the probe records it.
    const message = 'Server no longer speaks protocol 2025-03-26';
    const assertion = { name: 'mcp.protocol.revision' as const, expected: '2025-03-26', actual: '2025-11-25', message };
    const counterOffer = pinned({ outcome: 'unsupported_version', negotiated: '2025-11-25', message, assertion });
    expect(await recordRun(store.db, resultOf(pin, 'eu-west', minute(2), counterOffer))).toMatchObject({
      eraMove: null,
    });
    expect(await stateOf(pin.id, 'eu-west')).toMatchObject({ currentRevision: '2025-03-26', failing: true });
    expect(await recordRun(store.db, resultOf(pin, 'eu-west', minute(3), pinned({})))).toMatchObject({ eraMove: null });
    expect(await movesOfTest(pin.id)).toEqual([]);
  });

  it('keeps a result from an older slot as a run without moving the state back', async () => {
    const { tests } = await serverWithTests(store.db);
    const test = tests[0]!;
    await recordRun(store.db, resultOf(test, 'eu-west', minute(10), handshakeRun({ negotiated: '2026-07-28' })));
    const late = await recordRun(
      store.db,
      resultOf(test, 'eu-west', minute(5), handshakeRun({ negotiated: '2025-06-18' })),
    );
    // It says the revision the test still speaks, which is what control's scheduler must keep using.
    expect(late).toMatchObject({ duplicate: false, eraMove: null, stale: true, currentRevision: '2026-07-28' });
    expect(await stateOf(test.id, 'eu-west')).toMatchObject({
      currentRevision: '2026-07-28',
      lastRunAt: minute(10),
      lastScheduledAt: new Date(minute(10).getTime() - 2000),
    });
    expect(await movesOfTest(test.id)).toEqual([]);

    // Slots are ordered by the scheduler's clock: an agent whose clock runs behind is not late.
    const skewed = resultOf(test, 'eu-west', minute(9), handshakeRun({ negotiated: '2025-11-25' }));
    skewed.scheduledAt = minute(11);
    expect(await recordRun(store.db, skewed)).toMatchObject({
      stale: false,
      eraMove: { to: '2025-11-25' },
      currentRevision: '2025-11-25',
    });
    // A late failed pin or a late timeout: neither moves anything either.
    const lateTimeout = resultOf(test, 'eu-west', minute(6), handshakeRun({ negotiated: null, outcome: 'timeout' }));
    expect(await recordRun(store.db, lateTimeout)).toMatchObject({ stale: true, currentRevision: '2025-11-25' });
    expect(await stateOf(test.id, 'eu-west')).toMatchObject({ currentRevision: '2025-11-25', failing: false });
    expect((await movesOfTest(test.id)).map((m) => m.toRevision)).toEqual(['2025-11-25']);
  });

  it("says the test's current revision after each run: a failed pin or a run without an answer keeps it", async () => {
    const { tests } = await serverWithTests(store.db, ['newest', '2025-06-18']);
    const [newest, pin] = [tests[0]!, tests[1]!];
    const at = (test: typeof newest, n: number, run: Parameters<typeof handshakeRun>[0]) =>
      recordRun(store.db, resultOf(test, 'eu-west', minute(n), handshakeRun(run)));
    expect(await at(newest, 1, { negotiated: '2025-11-25' })).toMatchObject({ currentRevision: '2025-11-25' });
    expect(await at(newest, 2, { negotiated: null, outcome: 'timeout' })).toMatchObject({
      currentRevision: '2025-11-25',
    });
    expect(await at(pin, 1, { mode: 'pinned', negotiated: '2025-06-18' })).toMatchObject({
      currentRevision: '2025-06-18',
    });
    const assertion = {
      name: 'mcp.protocol.revision' as const,
      expected: '2025-06-18',
      actual: '2025-11-25',
      message: 'Server no longer speaks protocol 2025-06-18',
    };
    expect(
      await at(pin, 2, { mode: 'pinned', negotiated: '2025-11-25', outcome: 'unsupported_version', assertion }),
    ).toMatchObject({ currentRevision: '2025-06-18', eraMove: null });
  });

  it("refuses a result whose test is not the named server's, writing nothing", async () => {
    const { tests } = await serverWithTests(store.db);
    const { server: other } = await serverWithTests(store.db);
    const test = tests[0]!;
    const forged = { ...resultOf(test, 'eu-west', minute(1), handshakeRun({ negotiated: '2026-07-28' })) };
    forged.serverId = other.id;
    await expect(recordRun(store.db, forged)).rejects.toThrow(
      new UnknownRecordError(`test ${test.id} is not a test of server ${other.id}`, '23503'),
    );
    await expect(recordRun(store.db, forged)).rejects.toMatchObject({ code: '23503' });
    expect(await runsOfJob(forged.jobId)).toEqual([]);
    expect(await getTestStates(store.db, test.id)).toEqual([]);
    expect(await movesOfTest(test.id)).toEqual([]);
    // Not a server id at all: refused too.
    await expect(recordRun(store.db, { ...forged, serverId: 'srv-1' })).rejects.toMatchObject({ code: '23503' });
    // The same result naming its own server is written.
    expect(await recordRun(store.db, { ...forged, serverId: test.serverId })).toMatchObject({ duplicate: false });
  });

  it('refuses a result for a test it does not know, writing nothing', async () => {
    const { tests } = await serverWithTests(store.db);
    const ghost = { ...tests[0]!, id: '00000000-0000-4000-8000-000000000000' };
    const result = resultOf(ghost, 'eu-west', minute(1));
    await expect(recordRun(store.db, result)).rejects.toThrow(UnknownRecordError);
    // The SQLSTATE stays on it: an integrity error, which retrying cannot fix.
    await expect(recordRun(store.db, result)).rejects.toMatchObject({ code: '23503' });
    expect(await runsOfJob(result.jobId)).toEqual([]);
    await expect(recordRun(store.db, { ...result, testId: 'not-a-uuid' })).rejects.toMatchObject({
      name: 'UnknownRecordError',
      code: '22P02',
    });
  });

  it('records a detection once per job, and every API detection', async () => {
    const { server } = await serverWithTests(store.db, []);
    const detection = {
      outcome: 'DETECTED' as const,
      retryAfterHeader: null,
      newestSupported: '2025-11-25' as const,
      serverInfo: { name: 'sim', version: '1' },
      requests: 5,
      millis: 40,
      revisions: [],
    };
    const byJob = { jobId: `det-${server.id}`, serverId: server.id, region: 'eu-west', detection, at: minute(1) };
    expect(await recordDetection(store.db, byJob)).toMatchObject({ duplicate: false });
    expect(await recordDetection(store.db, byJob)).toEqual({ duplicate: true });
    const viaApi = {
      jobId: null,
      serverId: server.id,
      region: null,
      detection: { ...detection, outcome: 'NONE' as const },
    };
    expect(await recordDetection(store.db, { ...viaApi, at: minute(2) })).toMatchObject({ duplicate: false });
    expect(
      await recordDetection(store.db, {
        ...viaApi,
        at: minute(3),
        detection: { ...detection, newestSupported: '2026-07-28' },
      }),
    ).toMatchObject({ duplicate: false });

    const latest = await latestDetection(store.db, server.id);
    expect(latest).toMatchObject({ jobId: null, newestSupported: '2026-07-28', at: minute(3) });

    // A detection of a server the database does not know (a forged bus message) is refused, unwritten.
    const ghost = '00000000-0000-4000-8000-00000000000d';
    const forged = { ...byJob, jobId: `det-${ghost}`, serverId: ghost };
    await expect(recordDetection(store.db, forged)).rejects.toThrow(
      new UnknownRecordError(`no server ${ghost}`, '23503'),
    );
    await expect(recordDetection(store.db, { ...forged, serverId: 'nope' })).rejects.toMatchObject({
      name: 'UnknownRecordError',
      code: '22P02',
    });
    expect(await latestDetection(store.db, ghost)).toBeNull();
    expect(latest?.result).toMatchObject({ outcome: 'DETECTED', requests: 5 });
    expect(await latestDetection(store.db, '00000000-0000-4000-8000-000000000001')).toBeNull();
  });

  it('keeps each agent’s latest heartbeat', async () => {
    const startedAt = minute(0);
    await upsertAgentHeartbeat(store.db, {
      id: 'a-eu',
      region: 'eu-west',
      version: '0.1.0',
      inFlight: 3,
      startedAt,
      at: minute(2),
    });
    await upsertAgentHeartbeat(store.db, {
      id: 'a-us',
      region: 'us-east',
      version: '0.1.0',
      inFlight: 0,
      startedAt,
      at: minute(1),
    });
    // A heartbeat that arrives late changes nothing.
    await upsertAgentHeartbeat(store.db, {
      id: 'a-eu',
      region: 'eu-west',
      version: '0.1.0',
      inFlight: 9,
      startedAt,
      at: minute(1),
    });
    await upsertAgentHeartbeat(store.db, {
      id: 'a-us',
      region: 'us-east',
      version: '0.2.0',
      inFlight: 1,
      startedAt: minute(3).toISOString(),
      at: minute(4).toISOString(),
    });
    expect((await listAgents(store.db)).map((a) => [a.id, a.region, a.version, a.inFlight, a.lastSeen])).toEqual([
      ['a-eu', 'eu-west', '0.1.0', 3, minute(2)],
      ['a-us', 'us-east', '0.2.0', 1, minute(4)],
    ]);
  });

  it('marks an agent stale by when control last heard from it, not by its own clock', async () => {
    const stale = async () => Object.fromEntries((await listAgents(store.db)).map((a) => [a.id, a.stale]));
    // Their heartbeats say minutes of long ago (the agents' clocks), but control heard them just now.
    expect(await stale()).toEqual({ 'a-eu': false, 'a-us': false });
    await store.db
      .update(agents)
      .set({ receivedAt: sql`now() - make_interval(secs => ${AGENT_STALE_AFTER_SECONDS + 1})` })
      .where(eq(agents.id, 'a-eu'));
    expect(await stale()).toEqual({ 'a-eu': true, 'a-us': false });
  });
});
