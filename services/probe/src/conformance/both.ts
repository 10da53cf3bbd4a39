// The checks that hold in both eras (seed 002, sections 3 and 7): capabilities are contracts, and
// bad input gets a clean JSON-RPC error — each bad request followed by a valid one proving the
// server survived it (`server_alive_after_bad_input`, judged once they have all been sent).
import { errorOf } from '../jsonrpc';
import { type CheckContext, type CheckRunner, resultFields } from './check-context';
import { modernMeta } from './connection';
import { answered, declares, fail, pass, skip, succeeded, type Verdict } from './verdict';

const LISTED = ['tools', 'resources', 'prompts'] as const;

/** The params a valid request carries on this connection (modern ones keep their `_meta` in the body). */
function params(c: CheckContext, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return c.conn.era === 'modern' ? { ...extra, _meta: modernMeta(c.conn.revision) } : extra;
}

export const BOTH_CHECKS: Record<string, CheckRunner> = {
  undeclared_capability_not_found: async (c) => {
    const missing = LISTED.find((k) => !declares(c.conn.capabilities, k));
    if (!missing) return skip('the server declares tools, resources and prompts');
    const ex = await c.conn.call(`${missing}/list`, {}, { deliberate: true });
    await c.stillAlive(`${missing}/list of an undeclared capability`);
    return c.expectCode(ex, -32601, `${missing}/list (${missing} not declared)`);
  },
  list_changed_consistent: async (c) => {
    const declared = LISTED.filter(
      (k) => declares(c.conn.capabilities, k) && 'listChanged' in (c.conn.capabilities[k] as object),
    );
    if (declared.length === 0) return skip('no capability declares listChanged');
    for (const key of declared) {
      const value = (c.conn.capabilities[key] as Record<string, unknown>).listChanged;
      if (typeof value !== 'boolean')
        return fail(`capabilities.${key}.listChanged is ${typeof value}, not a boolean`, c.conn.opening);
      const ex = await c.conn.call(`${key}/list`);
      if (!succeeded(ex))
        return fail(`${key} declares listChanged, but ${key}/list got ${answered(ex, c.secrets)}`, ex);
    }
    return pass(`listChanged is a boolean on ${declared.join(', ')}, each list works`);
  },
  malformed_json_parse_error: (c) =>
    c.badInput(
      'malformed JSON',
      () => c.conn.raw('{"jsonrpc":"2.0","id":1,"method":', { method: 'tools/list' }),
      -32700,
    ),
  missing_jsonrpc_invalid_request: (c) => {
    const id = c.conn.ctx.nextId();
    return c.badInput(
      'a request without jsonrpc',
      () => c.conn.raw(JSON.stringify({ id, method: 'tools/list', params: params(c) }), { id, method: 'tools/list' }),
      -32600,
    );
  },
  invalid_params_error: async (c) => {
    if (!declares(c.conn.capabilities, 'tools')) return skip('the server declares no tools capability');
    // tools/call without a name; on HTTP the Mcp-Name header names the tool the body leaves out,
    // so the server must find the params, not the headers, wrong.
    const headers: Record<string, string> = c.conn.era === 'modern' ? { 'mcp-name': 'mcp_fleet_no_such_tool' } : {};
    return c.badInput(
      'tools/call without a name',
      () => c.conn.call('tools/call', { arguments: {} }, { headers, deliberate: true }),
      -32602,
    );
  },
  notification_with_id_answered: async (c) => {
    const id = c.conn.ctx.nextId();
    const method = 'notifications/initialized';
    const headers: Record<string, string> = c.conn.era === 'modern' ? { 'mcp-method': method } : {};
    const ex = await c.conn.raw(JSON.stringify({ jsonrpc: '2.0', id, method, params: params(c) }), {
      id,
      method,
      headers,
    });
    await c.stillAlive('a notification sent with an id');
    const err = errorOf(ex.response);
    if (err) return pass(`a JSON-RPC error ${err.code}`);
    if (!ex.failure && ex.status !== null && ex.status >= 400 && ex.status < 500)
      return pass(`turned away with HTTP ${ex.status}`);
    if (ex.status === 202 || (ex.status !== null && ex.status < 300 && !resultFields(ex).resultType && !ex.response))
      return fail(`treated as a notification (HTTP ${ex.status}, no answer): a client waiting on id ${id} hangs`, ex);
    return fail(`a notification with an id got ${answered(ex, c.secrets)}`, ex);
  },
};

/** Judged after every bad request was sent: each was followed by a valid request that succeeded. */
export function aliveAfterBadInput(c: CheckContext): Verdict {
  if (c.badInputs.length === 0) return skip('no bad request was sent');
  if (c.deadAfter)
    return fail(
      `after ${c.deadAfter.after}, a valid request got ${answered(c.deadAfter.ex, c.secrets)}`,
      c.deadAfter.ex,
    );
  return pass(`a valid request succeeded after each of ${c.badInputs.length} bad requests`);
}
