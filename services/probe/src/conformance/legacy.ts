// The checks a legacy client relies on (docs/protocol.md#conformance-by-era): serverInfo on
// initialize, the lists of what it declares, tools/call of a missing tool, ping, and a request
// outside a session turned away.
import { excerpt } from '../bounds';
import { errorOf, resultOf } from '../jsonrpc';
import { sessionHeaders } from '../openings/sessions';
import { firstLineOfNewProcess } from '../stdio/conversation';
import type { CheckContext, CheckRunner } from './check-context';
import type { Connection } from './connection';
import { answered, declares, fail, pass, skip, succeeded, type Verdict } from './verdict';

/** A tool no server offers: calling it must come back as an error. */
export const NO_SUCH_TOOL = 'mcp_fleet_no_such_tool';

export const LEGACY_CHECKS: Record<string, CheckRunner> = {
  server_info_present: async (c) => {
    const info = resultOf(c.conn.opening.response)?.serverInfo as Record<string, unknown> | undefined;
    if (info && typeof info.name === 'string' && typeof info.version === 'string')
      return pass(
        `serverInfo ${JSON.stringify(excerpt(info.name, c.secrets, 60))} ${JSON.stringify(excerpt(info.version, c.secrets, 30))}`,
      );
    return fail(
      info ? 'serverInfo lacks a string name or version' : 'initialize returned no serverInfo',
      c.conn.opening,
    );
  },
  list_tools_succeeds: (c) => listSucceeds(c.conn, 'tools', c.secrets),
  list_resources_succeeds: (c) => listSucceeds(c.conn, 'resources', c.secrets),
  list_prompts_succeeds: (c) => listSucceeds(c.conn, 'prompts', c.secrets),
  invalid_tool_returns_error: async (c) => {
    if (!declares(c.conn.capabilities, 'tools')) return skip('the server declares no tools capability');
    const ex = await c.conn.call('tools/call', { name: NO_SUCH_TOOL, arguments: {} }, { deliberate: true });
    const err = errorOf(ex.response);
    if (err) return pass(`a JSON-RPC error ${err.code}`);
    if (resultOf(ex.response)?.isError === true) return pass('a result with isError: true');
    return fail(`a missing tool got ${answered(ex, c.secrets)}${resultOf(ex.response) ? ' without isError' : ''}`, ex);
  },
  ping_succeeds: async (c) => {
    const ex = await c.conn.call('ping');
    return succeeded(ex) ? pass('ping answered') : fail(`ping got ${answered(ex, c.secrets)}`, ex);
  },
  request_before_initialize_rejected: async (c) => {
    if (c.conn.ctx.command) return beforeInitializeOverStdio(c);
    if (c.conn.generation !== 'sessions') return skip('only the sessions generation has requests outside a session');
    // Sent beside the run's session, as a new client would before its initialize: no session id.
    const id = c.conn.ctx.nextId();
    const ex = await c.conn.ctx.send({
      method: 'POST',
      url: c.conn.ctx.target,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...sessionHeaders(c.conn.revision, undefined),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }),
      jsonRpcMethod: 'tools/list',
      jsonRpcId: id,
      deliberate: true,
    });
    await c.stillAlive('a request before initialize');
    if (succeeded(ex)) return fail('tools/list without initialize or a session got a result', ex);
    if (ex.failure) return fail(`a request before initialize got ${answered(ex, c.secrets)}`, ex);
    return pass(`turned away: ${answered(ex, c.secrets)}`);
  },
  method_not_found: async (c) => c.expectCode(await c.unknownMethod(), -32601, 'an unknown method'),
};

/** Over stdio "before initialize" is a process of its own whose first line is tools/list. */
async function beforeInitializeOverStdio(c: CheckContext): Promise<Verdict> {
  const ex = await firstLineOfNewProcess(c.conn.ctx, 'tools/list', {});
  if (succeeded(ex)) return fail('tools/list as the first line of a new process got a result', ex);
  if (ex.failure) return fail(`a request before initialize got ${answered(ex, c.secrets)}`, ex);
  return pass(`turned away: ${answered(ex, c.secrets)}`);
}

async function listSucceeds(
  conn: Connection,
  key: 'tools' | 'resources' | 'prompts',
  secrets: readonly string[],
): Promise<Verdict> {
  if (!declares(conn.capabilities, key)) return skip(`the server declares no ${key} capability`);
  const ex = await conn.call(`${key}/list`);
  const items = resultOf(ex.response)?.[key];
  if (succeeded(ex) && Array.isArray(items)) return pass(`${items.length} ${key}`);
  return fail(`${key}/list got ${answered(ex, secrets)}${succeeded(ex) ? ` without a ${key} array` : ''}`, ex);
}
