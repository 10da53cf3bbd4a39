// What the requests of one job met, reduced to the few facts two metrics count: a JSON-RPC
// method-not-found answer (-32601) and a request that got no HTTP answer. Every probe (handshake,
// detection, conformance) feeds it through onExchange. Trust boundary: everything an exchange holds
// came from the server or from our own request table; only values of closed sets leave here, so a
// hostile server cannot mint label values (unknown methods become `other`, revisions `other`).
import { revisionLabel } from '@mcp-fleet/bus/metrics';
import { type Exchange, onPipe, type ReachabilityFailure } from '@mcp-fleet/probe';

/** JSON-RPC "Method not found". */
export const METHOD_NOT_FOUND = -32601;

/**
 * The MCP method names a label may carry (requests and notifications of the dated revisions, and
 * 2026-07-28's server/discover); any other method name counts as `other`.
 */
export const MCP_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'server/discover',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/message',
  'notifications/roots/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'sampling/createMessage',
  'elicitation/create',
  'roots/list',
  'tasks/get',
  'tasks/list',
  'tasks/result',
  'tasks/cancel',
]);

export function methodLabel(method: string | undefined): string {
  return method !== undefined && MCP_METHODS.has(method) ? method : 'other';
}

/**
 * Failures that are our own refusals, not the transport's: `policy` (the target policy refused the
 * address before any dial; mcp_agent_floor_refusals_total counts the floor's) and `request_budget`
 * (the probe's own request budget). Neither touched the network, so neither says anything about it.
 */
const NOT_TRANSPORT: ReadonlySet<ReachabilityFailure> = new Set(['policy', 'request_budget']);

/** Every reachability failure that is the transport's: the `error_type` label's closed set. */
export const TRANSPORT_ERROR_TYPES: readonly ReachabilityFailure[] = (
  ['timeout', 'connection_refused', 'connection_reset', 'dns', 'tls', 'malformed_http', 'network'] as const
).filter((f) => !NOT_TRANSPORT.has(f));

/**
 * How a stdio server failed a probe (issue 20), the `error_type` label's closed set for
 * `transport="stdio"`: the command did not start, its process ended before answering, no answer
 * in time, it flooded stdout and was killed, or it wrote lines that are not JSON-RPC (counted once
 * per job that saw any: agent's metrics take it from the run's stdio report).
 */
export const STDIO_ERROR_TYPES = [
  'spawn_failed',
  'exited_early',
  'timeout',
  'stdout_flood',
  'stdout_not_json',
] as const;
export type StdioErrorType = (typeof STDIO_ERROR_TYPES)[number];
const STDIO_FAILURES: ReadonlySet<string> = new Set<string>(STDIO_ERROR_TYPES);

/** HTTP (streamable HTTP, sessions and HTTP+SSE all travel over it) or a stdio server's pipes. */
export type Transport = 'http' | 'stdio';

export interface Traffic {
  /** One entry per -32601 answer: `method` from MCP_METHODS or `other`, `protocolVersion` a revision label. */
  methodNotFound: { method: string; protocolVersion: string }[];
  /** One entry per request that got no answer, by transport and reachability failure. */
  transportErrors: { transport: Transport; errorType: ReachabilityFailure | StdioErrorType }[];
}

/** A probe's request budget bounds a job's exchanges; this bounds what one job may add to a counter anyway. */
export const MAX_TRAFFIC_ENTRIES = 256;

export class TrafficLog {
  #speaking: string | null = null;
  readonly #methodNotFound: { method: string; revision: string | null }[] = [];
  readonly #transportErrors: Traffic['transportErrors'] = [];

  /** The revision the probe's next requests are made at (null: not known until the probe ends). */
  speaking(revision: string | null): void {
    this.#speaking = revision;
  }

  add(ex: Exchange): void {
    // A conformance check's bad request, sent on purpose: its error is the check's verdict
    // (mcp_conformance_checks_total), not a sign of the server's or the network's health.
    if (ex.deliberate) return;
    if (ex.failure !== null) {
      if (NOT_TRANSPORT.has(ex.failure) || this.#transportErrors.length >= MAX_TRAFFIC_ENTRIES) return;
      if (onPipe(ex)) {
        if (STDIO_FAILURES.has(ex.failure))
          this.#transportErrors.push({ transport: 'stdio', errorType: ex.failure as StdioErrorType });
        return;
      }
      this.#transportErrors.push({ transport: 'http', errorType: ex.failure });
      return;
    }
    const r = ex.response;
    if (!r || !('error' in r) || r.error?.code !== METHOD_NOT_FOUND) return;
    if (this.#methodNotFound.length >= MAX_TRAFFIC_ENTRIES) return;
    // server/discover exists only at 2026-07-28, whatever else the probe offers around it.
    const revision = ex.jsonRpcMethod === 'server/discover' ? '2026-07-28' : this.#speaking;
    this.#methodNotFound.push({ method: methodLabel(ex.jsonRpcMethod), revision });
  }

  /** `fallback`: the revision of requests made while it was not known (a handshake's requested or negotiated one). */
  summary(fallback: string | null = null): Traffic {
    return {
      methodNotFound: this.#methodNotFound.map((m) => ({
        method: m.method,
        protocolVersion: revisionLabel(m.revision ?? fallback),
      })),
      transportErrors: [...this.#transportErrors],
    };
  }
}
