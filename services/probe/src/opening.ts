// The one shape every generation's opening ends in (after blackbox_exporter's prober/: one
// function per protocol, one outcome shape for all), and how a failed reply is judged.
import { type Exchange, via } from './exchange';
import { errorOf } from './jsonrpc';
import type { Outcome } from './outcomes';
import type { Generation, Revision } from './revisions';

export interface ServerInfo {
  name: string;
  version: string;
  title?: string;
}

export interface Opening {
  generation: Generation;
  /** The revision the opening proposed. */
  proposed: Revision;
  /** The generation's opening completed and the server answered as MCP. */
  ok: boolean;
  /** The revision the server answered with (sessions, HTTP+SSE) or chose from its list (stateless). */
  answered: string | undefined;
  serverInfo: ServerInfo | undefined;
  /** A session the server minted and this opening left open (detection deletes them at the end). */
  openSession: string | undefined;
  /** The exchange that decided the result, for evidence. */
  decisive: Exchange | undefined;
  /** Why the opening failed, when it did. */
  failure: { outcome: Outcome; message: string } | undefined;
  /** The failure says the server moved generation (docs/protocol.md#era-signals). */
  eraSignal: boolean;
}

export function opened(
  generation: Generation,
  proposed: Revision,
  decisive: Exchange,
  answered: string,
  serverInfo: ServerInfo | undefined,
  openSession?: string,
): Opening {
  return {
    generation,
    proposed,
    ok: true,
    answered,
    serverInfo,
    openSession,
    decisive,
    failure: undefined,
    eraSignal: false,
  };
}

export function failed(
  generation: Generation,
  proposed: Revision,
  decisive: Exchange | undefined,
  failure: { outcome: Outcome; message: string },
  eraSignal: boolean,
): Opening {
  return {
    generation,
    proposed,
    ok: false,
    answered: undefined,
    serverInfo: undefined,
    openSession: undefined,
    decisive,
    failure,
    eraSignal,
  };
}

/** The server's HTTP status said "not now" rather than "not this revision": never an era signal. */
export function isNeverSignalStatus(status: number | null): boolean {
  return status === 401 || status === 403 || status === 429 || (status !== null && status >= 500);
}

/** Judge a reply that did not complete an opening: which outcome, in which words. */
export function judge(ex: Exchange, what: string): { outcome: Outcome; message: string } {
  if (ex.failure) {
    if (ex.failure === 'timeout') return { outcome: 'timeout', message: `${what}: ${ex.error}` };
    // A process that floods stdout broke the transport's one rule about it; a budget spent is the probe's bound.
    if (ex.failure === 'request_budget' || ex.failure === 'stdout_flood')
      return { outcome: 'protocol_error', message: `${what}: ${ex.error}` };
    return { outcome: 'unreachable', message: `${what}: ${ex.error}` };
  }
  const status = ex.status ?? 0;
  const http = via(ex, true);
  if (status === 401 || status === 403)
    return { outcome: 'auth_required', message: `${what}: the server asked for credentials (${http})` };
  if (status === 429) {
    const retry = ex.headers.retryAfter ? `, Retry-After ${ex.headers.retryAfter}` : '';
    return { outcome: 'rate_limited', message: `${what}: the server rate-limited the probe (${http}${retry})` };
  }
  if (status >= 500) return { outcome: 'server_error', message: `${what}: the server failed (${http})` };
  if (status >= 300 && status < 400) {
    const to = ex.headers.location ? ` to ${ex.headers.location}` : '';
    return {
      outcome: 'protocol_error',
      message: `${what}: the server redirected${to} (${http}); redirects are not followed`,
    };
  }
  const err = errorOf(ex.response);
  if (err) {
    const outcome: Outcome = err.code === -32022 ? 'unsupported_version' : 'protocol_error';
    return { outcome, message: `${what}: JSON-RPC error ${err.code} ${err.message} (${http})` };
  }
  if (ex.response)
    return { outcome: 'protocol_error', message: `${what}: the answer is not what MCP specifies (${http})` };
  // A JSON body or event stream cut off at the probe's bounds may well be JSON-RPC: too large, not "not JSON-RPC".
  if (ex.truncated && /^(application\/([\w.+-]+\+)?json|text\/event-stream)\b/i.test(ex.contentType ?? ''))
    return {
      outcome: 'protocol_error',
      message: `${what}: the answer is larger than a probe reads, so it was cut off unread (${http})`,
    };
  return { outcome: 'not_mcp', message: `${what}: the answer is not JSON-RPC (${http})` };
}

/**
 * Read serverInfo tolerantly: unknown fields are fine, a missing name is not info. Kept whole (the
 * body it came in is bounded): it is cut to its bounds only after redaction, when the result is made.
 */
export function serverInfoOf(value: unknown): ServerInfo | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.name !== 'string') return undefined;
  const info: ServerInfo = { name: v.name, version: typeof v.version === 'string' ? v.version : '' };
  if (typeof v.title === 'string') info.title = v.title;
  return info;
}
