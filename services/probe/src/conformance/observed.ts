// The 2026-07-28 rules every answer keeps, judged over all the run's exchanges once the other
// checks have run: each result has resultType (and cache hints where the spec asks for them, and
// serverInfo in _meta), no answer mints a session, and no error uses a reserved or retired code.
import type { Exchange } from '../exchange';
import { errorOf, resultOf } from '../jsonrpc';
import { META } from '../openings/stateless';
import type { CheckContext } from './check-context';
import { fail, pass, skip, type Verdict } from './verdict';

/** Codes the 2026-07-28 revision defines inside its reserved range -32020..-32099. */
export const DEFINED_RESERVED_CODES = new Set([-32020, -32021, -32022]);
/** Codes earlier revisions used and 2026-07-28 retired. */
export const RETIRED_CODES = new Set([-32002, -32042]);

const CACHED = /^(server\/discover|[a-z]+\/list|resources\/read)$/;

type Observer = (c: CheckContext, exchanges: readonly Exchange[]) => Verdict;

function results(exchanges: readonly Exchange[]): [Exchange, Record<string, unknown>][] {
  return exchanges.flatMap((ex) => {
    const r = resultOf(ex.response);
    return r ? [[ex, r] as [Exchange, Record<string, unknown>]] : [];
  });
}

export const OBSERVED_CHECKS: Record<string, Observer> = {
  result_type_present: (_c, exchanges) => {
    const all = results(exchanges);
    const bad = all.find(([, r]) => typeof r.resultType !== 'string');
    if (bad) return fail(`the ${bad[0].jsonRpcMethod ?? 'request'} result has no resultType`, bad[0]);
    return all.length ? pass(`${all.length} results, each with resultType`) : skip('no result came back');
  },
  cache_hints_present: (_c, exchanges) => {
    const cached = results(exchanges).filter(([ex]) => CACHED.test(ex.jsonRpcMethod ?? ''));
    for (const [ex, r] of cached) {
      const ttl = r.ttlMs;
      if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl < 0)
        return fail(`the ${ex.jsonRpcMethod} result has no ttlMs ≥ 0`, ex);
      if (typeof r.cacheScope !== 'string') return fail(`the ${ex.jsonRpcMethod} result has no cacheScope`, ex);
    }
    return cached.length
      ? pass(`${cached.length} discover, list and read results with ttlMs and cacheScope`)
      : skip('no cacheable result came back');
  },
  result_server_info: (_c, exchanges) => {
    const all = results(exchanges).filter(([ex]) => ex.jsonRpcMethod !== 'server/discover');
    const bad = all.find(([, r]) => {
      const info = (r._meta as Record<string, unknown> | undefined)?.[META.serverInfo] as
        | Record<string, unknown>
        | undefined;
      return !info || typeof info.name !== 'string';
    });
    if (bad) return fail(`the ${bad[0].jsonRpcMethod ?? 'request'} result has no serverInfo in _meta`, bad[0]);
    return all.length ? pass(`${all.length} results carry serverInfo`) : skip('no result besides discover came back');
  },
  no_session_id: (_c, exchanges) => {
    const minted = exchanges.find((ex) => ex.headers.sessionId !== undefined);
    return minted
      ? fail(`the ${minted.jsonRpcMethod ?? minted.method} answer carries an Mcp-Session-Id`, minted)
      : pass(`${exchanges.length} answers, none with Mcp-Session-Id`);
  },
  reserved_error_codes: (_c, exchanges) => {
    for (const ex of exchanges) {
      const code = errorOf(ex.response)?.code;
      if (code === undefined) continue;
      if (RETIRED_CODES.has(code))
        return fail(`error ${code} is retired in 2026-07-28 (on ${ex.jsonRpcMethod ?? 'a request'})`, ex);
      if (code <= -32020 && code >= -32099 && !DEFINED_RESERVED_CODES.has(code))
        return fail(
          `error ${code} is in the reserved range -32020..-32099 but not defined (on ${ex.jsonRpcMethod ?? 'a request'})`,
          ex,
        );
    }
    return pass('no reserved or retired error codes');
  },
};
