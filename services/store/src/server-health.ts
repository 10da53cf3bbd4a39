// A server's verdict, decided here and nowhere else: per region, the worst state across its tests
// (and the test that caused it), and for the server as a whole, up / degraded / failing / not run
// yet. The API, the dashboard and control's mcp_server_up all read these, so they cannot disagree.
import type { Outcome } from '@mcp-fleet/probe';
import { and, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Db } from './db';
import { servers, testStates, tests } from './schema';
import { shownTests } from './shown-tests';

/**
 * Run outcomes from best to worst. The passing ones first (a downgrade is reported, not failed),
 * then the failures by how many clients they break: a throttled probe may break none, a revision
 * no longer spoken (a pin's protocol mismatch) breaks the clients on that revision, the rest break
 * every client, the further from an MCP conversation the worse. An outcome missing from this list
 * ranks worst of all (store tests check every outcome of the probe is listed).
 */
export const OUTCOME_ORDER: readonly Outcome[] = [
  'success',
  'downgrade',
  'rate_limited',
  'unsupported_version',
  'timeout',
  'server_error',
  'protocol_error',
  'auth_required',
  'not_mcp',
  'unreachable',
];

/** How a server as a whole stands, across its tests and regions (see `serverHealth`). */
export const SERVER_HEALTHS = ['failing', 'degraded', 'up', 'not_run'] as const;
export type ServerHealth = (typeof SERVER_HEALTHS)[number];

export function isServerHealth(value: unknown): value is ServerHealth {
  return SERVER_HEALTHS.includes(value as ServerHealth);
}

/** The test a state belongs to, as the API and the dashboard name it. */
export interface TestRef {
  id: string;
  mode: 'newest' | 'pinned';
  pinnedRevision: string | null;
}

/** One test's state in one region: what `worstState` compares. */
export interface TestRegionState {
  lastOutcome: string | null;
  lastMessage: string | null;
  lastAssertion: unknown;
  lastRunAt: Date | null;
  /** Set by ingest from the run's outcome: the test's last run there did not pass. */
  failing: boolean;
}

/** The worst state of a server's tests in one region, and the test whose last run it is. */
export interface WorstState {
  outcome: string;
  failing: boolean;
  test: TestRef;
  message: string | null;
  /** That run's failed assertion (a pin: "Server no longer speaks protocol …"). */
  assertion: unknown;
  lastRunAt: Date | null;
}

/**
 * The worst of the given tests' states in one region: a failing state beats a passing one, then
 * OUTCOME_ORDER decides; on a tie the first given wins. Null when none of them has run there.
 */
export function worstState(candidates: { test: TestRef; state: TestRegionState }[]): WorstState | null {
  let worst: { test: TestRef; state: TestRegionState; key: number } | undefined;
  for (const { test, state } of candidates) {
    if (state.lastOutcome === null) continue;
    const rank = OUTCOME_ORDER.indexOf(state.lastOutcome as Outcome);
    const key = (state.failing ? 1 : 0) * 1000 + (rank === -1 ? OUTCOME_ORDER.length : rank);
    if (!worst || key > worst.key) worst = { test, state, key };
  }
  if (!worst) return null;
  const { test, state } = worst;
  return {
    outcome: state.lastOutcome!,
    failing: state.failing,
    test: { id: test.id, mode: test.mode, pinnedRevision: test.pinnedRevision },
    message: state.lastMessage,
    assertion: state.lastAssertion,
    lastRunAt: state.lastRunAt,
  };
}

/**
 * Each server's health (a retired one's as it was when retired), as a subquery of (server_id, health); servers none of whose active
 * tests has run anywhere have no row: read them as `not_run` (`healthOf`). Over the regions where
 * each test has run:
 * - failing: some test fails in every region where it has run;
 * - degraded: some test fails somewhere, but no test fails everywhere;
 * - up: every test passes in every region where it has run.
 * A test fails in a region when its last run there did not pass (test_states.failing, set by
 * ingest: anything but success or downgrade, a pin's protocol mismatch included).
 */
export function serverHealth(db: Db, opts: { serverIds?: string[] | undefined } = {}) {
  const perTest = db
    .select({
      serverId: tests.serverId,
      everywhere: sql<boolean>`bool_and(${testStates.failing})`.as('failing_everywhere'),
      somewhere: sql<boolean>`bool_or(${testStates.failing})`.as('failing_somewhere'),
    })
    .from(tests)
    // A live server's live tests; a retired server's last known health, from the tests it had.
    .innerJoin(servers, shownTests)
    .innerJoin(testStates, and(eq(testStates.testId, tests.id), isNotNull(testStates.lastOutcome)))
    // Only the servers asked for, when the caller knows them (a page of the list, one server).
    .where(opts.serverIds ? inArray(tests.serverId, opts.serverIds) : undefined)
    .groupBy(tests.id)
    .as('per_test');
  return db
    .select({
      serverId: perTest.serverId,
      health: sql<ServerHealth>`case when bool_or(${perTest.everywhere}) then 'failing'
        when bool_or(${perTest.somewhere}) then 'degraded' else 'up' end`.as('health'),
    })
    .from(perTest)
    .groupBy(perTest.serverId)
    .as('server_health');
}

/** A server's health from a `serverHealth` subquery joined on its id: no row is `not_run`. */
export function healthOf(health: ReturnType<typeof serverHealth>) {
  return sql<ServerHealth>`coalesce(${health.health}, 'not_run')`;
}
