import { describe, expect, it } from 'vitest';
import { CONFORMANCE_CHECKS, checkById, checksFor, skipReason } from '../src';

// The 2026-07-28 rules as the framework guide's "Conformance by era" table states them: id, level,
// rule, in its order (docs/protocol.md, "Conformance by era"). The monitor's ids and levels are these,
// verbatim, so a report can sit beside that framework's.
const MODERN_TABLE = `
discover_succeeds | MUST | server/discover works and lists the negotiated version
discover_server_info | SHOULD | DiscoverResult carries _meta["io.modelcontextprotocol/serverInfo"]
result_type_present | MUST | Every result has resultType
cache_hints_present | MUST | ttlMs ≥ 0 and cacheScope on discover, list, and read results
result_server_info | SHOULD | Results carry serverInfo in _meta
tools_list_deterministic | SHOULD | tools/list returns the same order each time
tools_list_stable_across_connections | MUST | A second connection sees the same tool set
cache_scope_consistent_across_pages | MUST | Every page of a paginated list has the same cacheScope
resource_not_found_error | MUST | A missing resource is -32602, not -32002 or empty contents
unknown_tool_protocol_error | SHOULD | An unknown tool is a JSON-RPC protocol error rather than isError
unsupported_version_rejected | MUST | An unknown version gets -32022 with data.supported (and HTTP 400)
missing_meta_rejected | MUST | A request whose _meta lacks clientCapabilities gets -32602 (HTTP 400)
header_mismatch_rejected | MUST | HTTP: Mcp-Method or Mcp-Name that disagrees with the body gets 400 / -32020
unknown_method_not_found | MUST | HTTP: an unknown method gets 404 / -32601
no_session_id | SHOULD | HTTP: no Mcp-Session-Id is minted or echoed back
reserved_error_codes | MUST | No undefined codes in -32020..-32099; no retired -32002 / -32042
`
  .trim()
  .split('\n')
  .map((line) => {
    const [id, level, rule] = line.split(' | ');
    return { id, level, rule };
  });

describe('the conformance check table', () => {
  it('has the sixteen 2026-07-28 rules with the guide’s ids, levels and rules, in its order', () => {
    const modern = CONFORMANCE_CHECKS.filter((c) => c.era === 'modern').map(({ id, level, rule }) => ({
      id,
      level,
      rule,
    }));
    expect(modern).toEqual(MODERN_TABLE);
  });

  it('has the legacy client’s checks and the negative probes of both eras, each id once', () => {
    const ids = CONFORMANCE_CHECKS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ['server_info_present', 'list_tools_succeeds', 'invalid_tool_returns_error', 'ping_succeeds'])
      expect(checkById(id)?.era).toBe('legacy');
    for (const id of ['malformed_json_parse_error', 'missing_jsonrpc_invalid_request', 'server_alive_after_bad_input'])
      expect(checkById(id)?.era).toBe('both');
    for (const c of CONFORMANCE_CHECKS) {
      expect(c.id).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(c.rule.length).toBeGreaterThan(10);
      expect(c.spec.length).toBeGreaterThan(3);
    }
  });

  it('chooses checks by the negotiated era: no modern rule on a legacy connection, and the reverse', () => {
    const legacy = checksFor('legacy').map((c) => c.id);
    const modern = checksFor('modern').map((c) => c.id);
    expect(legacy).toContain('server_info_present');
    expect(legacy).toContain('malformed_json_parse_error');
    expect(legacy).not.toContain('discover_succeeds');
    expect(modern).toContain('discover_succeeds');
    expect(modern).toContain('server_alive_after_bad_input');
    expect(modern).not.toContain('server_info_present');
    expect(modern.filter((id) => checkById(id)?.era === 'modern')).toHaveLength(16);
  });

  it('skips an HTTP-only rule off HTTP and a raw probe with probes off, saying why', () => {
    const header = checkById('header_mismatch_rejected')!;
    expect(skipReason(header, { transport: 'http', probe: true })).toBeNull();
    expect(skipReason(header, { transport: 'stdio', probe: true })).toMatch(/HTTP-only/);
    expect(skipReason(header, { transport: 'http', probe: false })).toMatch(/--no-probe/);
    expect(skipReason(checkById('discover_succeeds')!, { transport: 'stdio', probe: false })).toBeNull();
  });
});
