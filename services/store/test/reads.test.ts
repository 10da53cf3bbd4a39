import { DEFAULT_JUDGEMENT } from '@mcp-fleet/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eraMovesList,
  fleetSummary,
  type RecordRunAnswer,
  type Run,
  recordRun,
  retireServer,
  runsOfServer,
  type Server,
  type Store,
  serversOverview,
} from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, minute, resultOf, serverWithTests } from './fixtures';

/** A failed pin's assertion, as the probe reports it. */
const PIN_ASSERTION = {
  name: 'mcp.protocol.revision',
  expected: '2025-06-18',
  actual: '2026-07-28',
  message: 'Server no longer speaks protocol 2025-06-18',
} as const;

describe.each(BACKENDS)('reading the fleet on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  // A: newest + pinned 2025-06-18 in two regions; B: newest in eu-west; C: retired; D: no tests.
  let a: Server;
  let b: Server;
  let c: Server;
  let d: Server;
  const answers: RecordRunAnswer[] = [];

  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
    // confirmAfter 1: each move here is confirmed by the run that makes it, so the default (confirmed)
    // view lists them all (confirmation itself: era-confirmation.test.ts).
    const judgement = { ...DEFAULT_JUDGEMENT, confirmAfter: 1 };
    const A = await serverWithTests(store.db, ['newest', '2025-06-18'], { name: 'a-orders', judgement });
    const B = await serverWithTests(store.db, ['newest'], { name: 'b-billing', regions: ['eu-west'], judgement });
    const C = await serverWithTests(store.db, ['newest'], { name: 'c-gone', judgement });
    const D = await serverWithTests(store.db, [], { name: 'd-new' });
    [a, b, c, d] = [A.server, B.server, C.server, D.server];
    const [aNewest, aPinned] = A.tests as [(typeof A.tests)[0], (typeof A.tests)[0]];
    const pinFailure = handshakeRun({
      mode: 'pinned',
      negotiated: null,
      outcome: 'unsupported_version',
      message: 'Server no longer speaks protocol 2025-06-18',
      assertion: PIN_ASSERTION,
    });
    const results = [
      resultOf(aNewest, 'eu-west', minute(1), handshakeRun({ negotiated: '2025-06-18' })),
      resultOf(aNewest, 'us-east', minute(1), handshakeRun({ negotiated: '2025-11-25' })),
      resultOf(aPinned, 'eu-west', minute(1), handshakeRun({ mode: 'pinned' })),
      resultOf(aNewest, 'eu-west', minute(2), handshakeRun({ negotiated: '2026-07-28' })),
      resultOf(aPinned, 'us-east', minute(2), handshakeRun({ mode: 'pinned' })),
      resultOf(aNewest, 'us-east', minute(3), handshakeRun({ negotiated: '2025-03-26', outcome: 'downgrade' })),
      resultOf(aPinned, 'eu-west', minute(4), pinFailure),
      resultOf(B.tests[0]!, 'eu-west', minute(1), handshakeRun({ negotiated: '2026-07-28' })),
      resultOf(B.tests[0]!, 'eu-west', minute(5), handshakeRun({ negotiated: '2026-07-28' })),
      resultOf(C.tests[0]!, 'eu-west', minute(1), handshakeRun({ negotiated: '2025-06-18' })),
      resultOf(C.tests[0]!, 'eu-west', minute(6), handshakeRun({ negotiated: '2025-11-25', outcome: 'timeout' })),
    ];
    for (const r of results) answers.push(await recordRun(store.db, r));
    await retireServer(store.db, C.server.id);
  });
  afterAll(() => backend.dispose());

  it('gives every active server its tests and, per region, revision, last outcome and last run', async () => {
    const overview = await serversOverview(store.db);
    expect(overview.map((s) => s.name)).toEqual(['a-orders', 'b-billing', 'd-new']);
    const [A, B, D] = overview;
    expect(A).toMatchObject({ id: a.id, url: a.url, regions: ['eu-west', 'us-east'], intervalMs: 60_000 });
    expect(A).not.toHaveProperty('headers');
    expect(A!.byRegion).toEqual([
      {
        region: 'eu-west',
        currentRevision: '2026-07-28',
        lastOutcome: 'unsupported_version',
        lastMessage: 'Server no longer speaks protocol 2025-06-18',
        lastAssertion: PIN_ASSERTION,
        lastRunAt: minute(4),
        failing: true,
        // The pin's failure is the worst of the region's tests.
        state: {
          outcome: 'unsupported_version',
          failing: true,
          test: { id: A!.tests[1]!.id, mode: 'pinned', pinnedRevision: '2025-06-18' },
          message: 'Server no longer speaks protocol 2025-06-18',
          assertion: PIN_ASSERTION,
          lastRunAt: minute(4),
        },
      },
      {
        region: 'us-east',
        currentRevision: '2025-03-26',
        lastOutcome: 'downgrade',
        lastMessage: 'The handshake succeeded.',
        lastAssertion: null,
        lastRunAt: minute(3),
        failing: false,
        // Both tests pass; the downgrade is worse than the pin's success.
        state: {
          outcome: 'downgrade',
          failing: false,
          test: { id: A!.tests[0]!.id, mode: 'newest', pinnedRevision: null },
          message: 'The handshake succeeded.',
          assertion: null,
          lastRunAt: minute(3),
        },
      },
    ]);
    expect(A!.tests.map((t) => [t.mode, t.pinnedRevision, t.states.map((s) => [s.region, s.currentRevision])])).toEqual(
      [
        [
          'newest',
          null,
          [
            ['eu-west', '2026-07-28'],
            ['us-east', '2025-03-26'],
          ],
        ],
        [
          'pinned',
          '2025-06-18',
          [
            ['eu-west', '2025-06-18'],
            ['us-east', '2025-06-18'],
          ],
        ],
      ],
    );
    expect(B!.byRegion).toMatchObject([{ region: 'eu-west', currentRevision: '2026-07-28', lastRunAt: minute(5) }]);
    expect(D).toMatchObject({ id: d.id, tests: [], byRegion: [] });
    // A page of servers reads only the ids it is given.
    expect((await serversOverview(store.db, { ids: [b.id] })).map((s) => s.name)).toEqual(['b-billing']);
    expect(await serversOverview(store.db, { ids: [] })).toEqual([]);
  });

  it('reads a retired server by id, marked retired, with the tests it had and their last states', async () => {
    expect((await serversOverview(store.db)).some((s) => s.id === c.id)).toBe(false);
    const [C] = await serversOverview(store.db, { ids: [c.id] });
    expect(C).toMatchObject({ id: c.id, name: 'c-gone', retiredAt: expect.any(Date) });
    expect(C!.tests.map((t) => t.mode)).toEqual(['newest']);
    expect(C!.byRegion).toMatchObject([{ region: 'eu-west', currentRevision: '2025-11-25', lastOutcome: 'timeout' }]);
    expect((await serversOverview(store.db, { ids: [a.id] }))[0]!.retiredAt).toBeNull();
    // Its runs stay readable.
    expect((await runsOfServer(store.db, c.id, { limit: 10 })).runs).toHaveLength(2);
  });

  it('pages a server’s runs newest first, ties broken by id', async () => {
    const all: Run[] = [];
    let before: Awaited<ReturnType<typeof runsOfServer>>['next'] = null;
    const sizes: number[] = [];
    do {
      const page: Awaited<ReturnType<typeof runsOfServer>> = await runsOfServer(store.db, a.id, {
        limit: 3,
        before: before ?? undefined,
      });
      sizes.push(page.runs.length);
      all.push(...page.runs);
      before = page.next;
    } while (before);
    expect(sizes).toEqual([3, 3, 1]);
    const keys = all.map((r) => [r.finishedAt.getTime(), r.id] as const);
    const sorted = [...keys].sort((x, y) => y[0] - x[0] || y[1] - x[1]);
    expect(keys).toEqual(sorted);
    expect(new Set(all.map((r) => r.id)).size).toBe(7);
    expect(all.every((r) => r.serverId === a.id)).toBe(true);
    expect(all[0]).toMatchObject({ outcome: 'unsupported_version', mode: 'pinned', region: 'eu-west' });
    // Three runs finished at minute 1: the cursor must not skip or repeat one of them.
    expect(all.filter((r) => r.finishedAt.getTime() === minute(1).getTime())).toHaveLength(3);
    expect((await runsOfServer(store.db, b.id, { limit: 10 })).next).toBeNull();
  });

  it('lists era moves newest first, filtered by server, region and time, with the server’s name', async () => {
    const all = await eraMovesList(store.db, { limit: 50 });
    expect(
      all.moves.map((m) => [m.serverName, m.region, m.fromRevision, m.toRevision, m.downgrade, m.eraChanged]),
    ).toEqual([
      ['c-gone', 'eu-west', '2025-06-18', '2025-11-25', false, false],
      ['a-orders', 'us-east', '2025-11-25', '2025-03-26', true, false],
      ['a-orders', 'eu-west', '2025-06-18', '2026-07-28', false, true],
    ]);
    expect(all.next).toBeNull();
    const ofA = await eraMovesList(store.db, { serverId: a.id, limit: 50 });
    expect(ofA.moves.map((m) => m.at)).toEqual([minute(3), minute(2)]);
    const inEu = await eraMovesList(store.db, { region: 'eu-west', serverId: a.id, limit: 50 });
    expect(inEu.moves.map((m) => m.toRevision)).toEqual(['2026-07-28']);
    const recent = await eraMovesList(store.db, { since: minute(3), limit: 50 });
    expect(recent.moves.map((m) => m.serverName)).toEqual(['c-gone', 'a-orders']);

    const first = await eraMovesList(store.db, { limit: 2 });
    expect(first.moves).toHaveLength(2);
    const rest = await eraMovesList(store.db, { limit: 2, before: first.next! });
    expect([...first.moves, ...rest.moves].map((m) => m.id)).toEqual(all.moves.map((m) => m.id));
    expect(rest.next).toBeNull();
    const moveRun = answers[3]!;
    expect(!moveRun.duplicate && all.moves[2]!.runId === moveRun.runId).toBe(true);
  });

  it('sums the fleet up: servers by revision and era per region, runs by outcome and region, pins, moves', async () => {
    const summary = await fleetSummary(store.db, { since: minute(0) });
    expect(summary.servers).toBe(3);
    expect(summary.byRevision).toEqual([
      { region: 'eu-west', revision: '2026-07-28', servers: 2 },
      { region: 'us-east', revision: '2025-03-26', servers: 1 },
    ]);
    expect(summary.byEra).toEqual([
      { region: 'eu-west', era: 'modern', servers: 2 },
      { region: 'us-east', era: 'legacy', servers: 1 },
    ]);
    expect(summary.runs).toEqual({
      total: 11,
      byOutcome: { success: 8, downgrade: 1, unsupported_version: 1, timeout: 1 },
      byRegion: { 'eu-west': 8, 'us-east': 3 },
      byRegionAndOutcome: [
        { region: 'eu-west', outcome: 'success', runs: 6 },
        { region: 'eu-west', outcome: 'timeout', runs: 1 },
        { region: 'eu-west', outcome: 'unsupported_version', runs: 1 },
        { region: 'us-east', outcome: 'downgrade', runs: 1 },
        { region: 'us-east', outcome: 'success', runs: 2 },
      ],
    });
    expect(summary).toMatchObject({ failingPinnedTests: 1, eraMoves: 3, downgrades: 1, eraChanges: 1 });
    // The overview's summary leaves the eras out (it does not show them) and nothing else.
    const withoutEras = await fleetSummary(store.db, { since: minute(0), eras: false });
    expect(withoutEras).toEqual({ ...summary, byEra: [] });

    const window = await fleetSummary(store.db, { since: minute(3), until: minute(5) });
    expect(window.runs).toMatchObject({ total: 2, byOutcome: { downgrade: 1, unsupported_version: 1 } });
    expect(window).toMatchObject({ eraMoves: 1, downgrades: 1, eraChanges: 0, until: minute(5) });
    // The current picture does not depend on the range.
    expect(window.byRevision).toEqual(summary.byRevision);
  });
});
