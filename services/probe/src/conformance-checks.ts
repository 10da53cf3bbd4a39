// The one table of conformance checks: what a client on a given era relies on, each with a stable
// id, a level, a one-line rule and where the rule comes from. The checks that run, the CLI's table
// and JUnit report, the monitor's per-check state and metrics all read it from here; adding a check
// is adding one entry. Which checks run is chosen by the negotiated era (docs/protocol.md,
// "Conformance by era"): the legacy client's checks, the 2026-07-28 rules, and the capability and
// negative checks that hold in both eras.
import type { Era } from './revisions';

/** MUST fails the result; a failing SHOULD is a warning. */
export type CheckLevel = 'MUST' | 'SHOULD';
/** The era a check belongs to; `both` runs whatever was negotiated. */
export type CheckEra = Era | 'both';

export interface CheckDefinition {
  readonly id: string;
  readonly level: CheckLevel;
  readonly era: CheckEra;
  /** The rule in one line, as a report prints it. */
  readonly rule: string;
  /** Where the rule is written: the spec section (or JSON-RPC 2.0) it follows. */
  readonly spec: string;
  /** An HTTP-only rule (skipped on another transport). */
  readonly http?: true;
  /** A stdio-only rule (skipped on HTTP). */
  readonly stdio?: true;
  /** Needs raw probe requests the SDK client never sends (skipped with `--no-probe`). */
  readonly raw?: true;
}

const JSON_RPC = 'JSON-RPC 2.0, 5.1 Error object';
const MODERN = '2026-07-28';

export const CONFORMANCE_CHECKS = [
  // ─── legacy connections: the checks a legacy client relies on ─────────────────────────────
  {
    id: 'server_info_present',
    level: 'MUST',
    era: 'legacy',
    rule: 'initialize returns serverInfo with a name and a version',
    spec: 'basic/lifecycle: initialization',
  },
  {
    id: 'list_tools_succeeds',
    level: 'MUST',
    era: 'legacy',
    rule: 'tools/list succeeds when the tools capability is declared',
    spec: 'server/tools: listing tools',
  },
  {
    id: 'invalid_tool_returns_error',
    level: 'MUST',
    era: 'legacy',
    rule: 'Calling a tool that does not exist returns an error (JSON-RPC, or a result with isError)',
    spec: 'server/tools: error handling',
  },
  {
    id: 'list_resources_succeeds',
    level: 'MUST',
    era: 'legacy',
    rule: 'resources/list succeeds when the resources capability is declared',
    spec: 'server/resources: listing resources',
  },
  {
    id: 'list_prompts_succeeds',
    level: 'MUST',
    era: 'legacy',
    rule: 'prompts/list succeeds when the prompts capability is declared',
    spec: 'server/prompts: listing prompts',
  },
  {
    id: 'ping_succeeds',
    level: 'MUST',
    era: 'legacy',
    rule: 'ping gets an empty result',
    spec: 'basic/utilities/ping',
  },
  {
    id: 'request_before_initialize_rejected',
    level: 'SHOULD',
    era: 'legacy',
    rule: 'A request before initialize gets an error, and the server stays usable',
    spec: 'basic/lifecycle: initialization',
    raw: true,
  },
  // ─── modern connections: the 2026-07-28 rules that hold for any server ────────────────────
  {
    id: 'discover_succeeds',
    level: 'MUST',
    era: 'modern',
    rule: 'server/discover works and lists the negotiated version',
    spec: `${MODERN} server/discover`,
  },
  {
    id: 'discover_server_info',
    level: 'SHOULD',
    era: 'modern',
    rule: 'DiscoverResult carries _meta["io.modelcontextprotocol/serverInfo"]',
    spec: `${MODERN} server/discover`,
  },
  {
    id: 'result_type_present',
    level: 'MUST',
    era: 'modern',
    rule: 'Every result has resultType',
    spec: `${MODERN} basic: results`,
  },
  {
    id: 'cache_hints_present',
    level: 'MUST',
    era: 'modern',
    rule: 'ttlMs ≥ 0 and cacheScope on discover, list, and read results',
    spec: `${MODERN} basic: caching`,
  },
  {
    id: 'result_server_info',
    level: 'SHOULD',
    era: 'modern',
    rule: 'Results carry serverInfo in _meta',
    spec: `${MODERN} basic: results`,
  },
  {
    id: 'tools_list_deterministic',
    level: 'SHOULD',
    era: 'modern',
    rule: 'tools/list returns the same order each time',
    spec: `${MODERN} server/tools: listing tools`,
  },
  {
    id: 'tools_list_stable_across_connections',
    level: 'MUST',
    era: 'modern',
    rule: 'A second connection sees the same tool set',
    spec: `${MODERN} server/tools: listing tools`,
  },
  {
    id: 'cache_scope_consistent_across_pages',
    level: 'MUST',
    era: 'modern',
    rule: 'Every page of a paginated list has the same cacheScope',
    spec: `${MODERN} basic: caching, pagination`,
  },
  {
    id: 'resource_not_found_error',
    level: 'MUST',
    era: 'modern',
    rule: 'A missing resource is -32602, not -32002 or empty contents',
    spec: `${MODERN} server/resources: error handling`,
  },
  {
    id: 'unknown_tool_protocol_error',
    level: 'SHOULD',
    era: 'modern',
    rule: 'An unknown tool is a JSON-RPC protocol error rather than isError',
    spec: `${MODERN} server/tools: error handling`,
  },
  {
    id: 'unsupported_version_rejected',
    level: 'MUST',
    era: 'modern',
    rule: 'An unknown version gets -32022 with data.supported (and HTTP 400)',
    spec: `${MODERN} basic: version negotiation`,
    raw: true,
  },
  {
    id: 'missing_meta_rejected',
    level: 'MUST',
    era: 'modern',
    rule: 'A request whose _meta lacks clientCapabilities gets -32602 (HTTP 400)',
    spec: `${MODERN} basic: request metadata`,
    raw: true,
  },
  {
    id: 'header_mismatch_rejected',
    level: 'MUST',
    era: 'modern',
    rule: 'HTTP: Mcp-Method or Mcp-Name that disagrees with the body gets 400 / -32020',
    spec: `${MODERN} basic/transports: Streamable HTTP headers`,
    http: true,
    raw: true,
  },
  {
    id: 'unknown_method_not_found',
    level: 'MUST',
    era: 'modern',
    rule: 'HTTP: an unknown method gets 404 / -32601',
    spec: `${MODERN} basic/transports: Streamable HTTP`,
    http: true,
    raw: true,
  },
  {
    id: 'no_session_id',
    level: 'SHOULD',
    era: 'modern',
    rule: 'HTTP: no Mcp-Session-Id is minted or echoed back',
    spec: `${MODERN} basic/transports: stateless HTTP`,
    http: true,
  },
  {
    id: 'reserved_error_codes',
    level: 'MUST',
    era: 'modern',
    rule: 'No undefined codes in -32020..-32099; no retired -32002 / -32042',
    spec: `${MODERN} basic: error codes`,
  },
  // ─── both eras: capabilities are contracts, and bad input gets a clean error ──────────────
  // The exact code for bad input is a SHOULD (it helps whoever debugs; a client that sends valid
  // requests never sees it); staying alive after it, and -32601 for a missing method (which clients
  // act on), are MUSTs.
  {
    id: 'undeclared_capability_not_found',
    level: 'SHOULD',
    era: 'both',
    rule: 'A method of a capability the server does not declare gets -32601',
    spec: 'basic/lifecycle: capability negotiation',
    raw: true,
  },
  {
    id: 'list_changed_consistent',
    level: 'SHOULD',
    era: 'both',
    rule: 'A declared listChanged is a boolean on a capability whose list method works',
    spec: 'basic/lifecycle: capability negotiation',
  },
  {
    id: 'malformed_json_parse_error',
    level: 'SHOULD',
    era: 'both',
    rule: 'Malformed JSON gets -32700',
    spec: JSON_RPC,
    raw: true,
  },
  {
    id: 'missing_jsonrpc_invalid_request',
    level: 'SHOULD',
    era: 'both',
    rule: 'A request without "jsonrpc": "2.0" gets -32600',
    spec: JSON_RPC,
    raw: true,
  },
  {
    id: 'method_not_found',
    level: 'MUST',
    era: 'legacy',
    rule: 'An unknown method gets -32601',
    spec: JSON_RPC,
    raw: true,
  },
  {
    id: 'invalid_params_error',
    level: 'SHOULD',
    era: 'both',
    rule: 'Invalid params for a known method (tools/call without a name) get -32602',
    spec: JSON_RPC,
    raw: true,
  },
  {
    id: 'notification_with_id_answered',
    level: 'SHOULD',
    era: 'both',
    rule: 'A notification sent with an id gets a JSON-RPC error, not a hang or a crash',
    spec: 'basic: notifications',
    raw: true,
  },
  {
    id: 'server_alive_after_bad_input',
    level: 'MUST',
    era: 'both',
    rule: 'After each bad request a valid request still succeeds',
    spec: 'basic/lifecycle: operation',
    raw: true,
  },
  // ─── stdio: the transport's own rules (seed 002, section 5) ───────────────────────────────
  // Malformed input not crashing the process is server_alive_after_bad_input (each bad line is
  // followed by a valid request on the same process).
  {
    id: 'stdout_only_protocol',
    level: 'MUST',
    era: 'both',
    rule: 'stdio: nothing but JSON-RPC messages on stdout (logs belong on stderr)',
    spec: 'basic/transports: stdio',
    stdio: true,
  },
  {
    id: 'exits_on_stdin_close',
    level: 'SHOULD',
    era: 'both',
    rule: 'stdio: closing stdin ends the process, without SIGTERM or SIGKILL',
    spec: 'basic/lifecycle: shutdown (stdio)',
    stdio: true,
  },
] as const satisfies readonly CheckDefinition[];

export type CheckId = (typeof CONFORMANCE_CHECKS)[number]['id'];

/** Where the checks run and what they may send: an HTTP rule is skipped elsewhere, a raw one without probes. */
export interface CheckScope {
  transport: 'http' | 'stdio';
  /** Raw probe requests allowed (`--no-probe` turns them off). */
  probe: boolean;
}

/** Why a check that belongs to this era cannot run here; null when it runs. */
export function skipReason(check: CheckDefinition, scope: CheckScope): string | null {
  if (check.http && scope.transport !== 'http') return 'an HTTP-only rule, and this server is not on HTTP';
  if (check.stdio && scope.transport !== 'stdio') return 'a stdio-only rule, and this server is not on stdio';
  if (check.raw && !scope.probe) return 'needs raw probe requests, and probes are off (--no-probe)';
  return null;
}

/**
 * The checks a connection on this era is judged by, in the table's order. Over stdio that includes
 * the HTTP-only rules (skipped, with the reason); over HTTP the stdio transport's own rules are not
 * listed at all: they say nothing about an HTTP server, and HTTP reports stay as they were.
 */
export function checksFor(era: Era, transport: CheckScope['transport'] = 'http'): CheckDefinition[] {
  return CONFORMANCE_CHECKS.filter(
    (c) => (c.era === era || c.era === 'both') && (transport === 'stdio' || !('stdio' in c)),
  );
}

/** The check with this id (undefined for an id the table does not have). */
export function checkById(id: string): CheckDefinition | undefined {
  return CONFORMANCE_CHECKS.find((c) => c.id === id);
}
