// The 2026-07-28 rules that need requests of their own (seed 000's table; docs/protocol.md#conformance-by-era).
// The rules every answer must keep (resultType, cache hints, serverInfo, no session, error codes)
// are judged over the whole run afterwards (observed.ts).

import { onPipe } from '../exchange';
import { errorOf, resultOf } from '../jsonrpc';
import { META } from '../openings/stateless';
import { firstLineOfNewProcess } from '../stdio/conversation';
import { type CheckRunner, resultFields } from './check-context';
import { modernMeta } from './connection';
import { NO_SUCH_TOOL } from './legacy';
import { answered, declares, fail, namesOf, pass, skip, statusIs } from './verdict';

/** A resource no server has. */
export const MISSING_RESOURCE = 'mcp-fleet://conformance/no-such-resource';
/** A protocol version from the future. */
export const UNKNOWN_VERSION = '2099-01-01';
/** How many pages of one list a run follows. */
export const MAX_PAGES = 5;

export const MODERN_CHECKS: Record<string, CheckRunner> = {
  discover_succeeds: async (c) => {
    const versions = resultFields(c.conn.opening).supportedVersions;
    if (!Array.isArray(versions)) return fail('DiscoverResult has no supportedVersions array', c.conn.opening);
    if (!versions.includes(c.conn.revision))
      return fail(`supportedVersions does not list ${c.conn.revision}`, c.conn.opening);
    return pass(`supportedVersions lists ${versions.filter((v) => typeof v === 'string').join(', ')}`);
  },
  discover_server_info: async (c) => {
    const meta = resultFields(c.conn.opening)._meta as Record<string, unknown> | undefined;
    const info = meta?.[META.serverInfo] as Record<string, unknown> | undefined;
    if (info && typeof info.name === 'string' && typeof info.version === 'string') return pass('serverInfo in _meta');
    return fail('DiscoverResult has no _meta serverInfo with a name and a version', c.conn.opening);
  },
  tools_list_deterministic: async (c) => {
    if (!declares(c.conn.capabilities, 'tools')) return skip('the server declares no tools capability');
    const first = await c.conn.call('tools/list');
    const second = await c.conn.call('tools/list');
    const a = namesOf(first, 'tools');
    const b = namesOf(second, 'tools');
    if (!a || !b) return fail(`tools/list got ${answered(a ? second : first, c.secrets)}`, a ? second : first);
    if (a.join('\n') === b.join('\n')) return pass(`${a.length} tools, the same order twice`);
    return fail(`the order changed between two calls: ${summary(a)} then ${summary(b)}`, second);
  },
  tools_list_stable_across_connections: async (c) => {
    if (!declares(c.conn.capabilities, 'tools')) return skip('the server declares no tools capability');
    // The first answer closes its TCP connection (over stdio: its process), so the second comes over a new one.
    const here = await c.conn.call('tools/list', {}, { reset: true });
    const there = await c.conn.call('tools/list');
    const a = namesOf(here, 'tools');
    const b = namesOf(there, 'tools');
    if (!a || !b) return fail(`tools/list got ${answered(a ? there : here, c.secrets)}`, a ? there : here);
    const missing = a.filter((n) => !b.includes(n));
    const added = b.filter((n) => !a.includes(n));
    if (missing.length === 0 && added.length === 0) return pass(`the same ${a.length} tools on a second connection`);
    return fail(
      `a second connection saw a different tool set (${[...missing.map((n) => `-${n}`), ...added.map((n) => `+${n}`)].slice(0, 6).join(' ')})`,
      there,
    );
  },
  cache_scope_consistent_across_pages: async (c) => {
    let paginated = 0;
    for (const key of ['tools', 'resources', 'prompts'] as const) {
      if (!declares(c.conn.capabilities, key)) continue;
      const scopes: unknown[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page += 1) {
        const ex = await c.conn.call(`${key}/list`, cursor === undefined ? {} : { cursor });
        const result = resultOf(ex.response);
        if (!result) break;
        scopes.push(result.cacheScope);
        cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
        if (cursor === undefined) break;
        if (scopes.length > 1 && scopes.at(-1) !== scopes[0])
          return fail(
            `${key}/list page ${scopes.length} has cacheScope ${JSON.stringify(scopes.at(-1))}, page 1 ${JSON.stringify(scopes[0])}`,
            ex,
          );
      }
      if (scopes.length > 1) {
        paginated += 1;
        if (new Set(scopes).size > 1)
          return fail(`${key}/list pages disagree on cacheScope: ${scopes.map((s) => JSON.stringify(s)).join(', ')}`);
      }
    }
    return paginated
      ? pass(`${paginated} paginated list(s), one cacheScope each`)
      : skip('no list returned a nextCursor');
  },
  resource_not_found_error: async (c) => {
    if (!declares(c.conn.capabilities, 'resources')) return skip('the server declares no resources capability');
    const ex = await c.conn.call('resources/read', { uri: MISSING_RESOURCE }, { deliberate: true });
    const err = errorOf(ex.response);
    if (err?.code === -32602) return pass('a missing resource got -32602');
    if (err) return fail(`a missing resource got ${answered(ex, c.secrets)}, not -32602`, ex);
    const contents = resultOf(ex.response)?.contents;
    return fail(
      `a missing resource got ${answered(ex, c.secrets)}${Array.isArray(contents) ? ` with ${contents.length} contents` : ''}`,
      ex,
    );
  },
  unknown_tool_protocol_error: async (c) => {
    if (!declares(c.conn.capabilities, 'tools')) return skip('the server declares no tools capability');
    const ex = await c.conn.call('tools/call', { name: NO_SUCH_TOOL, arguments: {} }, { deliberate: true });
    const err = errorOf(ex.response);
    if (err) return pass(`a JSON-RPC error ${err.code}`);
    if (resultOf(ex.response)?.isError === true)
      return fail('an unknown tool got a result with isError, not a protocol error', ex);
    return fail(`an unknown tool got ${answered(ex, c.secrets)}`, ex);
  },
  unsupported_version_rejected: async (c) => {
    // Over stdio the version is negotiated once, by a process's opening: ask a fresh process.
    const ex = c.conn.ctx.command
      ? await firstLineOfNewProcess(c.conn.ctx, 'server/discover', { _meta: modernMeta(UNKNOWN_VERSION) })
      : await c.conn.call(
          'server/discover',
          {},
          {
            headers: { 'mcp-protocol-version': UNKNOWN_VERSION },
            meta: modernMeta(UNKNOWN_VERSION),
            deliberate: true,
          },
        );
    const err = errorOf(ex.response);
    const supported = (err?.data as { supported?: unknown } | undefined)?.supported;
    // HTTP 400 where there is HTTP; over stdio the error alone.
    const http = onPipe(ex) ? '' : 'HTTP 400, ';
    if (err?.code === -32022 && Array.isArray(supported) && statusIs(ex, 400))
      return pass(`${http}-32022, supported: ${supported.filter((v) => typeof v === 'string').join(', ')}`);
    if (err?.code === -32022 && statusIs(ex, 400)) return fail('-32022 without data.supported', ex);
    return fail(
      `version ${UNKNOWN_VERSION} got ${answered(ex, c.secrets)}, not ${http ? 'HTTP 400 with ' : ''}-32022`,
      ex,
    );
  },
  missing_meta_rejected: async (c) => {
    const meta = modernMeta(c.conn.revision);
    delete meta[META.clientCapabilities];
    const method = declares(c.conn.capabilities, 'tools') ? 'tools/list' : 'server/discover';
    const ex = await c.conn.call(method, {}, { meta, deliberate: true });
    await c.stillAlive('a request without clientCapabilities');
    return c.expectCode(ex, -32602, `${method} without clientCapabilities in _meta`, 400);
  },
  header_mismatch_rejected: async (c) => {
    const method = declares(c.conn.capabilities, 'tools') ? 'tools/list' : 'server/discover';
    const other = method === 'tools/list' ? 'prompts/list' : 'tools/list';
    const ex = await c.conn.call(method, {}, { headers: { 'mcp-method': other }, deliberate: true });
    await c.stillAlive('a header that disagrees with the body');
    return c.expectCode(ex, -32020, `${method} sent with Mcp-Method: ${other}`, 400);
  },
  unknown_method_not_found: async (c) => c.expectCode(await c.unknownMethod(), -32601, 'an unknown method', 404),
};

function summary(names: string[]): string {
  return names.length > 4 ? `[${names.slice(0, 4).join(', ')}, …]` : `[${names.join(', ')}]`;
}
