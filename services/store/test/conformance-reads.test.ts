// The dashboard's conformance reads: a server's last result per era, the fleet's check × server
// matrix and the share passing every MUST check. check_states rows are written here directly (as
// ingest would after a conformance run), each pointing at a real run written through recordRun.
import type { Revision } from '@mcp-fleet/probe';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkStates,
  conformanceByEra,
  conformanceMatrixNow,
  conformanceShare,
  recordRun,
  retireServer,
  type Server,
  type Store,
  serverConformanceResults,
  type Test,
  tests,
} from '../src';
import { BACKENDS } from './backends';
import { handshakeRun, resultOf, serverWithTests } from './fixtures';

const MIN = 60_000;
type Row = [check: string, level: 'MUST' | 'SHOULD', status: 'pass' | 'fail' | 'skip', message?: string];

describe.each(BACKENDS)('conformance reads on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  let alpha: Server;
  let bravo: Server;
  let charlie: Server;
  let delta: Server;
  let alphaTest: Test;
  const now = Date.now();
  const ago = (minutes: number) => new Date(now - minutes * MIN);

  /** A conformance run of `test` in `region` at `at` (a real run row), and its checks' states. */
  async function judged(test: Test, region: string, at: Date, negotiated: Revision, rows: Row[], since = at) {
    const era = negotiated === '2026-07-28' ? 'modern' : 'legacy';
    const run = await recordRun(
      store.db,
      resultOf(
        test,
        region,
        at,
        handshakeRun({
          negotiated,
          requested: negotiated,
          era,
          generation: era === 'modern' ? 'stateless' : 'sessions',
        }),
      ),
    );
    const runId = run.duplicate ? null : run.runId;
    await store.db
      .insert(checkStates)
      .values(
        rows.map(([checkId, level, status, message]) => ({
          testId: test.id,
          serverId: test.serverId,
          region,
          checkId,
          level,
          era,
          status,
          message: message ?? `${checkId} ${status}`,
          evidence: status === 'fail' ? { status: 200, bodyPreview: `{"evidence":"${checkId}"}` } : null,
          since,
          lastRunId: runId,
          lastRunAt: at,
        })),
      )
      .onConflictDoUpdate({
        target: [checkStates.testId, checkStates.region, checkStates.checkId],
        set: { status: checkStates.status },
      });
    return runId;
  }

  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
    const db = store.db;
    // alpha: a conformance test, modern in eu-west (a MUST failing since 90 min ago), modern in
    // us-east (all passing); it spoke legacy in eu-west before, with a legacy MUST failing.
    const A = await serverWithTests(db, ['newest'], { name: 'alpha' });
    // bravo: passes every MUST check (a SHOULD warning), legacy, one region.
    const B = await serverWithTests(db, ['newest'], { name: 'bravo', regions: ['eu-west'] });
    // charlie: a conformance test not run yet.
    const C = await serverWithTests(db, ['newest'], { name: 'charlie', regions: ['eu-west'] });
    // delta: handshake only; echo: conformance, failing, retired.
    const D = await serverWithTests(db, ['newest'], { name: 'delta', regions: ['eu-west'] });
    const E = await serverWithTests(db, ['newest'], { name: 'echo', regions: ['eu-west'] });
    [alpha, bravo, charlie, delta] = [A.server, B.server, C.server, D.server];
    alphaTest = A.tests[0]!;
    await db
      .update(tests)
      .set({ depth: 'conformance' })
      .where(inArray(tests.serverId, [alpha.id, bravo.id, charlie.id, E.server.id]));
    const conf = (t: Test) => ({ ...t, depth: 'conformance' }) as Test;

    await judged(conf(alphaTest), 'eu-west', ago(200), '2025-11-25', [
      ['server_info_present', 'MUST', 'fail', 'serverInfo has no version'],
      ['ping_succeeds', 'MUST', 'pass'],
    ]);
    await judged(
      conf(alphaTest),
      'eu-west',
      ago(5),
      '2026-07-28',
      [
        ['discover_succeeds', 'MUST', 'pass'],
        ['no_session_id', 'SHOULD', 'fail', 'Mcp-Session-Id minted'],
        ['result_type_present', 'MUST', 'fail', 'tools/list result has no resultType'],
        ['header_mismatch_rejected', 'MUST', 'skip', 'not on HTTP'],
      ],
      ago(90),
    );
    await judged(conf(alphaTest), 'us-east', ago(3), '2026-07-28', [
      ['discover_succeeds', 'MUST', 'pass'],
      ['no_session_id', 'SHOULD', 'pass'],
      ['result_type_present', 'MUST', 'pass'],
      ['header_mismatch_rejected', 'MUST', 'pass'],
    ]);
    await judged(conf(B.tests[0]!), 'eu-west', ago(4), '2025-06-18', [
      ['server_info_present', 'MUST', 'pass'],
      ['request_before_initialize_rejected', 'SHOULD', 'fail', 'answered with a result'],
      ['list_prompts_succeeds', 'MUST', 'skip', 'prompts not declared'],
    ]);
    await judged(conf(E.tests[0]!), 'eu-west', ago(4), '2026-07-28', [['discover_succeeds', 'MUST', 'fail']]);
    await retireServer(db, E.server.id);
  });

  afterAll(() => backend.dispose());

  it("gives a server's results per test, region and era, failures first, with the run's revision", async () => {
    const c = await serverConformanceResults(store.db, alpha.id);
    expect(c.tests).toEqual([{ id: alphaTest.id, mode: 'newest', pinnedRevision: null }]);
    expect(c.results.map((r) => [r.region, r.era, r.negotiated, r.current])).toEqual([
      ['us-east', 'modern', '2026-07-28', true],
      ['eu-west', 'modern', '2026-07-28', true],
      ['eu-west', 'legacy', '2025-11-25', false],
    ]);
    const euModern = c.results[1]!;
    expect(euModern.checks.map((k) => [k.checkId, k.level, k.status])).toEqual([
      ['result_type_present', 'MUST', 'fail'],
      ['no_session_id', 'SHOULD', 'fail'],
      ['discover_succeeds', 'MUST', 'pass'],
      ['header_mismatch_rejected', 'MUST', 'skip'],
    ]);
    expect(euModern.checks[0]).toMatchObject({
      message: 'tools/list result has no resultType',
      evidence: { status: 200, bodyPreview: '{"evidence":"result_type_present"}' },
      since: ago(90),
      lastRunAt: ago(5),
    });
    expect(euModern.lastRunId).toEqual(expect.any(Number));
  });

  it('merges a server’s regions per era for its page: the worst state, where it fails, the longest failing', async () => {
    const eras = conformanceByEra((await serverConformanceResults(store.db, alpha.id)).results);
    expect(eras.map((e) => [e.era, e.current, e.negotiated])).toEqual([
      ['modern', true, ['2026-07-28']],
      ['legacy', false, ['2025-11-25']],
    ]);
    const modern = eras[0]!;
    expect(modern.checks.map((k) => [k.checkId, k.status, k.failingRegions, k.regions, k.split])).toEqual([
      ['result_type_present', 'fail', ['eu-west'], ['eu-west', 'us-east'], true],
      ['no_session_id', 'fail', ['eu-west'], ['eu-west', 'us-east'], true],
      ['discover_succeeds', 'pass', [], ['eu-west', 'us-east'], false],
      // A pass in one region beats a skip in another: it ran somewhere and held.
      ['header_mismatch_rejected', 'pass', [], ['eu-west', 'us-east'], true],
    ]);
    expect(modern.checks[0]).toMatchObject({ message: 'tools/list result has no resultType', since: ago(90) });
  });

  it('shows nothing for a server without conformance tests, and a conformance test not run yet', async () => {
    expect(await serverConformanceResults(store.db, delta.id)).toEqual({ tests: [], results: [] });
    const c = await serverConformanceResults(store.db, charlie.id);
    expect([c.tests.length, c.results]).toEqual([1, []]);
  });

  it('builds the check × server matrix from the era each server speaks now, worst across regions', async () => {
    const m = await conformanceMatrixNow(store.db);
    // Live servers only (echo is retired), failing MUST checks first; the legacy row of alpha's
    // eu-west is an old era's and does not count.
    expect(m.servers.map((s) => [s.name, s.failingMust, s.failing])).toEqual([
      ['alpha', 1, 2],
      ['bravo', 0, 1],
    ]);
    const a = m.servers[0]!;
    expect(a.cells.server_info_present).toBeUndefined();
    expect(a.cells.result_type_present).toEqual({
      status: 'fail',
      regions: 2,
      failingRegions: 1,
      message: 'tools/list result has no resultType',
    });
    expect(a.cells.header_mismatch_rejected).toMatchObject({ status: 'pass', regions: 2, failingRegions: 0 });
    // Columns in the table's order (conformance-checks.ts): legacy checks, then modern ones.
    expect(m.checks.map((c) => c.id)).toEqual([
      'server_info_present',
      'list_prompts_succeeds',
      'request_before_initialize_rejected',
      'discover_succeeds',
      'result_type_present',
      'header_mismatch_rejected',
      'no_session_id',
    ]);
    expect(m.checks[0]).toMatchObject({ level: 'MUST', era: 'legacy', rule: expect.stringContaining('serverInfo') });
  });

  it('filters the matrix by era and by level', async () => {
    const legacy = await conformanceMatrixNow(store.db, { era: 'legacy' });
    expect(legacy.servers.map((s) => s.name)).toEqual(['bravo']);
    expect(legacy.checks.map((c) => c.id)).toEqual([
      'server_info_present',
      'list_prompts_succeeds',
      'request_before_initialize_rejected',
    ]);
    const must = await conformanceMatrixNow(store.db, { level: 'MUST' });
    expect(must.checks.every((c) => c.level === 'MUST')).toBe(true);
    expect(must.servers.map((s) => [s.name, s.failing])).toEqual([
      ['alpha', 1],
      ['bravo', 0],
    ]);
    const modernShould = await conformanceMatrixNow(store.db, { era: 'modern', level: 'SHOULD' });
    expect(modernShould.checks.map((c) => c.id)).toEqual(['no_session_id']);
    expect(modernShould.servers.map((s) => s.name)).toEqual(['alpha']);
  });

  it('counts the servers passing every MUST check, of those with a result now', async () => {
    expect(await conformanceShare(store.db)).toEqual({ servers: 3, judged: 2, passing: 1 });
    // Alpha's failing MUST clears in eu-west: both pass.
    await store.db.update(checkStates).set({ status: 'pass' }).where(eq(checkStates.checkId, 'result_type_present'));
    expect(await conformanceShare(store.db)).toEqual({ servers: 3, judged: 2, passing: 2 });
  });
});
