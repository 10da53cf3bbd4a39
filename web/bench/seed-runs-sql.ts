// The runs table in one statement: every run derived from its number and its test/region's plan row.
import { PASSING_OUTCOMES, REVISIONS } from '@mcp-fleet/probe';
import { TIMEOUT_MS } from './seed-plan';

export const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;
export const sqlArray = (xs: readonly string[]) => `array[${xs.map(sqlText).join(', ')}]::text[]`;
export const REVS_SQL = sqlArray(REVISIONS.map((r) => r.revision));
export const GENS_SQL = sqlArray(REVISIONS.map((r) => r.generation));
/** `(…)` of the outcomes that pass (probe's rule), for `outcome [not] in` in the seed's SQL. */
export const PASSING_SQL = `(${PASSING_OUTCOMES.map(sqlText).join(', ')})`;
export const ERAS_SQL = sqlArray(REVISIONS.map((r) => r.era));
export const OUTCOME_TEXT = {
  success: 'The handshake succeeded.',
  downgrade: 'The server answered with an older revision than the one offered.',
};

/**
 * The runs: run j (0-based, id j+1) is slot j / Q of test/region j % Q. Everything a run says is
 * derived from j and its test/region's plan row, so the whole table is one statement.
 */
export const RUNS_SQL = `
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
