// A realistic fleet for the dashboard's benchmark, written fast: servers, their tests and test
// states, a month of runs, era moves and one detection per server, into an already-created, empty
// database (migrated here). The small tables are planned here and inserted in one statement each;
// the runs (a million in the large fleet) are one `insert … select … from generate_series(…)`.
//
// The data tells one consistent story per test and region:
//   - runs come in slots: slot s holds one run of every test × region, spread evenly over `days`;
//   - a newest-supported test speaks a timeline of revisions; the run at each change is the move's
//     run (`now X, was Y`, previous_revision set, a downgrade when X is older), and era_moves are
//     exactly those runs; test_states.current_revision is the timeline's last revision, so it is
//     the to_revision of the test/region's latest move;
//   - a few pinned tests (2025-03-26) stop passing near the end of the range and fail their
//     `mcp.protocol.revision` assertion from then on;
//   - ~1% of runs fail (timeout, server_error, unsupported_version) and ~0.5% are downgrades: the
//     server now and then answering one revision older. Those blips are not era moves (the next run
//     is back on the timeline), which keeps the era-move history near three per server;
//   - test_states are the latest run of each test/region; detections agree with what the tests speak.
//
// CLI: tsx web/bench/seed.ts <databaseUrl> [--servers 1000] [--runs 1000000] [--days 30] [--regions eu-west,us-east]
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { REVISIONS, type Revision } from '@mcp-fleet/probe';
import { openStore } from '@mcp-fleet/store';
import pg from 'pg';

/** Bump when the shape of the seeded data changes: the benchmark reseeds databases of another version. */
export const SEED_VERSION = '2';

export const DEFAULT_REGIONS = ['eu-west', 'us-east'];
export const DEFAULT_DAYS = 30;

export interface SeedOptions {
  servers: number;
  runs: number;
  days?: number;
  regions?: string[];
  now?: Date;
  /** Progress lines (one per phase); default none. */
  log?: (msg: string) => void;
}

const DAY_MS = 86_400_000;
const INTERVAL_MS = 60_000;
const TIMEOUT_MS = 10_000;
/** Slots a test/region needs before its timeline may move (fewer: it keeps one revision). */
const MIN_SLOTS_FOR_MOVES = 8;
/** A slot no run reaches: "this move never happens". */
const NEVER = 2_147_483_647;
const FAILING_PIN: Revision = '2025-03-26';

const RANK = new Map<string, number>(REVISIONS.map((r, i) => [r.revision, i + 1]));
const rank = (r: Revision) => RANK.get(r)!;
const byRank = (k: number): Revision => REVISIONS[k - 1]!.revision;

// ─── the plan: servers, tests, timelines, detections (small, built here) ─────────────────────

interface ServerPlan {
  n: number;
  id: string;
  name: string;
  /** The revision the server speaks at the end of the range (its newest-supported tests' current). */
  final: Revision;
  pin: Revision | null;
  failingPin: boolean;
}

interface TestRegionPlan {
  q: number;
  testId: string;
  serverId: string;
  region: string;
  mode: 'newest' | 'pinned';
  pin: Revision | null;
  /** Slot from which the (pinned) test fails its assertion; null = never. */
  failFrom: number | null;
  /** The newest-supported test's timeline: revs[0] from the start, revs[i] from slot slots[i-1]. */
  revs: Revision[];
  slots: number[];
  /** The test/region's last slot (runs not divisible by test × region leave some one slot shorter). */
  lastSlot: number;
}

/** Deterministic noise in [0, 1) from a few integers (a 32-bit mix), so two seeds of one size agree. */
function noise(...xs: number[]): number {
  let h = 0x9e3779b9;
  for (const x of xs) {
    h = Math.imul(h ^ (x | 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return (h >>> 0) / 2 ** 32;
}

/** Weighted toward the newer revisions: 40% current, 30% 2025-11-25, 15%, 10%, 5% the oldest. */
function finalRevision(n: number): Revision {
  const u = noise(n, 1);
  return byRank(u < 0.4 ? 5 : u < 0.7 ? 4 : u < 0.85 ? 3 : u < 0.95 ? 2 : 1);
}

export function planFleet(opts: Required<Omit<SeedOptions, 'log'>>) {
  const { servers: count, runs, regions } = opts;
  const width = Math.max(4, String(count).length);
  const serverPlans: ServerPlan[] = [];
  const trs: TestRegionPlan[] = [];
  const testRows: { id: string; server_id: string; mode: string; pinned_revision: string | null }[] = [];

  for (let n = 1; n <= count; n++) {
    const id = randomUUID();
    // Every 4th server also has a test pinned to a legacy revision, the four in turn.
    const pin = n % 4 === 0 ? byRank(1 + ((n / 4) % 4)) : null;
    // A quarter of the 2025-03-26 pins stop passing: their server dropped that revision.
    const failingPin = pin === FAILING_PIN && Math.floor(n / 4 / 4) % 4 === 0;
    let final = finalRevision(n);
    if (pin && !failingPin && rank(final) < rank(pin)) final = pin;
    if (failingPin && rank(final) < 4) final = byRank(4);
    serverPlans.push({ n, id, name: `srv-${String(n).padStart(width, '0')}`, final, pin, failingPin });
  }

  // Test × region q runs in every slot s: run j = s·Q + q, so slot s is complete up to the last one.
  const tests: { server: ServerPlan; id: string; mode: 'newest' | 'pinned' }[] = [];
  for (const server of serverPlans) {
    tests.push({ server, id: randomUUID(), mode: 'newest' });
    if (server.pin) tests.push({ server, id: randomUUID(), mode: 'pinned' });
  }
  const Q = tests.length * regions.length;
  if (runs < Q) throw new Error(`${runs} runs cannot give each of the ${Q} tests × regions one run`);
  const minSlots = Math.floor(runs / Q);

  for (const t of tests) {
    const { server } = t;
    testRows.push({
      id: t.id,
      server_id: server.id,
      mode: t.mode,
      pinned_revision: t.mode === 'pinned' ? server.pin : null,
    });
    // The server's revision changes 0-3 times over the range (1.5 on average), seen by every region.
    const moves = minSlots >= MIN_SLOTS_FOR_MOVES ? Math.floor(noise(server.n, 2) * 4) : 0;
    const chain: Revision[] = [server.final];
    for (let i = moves; i >= 1; i--) {
      const to = rank(chain[0]!);
      // Mostly upgrades (the fleet moves toward the current revision), a quarter downgrades.
      const downgrade = to === 1 || (to < 5 && noise(server.n, 3, i) < 0.25);
      chain.unshift(byRank(downgrade ? to + 1 : to - 1));
    }
    const slots: number[] = [];
    for (let i = 1; i <= moves; i++) {
      // Move i falls somewhere in the i-th of `moves` equal parts of the range: uniform over the
      // fleet, so every range (the last 24 h too) has its share of moves.
      const f = (i - 1 + noise(server.n, 4, i)) / moves;
      const s = Math.min(minSlots - 1, Math.max(1, Math.floor(f * minSlots), (slots[i - 2] ?? 0) + 1));
      slots.push(s);
    }
    regions.forEach((region, g) => {
      const q = trs.length;
      const lastSlot = Math.floor((runs - 1 - q) / Q);
      let revs = chain;
      let at = slots;
      // ~3% of servers: the last region has not seen the latest change yet (a rollout in progress).
      if (t.mode === 'newest' && g === regions.length - 1 && g > 0 && moves > 0 && noise(server.n, 5) < 0.03) {
        revs = chain.slice(0, -1);
        at = slots.slice(0, -1);
      }
      let failFrom: number | null = null;
      if (t.mode === 'pinned' && server.failingPin) {
        failFrom = Math.max(1, minSlots - Math.max(1, Math.round(minSlots * (0.05 + 0.03 * noise(server.n, 6)))));
      }
      trs.push({
        q,
        testId: t.id,
        serverId: server.id,
        region,
        mode: t.mode,
        pin: t.mode === 'pinned' ? server.pin : null,
        failFrom,
        revs: t.mode === 'pinned' ? [server.pin!] : revs,
        slots: t.mode === 'pinned' ? [] : at,
        lastSlot,
      });
    });
  }
  return { servers: serverPlans, tests: testRows, trs, Q, slotsPerTr: Math.ceil(runs / Q) };
}

// ─── detections: the shape of @mcp-fleet/probe's Detection ──────────────────────────────────

function noteSentence(note: string): string {
  if (note === 'current') return 'This is the current protocol revision.';
  if (note.startsWith('deprecated')) return 'This revision is deprecated and eligible for removal.';
  return 'This is not the current revision.';
}

function evidence(e: {
  status: number | null;
  contentType: string | null;
  bodyPreview: string | null;
  jsonRpcErrorCode?: number;
  jsonRpcErrorMessage?: string;
  millis: number;
  message: string;
}) {
  return {
    status: e.status,
    contentType: e.contentType,
    bodyPreview: e.bodyPreview,
    jsonRpcErrorCode: e.jsonRpcErrorCode ?? null,
    jsonRpcErrorMessage: e.jsonRpcErrorMessage ?? null,
    millis: e.millis,
    reachabilityFailure: null,
    message: e.message,
  };
}

type Evidence = ReturnType<typeof evidence>;

interface RevisionEntry {
  revision: Revision;
  generation: string;
  supported: boolean;
  note: string;
  sentence: string;
  serverInfo?: { name: string; version: string };
  evidence?: Evidence;
}

export function detectionOf(server: ServerPlan) {
  const top = rank(server.final);
  // The server accepts a contiguous range of revisions up to the one it speaks, its pin included.
  let low = Math.max(1, top - Math.floor(noise(server.n, 7) * 3));
  if (server.pin && !server.failingPin) low = Math.min(low, rank(server.pin));
  if (server.failingPin) low = Math.max(low, rank(FAILING_PIN) + 1);
  const serverInfo = { name: `${server.name}-mcp`, version: `1.${server.n % 7}.${server.n % 13}` };
  const supportedSessions = [...Array(top - low + 1)].map((_, i) => byRank(low + i)).filter((r) => rank(r) <= 4);
  const newestSessions = supportedSessions[supportedSessions.length - 1];
  const revisions = REVISIONS.map((info, i): RevisionEntry => {
    const k = i + 1;
    const millis = 8 + Math.floor(noise(server.n, 8, k) * 120);
    const base = { revision: info.revision, generation: info.generation, note: info.note };
    const head = `${info.revision} (${info.generation})`;
    if (k >= low && k <= top) {
      return { ...base, supported: true, sentence: `${head}: supported. ${noteSentence(info.note)}`, serverInfo };
    }
    if (info.generation === 'HTTP+SSE transport') {
      const ev = evidence({
        status: 405,
        contentType: 'text/plain',
        bodyPreview: 'Method Not Allowed',
        millis,
        message: 'GET: the answer is not JSON-RPC (HTTP 405, text/plain)',
      });
      return { ...base, supported: false, sentence: `${head}: not supported (HTTP 405, text/plain).`, evidence: ev };
    }
    if (info.generation === 'sessions' && newestSessions) {
      const body = JSON.stringify({
        result: { protocolVersion: newestSessions, capabilities: { tools: {} }, serverInfo },
        jsonrpc: '2.0',
        id: 1,
      });
      const ev = evidence({
        status: 200,
        contentType: 'application/json',
        bodyPreview: body.slice(0, 200),
        millis,
        message: `The server answered with protocol ${newestSessions} instead.`,
      });
      return {
        ...base,
        supported: false,
        sentence: `${head}: not supported (the server answered with ${newestSessions}).`,
        evidence: ev,
      };
    }
    // A stateless-only server turns initialize away; a sessions server has no server/discover.
    const what = info.generation === 'stateless' ? 'server/discover' : 'initialize';
    const code = info.generation === 'stateless' ? -32000 : -32601;
    const text = info.generation === 'stateless' ? 'Bad Request: No valid session ID provided' : 'Method not found';
    const ev = evidence({
      status: 400,
      contentType: 'application/json',
      bodyPreview: JSON.stringify({ jsonrpc: '2.0', error: { code, message: text }, id: null }),
      jsonRpcErrorCode: code,
      jsonRpcErrorMessage: text,
      millis,
      message: `${what}: JSON-RPC error ${code} ${text} (HTTP 400, application/json)`,
    });
    return {
      ...base,
      supported: false,
      sentence: `${head}: not supported (HTTP 400, application/json).`,
      evidence: ev,
    };
  });
  const newest = [...revisions].reverse().find((r) => r.supported);
  return {
    outcome: newest ? 'DETECTED' : 'NONE',
    // Every unsupported revision answered about itself (HTTP 400 with a JSON-RPC error): no cause.
    cause: null,
    retryAfterHeader: null,
    newestSupported: newest?.revision ?? null,
    serverInfo: newest ? serverInfo : null,
    requests: 6 + Math.floor(noise(server.n, 9) * 3),
    millis: Math.max(...revisions.map((r) => r.evidence?.millis ?? 0)) + 40 + Math.floor(noise(server.n, 10) * 200),
    revisions,
  };
}

// ─── the seed ─────────────────────────────────────────────────────────────────────────────────

const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;
const sqlArray = (xs: readonly string[]) => `array[${xs.map(sqlText).join(', ')}]::text[]`;
const REVS_SQL = sqlArray(REVISIONS.map((r) => r.revision));
const GENS_SQL = sqlArray(REVISIONS.map((r) => r.generation));
const ERAS_SQL = sqlArray(REVISIONS.map((r) => r.era));
const OUTCOME_TEXT = {
  success: 'The handshake succeeded.',
  downgrade: 'The server answered with an older revision than the one offered.',
};

/**
 * The runs: run j (0-based, id j+1) is slot j / Q of test/region j % Q. Everything a run says is
 * derived from j and its test/region's plan row, so the whole table is one statement.
 */
const RUNS_SQL = `
with k as (select ${REVS_SQL} as revs, ${GENS_SQL} as gens, ${ERAS_SQL} as eras),
slot as (
  select j, (j % $2)::int as q, (j / $2)::int as s,
    abs(hashint8extended(j, 1) % 1000)::int as u,
    abs(hashint8extended(j, 2) % 1000)::int as u2,
    abs(hashint8extended(j, 3) % 200)::int as pickup
  from generate_series(0::bigint, $1::bigint - 1) j
),
timeline as (
  select slot.*, t.test_id, t.server_id, t.region, t.mode, t.pin, t.fail_from, t.last_s,
    case when t.mode = 'pinned' then t.pin
         when s >= t.s3 then t.rev3 when s >= t.s2 then t.rev2 when s >= t.s1 then t.rev1 else t.rev0 end as cur,
    case when s = t.s3 then t.rev2 when s = t.s2 then t.rev1 when s = t.s1 then t.rev0 end as prev
  from slot join seed_tr t using (q)
),
kinds as (
  select timeline.*, array_position(k.revs, cur) as cur_rank, array_position(k.revs, prev) as prev_rank,
    case when fail_from is not null and s >= fail_from then 'pinfail'
         when prev is not null then 'move'
         when u < 5 then 'timeout'
         when u < 9 then 'server_error'
         when u < 10 then case when mode = 'newest' then 'unknown' else 'server_error' end
         when u < 15 and mode = 'newest' and s < last_s and cur <> k.revs[1] then 'blip'
         else 'ok' end as kind
  from timeline cross join k
),
shaped as (
  select kinds.*,
    case kind when 'move' then prev else cur end as requested,
    case when kind in ('pinfail', 'timeout', 'server_error', 'unknown') then null
         when kind = 'blip' then k.revs[cur_rank - 1] else cur end as negotiated,
    case k.gens[case kind when 'move' then prev_rank else cur_rank end]
      when 'stateless' then 'server/discover' when 'HTTP+SSE transport' then 'GET' else 'initialize' end as what,
    case k.gens[cur_rank] when 'stateless' then 1 when 'sessions' then 2 else 3 end as base_requests,
    case when kind = 'timeout' then ${TIMEOUT_MS} + u2 % 40 else 5 + (u2 * u2) / 2500 end as millis
  from kinds cross join k
)
insert into runs (id, job_id, test_id, server_id, region, agent, mode, requested, negotiated, previous_revision,
  generation, era, outcome, message, assertion, evidence, requests, millis, trace_id,
  scheduled_at, started_at, finished_at)
select j + 1, 'seed-' || (j + 1), test_id, server_id, region, 'seed-agent', mode, requested, negotiated,
  case when kind = 'move' then prev end,
  k.gens[array_position(k.revs, coalesce(negotiated, requested))],
  k.eras[array_position(k.revs, coalesce(negotiated, requested))],
  case kind when 'pinfail' then 'unsupported_version' when 'unknown' then 'unsupported_version'
    when 'timeout' then 'timeout' when 'server_error' then 'server_error' when 'blip' then 'downgrade'
    when 'move' then case when cur_rank < prev_rank then 'downgrade' else 'success' end
    else 'success' end,
  case kind
    when 'pinfail' then 'Server no longer speaks protocol ' || pin
    when 'unknown' then 'the server answered with protocol 2099-01-01, which mcp-fleet does not know'
    when 'timeout' then what || ': no answer within ${TIMEOUT_MS} ms'
    when 'server_error' then what || ': the server failed (HTTP 503, text/html)'
    when 'blip' then ${sqlText(OUTCOME_TEXT.downgrade)} || '; the server answered ' || negotiated
      || ' to an offer of ' || requested
    when 'move' then 'now ' || cur || ', was ' || prev || case when cur_rank < prev_rank
      then '; the server answered ' || cur || ' to an offer of ' || prev else '' end
    else ${sqlText(OUTCOME_TEXT.success)} end,
  case when kind = 'pinfail' then jsonb_build_object('name', 'mcp.protocol.revision', 'expected', pin,
    'actual', 'unsupported', 'message', 'Server no longer speaks protocol ' || pin) end,
  case kind
    when 'pinfail' then jsonb_build_object('status', 200, 'contentType', 'application/json',
      'bodyPreview', '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unsupported protocol version"}}',
      'jsonRpcErrorCode', -32602, 'jsonRpcErrorMessage', 'Unsupported protocol version', 'millis', millis,
      'reachabilityFailure', null,
      'message', what || ': JSON-RPC error -32602 Unsupported protocol version (HTTP 200, application/json)')
    when 'unknown' then jsonb_build_object('status', 200, 'contentType', 'application/json',
      'bodyPreview', '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2099-01-01","capabilities":{}}}',
      'jsonRpcErrorCode', null, 'jsonRpcErrorMessage', null, 'millis', millis, 'reachabilityFailure', null,
      'message', 'the server answered with protocol 2099-01-01, which mcp-fleet does not know')
    when 'timeout' then jsonb_build_object('status', null, 'contentType', null, 'bodyPreview', null,
      'jsonRpcErrorCode', null, 'jsonRpcErrorMessage', null, 'millis', millis, 'reachabilityFailure', 'timeout',
      'message', what || ': no answer within ${TIMEOUT_MS} ms')
    when 'server_error' then jsonb_build_object('status', 503, 'contentType', 'text/html',
      'bodyPreview', '<html><body><h1>503 Service Unavailable</h1></body></html>',
      'jsonRpcErrorCode', null, 'jsonRpcErrorMessage', null, 'millis', millis, 'reachabilityFailure', null,
      'message', what || ': the server failed (HTTP 503, text/html)')
  end,
  case kind when 'timeout' then 1 when 'server_error' then 1
    -- an upgrade is found by a lookup after the era signal: opening, lookup, opening again
    when 'move' then case when cur_rank > prev_rank then least(10, base_requests + 3) else base_requests end
    else base_requests end,
  millis, null,
  fin - make_interval(secs => (millis + 5 + pickup) / 1000.0),
  fin - make_interval(secs => millis / 1000.0),
  fin
from (
  select shaped.*, $3::timestamptz + make_interval(secs => floor((s::float8 * $2 + q) * $4 / $2) / 1000.0) as fin
  from shaped
) r cross join k
order by j`;

export async function seedFleet(databaseUrl: string, opts: SeedOptions): Promise<{ serverIds: string[] }> {
  const days = opts.days ?? DEFAULT_DAYS;
  const regions = opts.regions ?? DEFAULT_REGIONS;
  const now = opts.now ?? new Date();
  const log = opts.log ?? (() => {});
  if (!Number.isInteger(opts.servers) || opts.servers < 1) throw new Error(`servers must be ≥ 1: ${opts.servers}`);
  if (!Number.isInteger(opts.runs) || opts.runs < 1) throw new Error(`runs must be ≥ 1: ${opts.runs}`);
  if (!(days > 0)) throw new Error(`days must be > 0: ${days}`);
  if (regions.length === 0 || new Set(regions).size !== regions.length) throw new Error('regions must be distinct');

  const store = await openStore({ databaseUrl });
  try {
    await store.migrate();
  } finally {
    await store.close();
  }

  const plan = planFleet({ servers: opts.servers, runs: opts.runs, days, regions, now });
  const start = new Date(now.getTime() - days * DAY_MS);
  const createdAt = new Date(now.getTime() - (days + 1) * DAY_MS);
  const slotMs = (days * DAY_MS) / plan.slotsPerTr;

  // One connection: the plan lives in a temporary table, and the session settings hold throughout.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const phase = async (what: string, fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    log(`  ${what}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  };
  try {
    const existing = await client.query<{ n: number }>(
      'select (select count(*) from servers)::int + (select count(*) from runs)::int as n',
    );
    if (existing.rows[0]!.n > 0) throw new Error('the database is not empty: seed a fresh one');
    await client.query(`set synchronous_commit = off`);
    await client.query(`set maintenance_work_mem = '256MB'`);
    await client.query(`set work_mem = '64MB'`);

    await phase(`servers, tests (${plan.servers.length}, ${plan.tests.length})`, async () => {
      await client.query(
        `insert into servers (id, name, url, headers, regions, interval_ms, timeout_ms, detection_interval_ms, source,
           created_at, updated_at)
         select id, name, 'http://127.0.0.1:9/' || name, '{}'::jsonb, null, ${INTERVAL_MS}, ${TIMEOUT_MS}, null, 'api',
           $2, $2
         from jsonb_to_recordset($1::jsonb) as x(id uuid, name text)
         order by name`,
        [JSON.stringify(plan.servers.map((s) => ({ id: s.id, name: s.name }))), createdAt],
      );
      await client.query(
        `insert into tests (id, server_id, mode, pinned_revision, created_at)
         select id, server_id, mode, pinned_revision, $2
         from jsonb_to_recordset($1::jsonb) as x(id uuid, server_id uuid, mode text, pinned_revision text)`,
        [JSON.stringify(plan.tests), createdAt],
      );
    });

    await client.query(
      `create temporary table seed_tr (
         q int primary key, test_id uuid not null, server_id uuid not null, region text not null, mode text not null,
         pin text, fail_from int, last_s int not null,
         rev0 text not null, s1 int not null, rev1 text, s2 int not null, rev2 text, s3 int not null, rev3 text)`,
    );
    await client.query(
      `insert into seed_tr
       select * from jsonb_to_recordset($1::jsonb) as x(q int, test_id uuid, server_id uuid, region text, mode text,
         pin text, fail_from int, last_s int, rev0 text, s1 int, rev1 text, s2 int, rev2 text, s3 int, rev3 text)`,
      [
        JSON.stringify(
          plan.trs.map((t) => ({
            q: t.q,
            test_id: t.testId,
            server_id: t.serverId,
            region: t.region,
            mode: t.mode,
            pin: t.pin,
            fail_from: t.failFrom,
            last_s: t.lastSlot,
            rev0: t.revs[0],
            s1: t.slots[0] ?? NEVER,
            rev1: t.revs[1] ?? null,
            s2: t.slots[1] ?? NEVER,
            rev2: t.revs[2] ?? null,
            s3: t.slots[2] ?? NEVER,
            rev3: t.revs[3] ?? null,
          })),
        ),
      ],
    );
    await client.query('analyze seed_tr');

    // The runs' secondary indexes are built once after the insert rather than maintained row by row:
    // whatever indexes the migrations define, recreated from their own definitions.
    const runIndexes = await client.query<{ name: string; def: string }>(
      `select quote_ident(i.indexname) as name, i.indexdef as def from pg_indexes i
       where i.schemaname = current_schema() and i.tablename = 'runs'
         and i.indexname not in (select conname from pg_constraint where conrelid = 'runs'::regclass)`,
    );
    await phase(`runs (${opts.runs.toLocaleString('en-US')})`, async () => {
      for (const ix of runIndexes.rows) await client.query(`drop index ${ix.name}`);
      await client.query(RUNS_SQL, [opts.runs, plan.Q, start, slotMs]);
      await client.query(`select setval(pg_get_serial_sequence('runs', 'id'), $1)`, [opts.runs]);
    });
    await phase(`runs indexes (${runIndexes.rows.length})`, async () => {
      for (const ix of runIndexes.rows) await client.query(ix.def);
    });

    await phase('test states, era moves, detections', async () => {
      // Each test/region's state is its latest run: run (last slot)·Q + q.
      await client.query(
        `insert into test_states (test_id, region, current_revision, last_outcome, last_message, last_assertion,
           failing, last_run_id, last_run_at, last_scheduled_at)
         select t.test_id, t.region, coalesce(t.rev3, t.rev2, t.rev1, t.rev0), r.outcome, r.message, r.assertion,
           r.outcome not in ('success', 'downgrade'), r.id, r.finished_at, r.scheduled_at
         from seed_tr t join runs r on r.id = t.last_s::bigint * $1 + t.q + 1
         order by t.q`,
        [plan.Q],
      );
      await client.query(
        `insert into era_moves (server_id, test_id, region, run_id, from_revision, to_revision, downgrade,
           era_changed, at)
         select server_id, test_id, region, id, previous_revision, negotiated,
           array_position(k.revs, negotiated) < array_position(k.revs, previous_revision),
           k.eras[array_position(k.revs, negotiated)] <> k.eras[array_position(k.revs, previous_revision)],
           finished_at
         from runs cross join (select ${REVS_SQL} as revs, ${ERAS_SQL} as eras) k
         where previous_revision is not null
         order by finished_at, id`,
      );
      const detections = plan.servers.map((s) => {
        const d = detectionOf(s);
        // The latest detection: within the last day, from the first region.
        const at = new Date(now.getTime() - Math.floor(noise(s.n, 11) * DAY_MS));
        return {
          job_id: `seed-detect-${s.n}`,
          server_id: s.id,
          region: regions[0],
          outcome: d.outcome,
          newest_supported: d.newestSupported,
          result: d,
          at,
        };
      });
      await client.query(
        `insert into detections (job_id, server_id, region, outcome, newest_supported, result, at)
         select job_id, server_id, region, outcome, newest_supported, result, at
         from jsonb_to_recordset($1::jsonb) as x(job_id text, server_id uuid, region text, outcome text,
           newest_supported text, result jsonb, at timestamptz)
         order by at`,
        [JSON.stringify(detections)],
      );
    });

    // Vacuum as well as analyze: the visibility map lets the count queries scan indexes alone, as
    // they do on a database autovacuum has been keeping.
    // With asynchronous commit, vacuum may not mark pages all-visible before the commits are flushed.
    await client.query('set synchronous_commit = on');
    await client.query('select txid_current()');
    await phase('vacuum analyze', () => client.query('vacuum analyze'));
    return { serverIds: plan.servers.map((s) => s.id) };
  } finally {
    await client.end();
  }
}

/** Sanity of a seeded database: counts and the invariants the data promises. */
export async function describeSeed(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(`
      select
        (select count(*) from servers)::int as servers,
        (select count(*) from tests)::int as tests,
        (select count(*) from test_states)::int as test_states,
        (select count(*) from runs)::int as runs,
        (select count(*) from era_moves)::int as era_moves,
        (select count(*) from detections)::int as detections,
        (select count(*) from test_states where failing)::int as failing_states,
        (select count(*) from runs where outcome = 'downgrade')::int as downgrades,
        (select count(*) from runs where outcome not in ('success', 'downgrade'))::int as failed_runs,
        (select count(*) from test_states s where s.current_revision is distinct from (
           select m.to_revision from era_moves m
           where m.test_id = s.test_id and m.region = s.region order by m.at desc, m.id desc limit 1)
         and exists (select 1 from era_moves m where m.test_id = s.test_id and m.region = s.region)
        )::int as states_off_their_latest_move`);
    return rows[0] as Record<string, number>;
  } finally {
    await client.end();
  }
}

async function cli(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      servers: { type: 'string', default: '1000' },
      runs: { type: 'string', default: '1000000' },
      days: { type: 'string', default: String(DEFAULT_DAYS) },
      regions: { type: 'string', default: DEFAULT_REGIONS.join(',') },
    },
  });
  const url = positionals[0];
  if (!url) {
    console.error(
      'usage: tsx web/bench/seed.ts <databaseUrl> [--servers 1000] [--runs 1000000] [--days 30] [--regions a,b]',
    );
    process.exit(2);
  }
  const opts = {
    servers: Number(values.servers),
    runs: Number(values.runs),
    days: Number(values.days),
    regions: values.regions.split(',').filter(Boolean),
    log: (m: string) => console.log(m),
  };
  const t0 = performance.now();
  console.log(`seeding ${opts.servers} servers, ${opts.runs.toLocaleString('en-US')} runs over ${opts.days} days`);
  await seedFleet(url, opts);
  console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  console.log(await describeSeed(url));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
