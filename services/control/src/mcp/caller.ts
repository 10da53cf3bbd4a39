// How the monitor's MCP tools reach the API: the same routes, the same validation, the same target
// policy as REST. In control they call the router in process with the caller's scope; under
// `mcp-fleet mcp` (stdio) they call a running control over HTTP with a token.
import type { Scope } from '../auth';
import type { CallReply, Router } from '../http';

export interface ApiCaller {
  /** What the caller may do: read tokens see the read-only tools only. */
  readonly scope: Scope;
  /** One API call; a reply outside 2xx is an ApiCallError carrying the API's own message. */
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
}

/** The API refused or failed a call: its status and its `{ error }` message, for the tool's answer. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiCallError';
  }
}

function unwrap<T>(reply: CallReply): T {
  if (reply.status >= 200 && reply.status < 300) return reply.json as T;
  const error = (reply.json as { error?: unknown } | null)?.error;
  throw new ApiCallError(reply.status, typeof error === 'string' ? error : `HTTP ${reply.status}`);
}

/** Control's own router, called in process as a holder of `scope`. */
export function routerCaller(router: Router, scope: Scope): ApiCaller {
  return {
    scope,
    call: async (method, path, body) => unwrap(await router.call(method, path, body, scope)),
  };
}

export interface HttpCallerOptions {
  /** Control's API, e.g. http://127.0.0.1:7070 (MCP_FLEET_API_URL). */
  url: string;
  /** A bearer token (MCP_FLEET_API_TOKEN); none with control's auth off. */
  token?: string | undefined;
  /** Each call's bound (default 30 s: a detection takes up to 20 s). */
  timeoutMs?: number;
}

/**
 * A running control over HTTP. Its scope is asked once (GET /api/whoami) so that the tools listed
 * are the ones the token may use.
 */
export async function httpCaller(opts: HttpCallerOptions): Promise<ApiCaller> {
  const base = new URL(opts.url);
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(new URL(path, base), {
      method,
      headers: {
        accept: 'application/json',
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = { error: `control answered HTTP ${res.status} with no JSON: ${text.slice(0, 200)}` };
    }
    return unwrap<T>({ status: res.status, json });
  };
  // Trust boundary: whatever answers at that URL. Only control's own answer names a scope.
  const who = await call<{ scope?: unknown } | null>('GET', '/api/whoami');
  const scope = who?.scope;
  if (scope !== 'read' && scope !== 'admin')
    throw new ApiCallError(
      502,
      `${base.origin} did not answer /api/whoami as control does (no scope): is it control's API?`,
    );
  return { scope, call };
}
