// A server's verdict: the worst state across its tests per region (and the test that caused it),
// and up / degraded / failing / not run yet, the same in serversOverview, fleetSummary and
// serversPage. Runs go in through recordRun, as control writes them.
import { isPassing, OUTCOME_NAMES } from '@mcp-fleet/probe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fleetSummary,
  OUTCOME_ORDER,
  recordRun,
  retireServer,
  retireTest,
  type ServerHealth,
  type Store,
  serversOverview,
  serversPage,
  type Test,
} from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, minute, resultOf, serverWithTests } from './fixtures';

const pinFailed = handshakeRun({
  mode: 'pinned',
  requested: '2025-03-26',
  negotiated: '2025-11-25',
  outcome: 'unsupported_version',
  message: 'Server no longer speaks protocol 2025-03-26',
  assertion: {
    name: 'mcp.protocol.revision',
    expected: '2025-03-26',
    actual: '2025-11-25',
    message: 'Server no longer speaks protocol 2025-03-26',
  },
});
const pinPassed = handshakeRun({ mode: 'pinned', requested: '2025-03-26', negotiated: '2025-03-26' });
const success = handshakeRun({ negotiated: '2025-11-25', requested: '2025-11-25' });
const downgrade = handshakeRun({ requested: '2025-11-25', negotiated: '2025-06-18', outcome: 'downgrade' });
const failed = (outcome: 'unreachable' | 'timeout') => handshakeRun({ negotiated: null, outcome, message: outcome });

describe('the order of outcomes', () => {
  it('ranks every outcome of the probe once, the passing ones first', () => {
    expect([...OUTCOME_ORDER].sort()).toEqual([...OUTCOME_NAMES].sort());
    const firstFailure = OUTCOME_ORDER.findIndex((o) => !isPassing(o));
    expect(OUTCOME_ORDER.slice(0, firstFailure).every(isPassing)).toBe(true);
    expect(OUTCOME_ORDER.slice(firstFailure).some(isPassing)).toBe(false);
  });
});

describe.each(BACKENDS)('server health on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  const expected: Record<string, ServerHealth> = {};
  let pinnedFailing: { newest: Test; pinned: Test };
  let goneId: string;

  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
    const db = store.db;
    const run = (test: Test, region: string, at: number, r = success) =>
      recordRun(db, resultOf(test, region, minute(at), r));

    // Every test passes everywhere (a downgrade is reported, not failed).
    const up = await serverWithTests(db, ['newest', '2025-03-26'], { name: 'h-up' });
    for (const region of ['eu-west', 'us-east']) {
      await run(up.tests[0]!, region, 1, region === 'us-east' ? downgrade : success);
      await run(up.tests[1]!, region, 1, pinPassed);
    }
    expected['h-up'] = 'up';

    // The case: the pin fails in both regions, the newest-supported test ran last and passed.
    const pf = await serverWithTests(db, ['newest', '2025-03-26'], { name: 'h-pin-fails' });
    pinnedFailing = { newest: pf.tests[0]!, pinned: pf.tests[1]! };
    for (const region of ['eu-west', 'us-east']) {
      await run(pf.tests[1]!, region, 1, pinFailed);
      await run(pf.tests[0]!, region, 2, success);
    }
    expected['h-pin-fails'] = 'failing';

    // One region fails: degraded.
    const oneRegion = await serverWithTests(db, ['newest'], { name: 'h-one-region' });
    await run(oneRegion.tests[0]!, 'eu-west', 1, success);
    await run(oneRegion.tests[0]!, 'us-east', 1, failed('unreachable'));
    expected['h-one-region'] = 'degraded';

    // A pinned-only server failing in one region of two: degraded too.
    const pinOnly = await serverWithTests(db, ['2025-03-26'], { name: 'h-pin-only' });
    await run(pinOnly.tests[0]!, 'eu-west', 1, pinFailed);
    await run(pinOnly.tests[0]!, 'us-east', 1, pinPassed);
    expected['h-pin-only'] = 'degraded';

    // Two tests failing differently in one region: the worse outcome (timeout) is its state.
    const both = await serverWithTests(db, ['newest', '2025-03-26'], { name: 'h-both', regions: ['eu-west'] });
    await run(both.tests[0]!, 'eu-west', 1, failed('timeout'));
    await run(both.tests[1]!, 'eu-west', 2, pinFailed);
    expected['h-both'] = 'failing';

    // A retired test's failure no longer counts.
    const retired = await serverWithTests(db, ['newest', '2025-03-26'], { name: 'h-retired-pin' });
    await run(retired.tests[0]!, 'eu-west', 1, success);
    await run(retired.tests[1]!, 'eu-west', 1, pinFailed);
    await retireTest(db, retired.tests[1]!.id);
    expected['h-retired-pin'] = 'up';

    // Never run, and no tests at all: not run yet.
    await serverWithTests(db, ['newest'], { name: 'h-fresh' });
    await serverWithTests(db, [], { name: 'h-no-tests' });
    expected['h-fresh'] = 'not_run';
    expected['h-no-tests'] = 'not_run';

    // A retired server counts nowhere.
    const gone = await serverWithTests(db, ['newest'], { name: 'h-gone' });
    await run(gone.tests[0]!, 'eu-west', 1, failed('unreachable'));
    await retireServer(db, gone.server.id);
    goneId = gone.server.id;
  });

  afterAll(async () => {
    await backend.dispose();
  });

  it("keeps a retired server's last known health on its own page, not 'not run yet'", async () => {
    const [gone] = await serversOverview(store.db, { ids: [goneId] });
    expect(gone?.retiredAt).not.toBeNull();
    expect(gone?.health).toBe('failing');
    expect(gone?.byRegion.map((r) => r.state?.outcome)).toEqual(['unreachable']);
    const retired = await serversPage(store.db, { status: 'retired' });
    expect(retired.servers.map((s) => [s.name, s.health])).toEqual([['h-gone', 'failing']]);
  });

  it('judges each server up, degraded, failing or not run yet', async () => {
    const overview = await serversOverview(store.db);
    expect(Object.fromEntries(overview.map((s) => [s.name, s.health]))).toEqual(expected);
    // Read a server at a time (a page of the list, a server's page), the verdict is the same.
    for (const s of overview)
      expect((await serversOverview(store.db, { ids: [s.id] }))[0]?.health, s.name).toBe(s.health);
  });

  it('gives each region the worst state across the tests and the test that caused it', async () => {
    const overview = await serversOverview(store.db);
    const named = (name: string) => overview.find((s) => s.name === name)!;

    // Its newest test ran last and passed, yet the region's state is the failing pin's.
    const pf = named('h-pin-fails');
    for (const r of pf.byRegion) {
      expect(r.lastOutcome).toBe('success');
      expect(r.state).toMatchObject({
        outcome: 'unsupported_version',
        failing: true,
        test: { id: pinnedFailing.pinned.id, mode: 'pinned', pinnedRevision: '2025-03-26' },
        message: 'Server no longer speaks protocol 2025-03-26',
        assertion: { expected: '2025-03-26', actual: '2025-11-25' },
      });
    }

    expect(named('h-up').byRegion.map((r) => [r.region, r.state?.outcome, r.state?.failing])).toEqual([
      ['eu-west', 'success', false],
      ['us-east', 'downgrade', false],
    ]);
    expect(named('h-one-region').byRegion.map((r) => r.state?.outcome)).toEqual(['success', 'unreachable']);
    expect(named('h-pin-only').byRegion.map((r) => [r.state?.outcome, r.state?.test.mode])).toEqual([
      ['unsupported_version', 'pinned'],
      ['success', 'pinned'],
    ]);
    expect(named('h-both').byRegion.map((r) => [r.state?.outcome, r.state?.test.mode])).toEqual([
      ['timeout', 'newest'],
    ]);
    expect(named('h-retired-pin').byRegion.map((r) => r.state?.outcome)).toEqual(['success']);
    expect(named('h-fresh').byRegion).toEqual([]);
  });

  it('counts live servers by health in the fleet summary, and filters the servers table by it', async () => {
    const summary = await fleetSummary(store.db, { since: minute(0), countRuns: false });
    expect(summary.health).toEqual({ failing: 2, degraded: 2, up: 2, not_run: 2 });
    expect(Object.values(summary.health).reduce((a, b) => a + b)).toBe(summary.servers);

    for (const health of ['failing', 'degraded', 'up', 'not_run'] as const) {
      const page = await serversPage(store.db, { health });
      const want = Object.keys(expected)
        .filter((n) => expected[n] === health)
        .sort();
      expect([page.total, page.servers.map((s) => s.name)], health).toEqual([want.length, want]);
    }
    // With the other filters: the failing servers probed in us-east.
    expect((await serversPage(store.db, { health: 'failing', region: 'us-east' })).servers.map((s) => s.name)).toEqual([
      'h-pin-fails',
    ]);
  });
});
