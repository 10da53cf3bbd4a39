// Who may use control's API. Bearer tokens from the environment, each with a scope: `read` (every
// GET) or `admin` (everything, including every write and POST /api/detect, which makes control
// probe a URL). No token configured = auth off (one machine), and then control only listens on
// loopback unless MCP_FLEET_ALLOW_UNAUTHENTICATED=1 says something in front of it authenticates.
//
// The tokens and their constant-time comparison are store's api-tokens (shared with the
// dashboard's sign-in), and what a browser may ask (cross-site writes, the Host allowlist, the
// loopback rule for binds) is auth's request-guard, also the dashboard's. No token is ever logged
// or echoed: errors name the variable, never a value.
import type { IncomingHttpHeaders } from 'node:http';
import { type Scope, SecretSet } from '@mcp-fleet/auth';
import { controlEnv, type Env, parseEnv } from '@mcp-fleet/config';

export { AuthConfigError, MIN_TOKEN_LENGTH, type Scope, tokensFromEnv } from '@mcp-fleet/auth';
export {
  assertSafeBind,
  isLoopbackHost,
} from '@mcp-fleet/auth/request-guard';

/** What a route needs: nothing, a read token, an admin token, or /metrics' own rule. */
export type Access = 'public' | 'metrics' | Scope;
type Credential = Scope | 'metrics';

export interface ApiAuthOptions {
  tokens?: { scope: Scope; token: string; from?: string }[];
  /** When set, /metrics needs this token (or any API token); unset, /metrics stays open. */
  metricsToken?: string | undefined;
}

export class ApiAuth {
  readonly #credentials: SecretSet<Credential>;
  readonly enabled: boolean;
  readonly metricsProtected: boolean;
  readonly counts: Record<Scope, number>;

  constructor(opts: ApiAuthOptions = {}) {
    const tokens = opts.tokens ?? [];
    const entries = tokens.map((t, i) => ({
      value: t.scope as Credential,
      secret: t.token,
      from: t.from ?? `token ${i + 1}`,
    }));
    if (opts.metricsToken)
      entries.push({ value: 'metrics', secret: opts.metricsToken, from: 'MCP_FLEET_METRICS_TOKEN' });
    this.#credentials = new SecretSet(entries);
    this.enabled = tokens.length > 0;
    this.metricsProtected = Boolean(opts.metricsToken);
    this.counts = {
      read: tokens.filter((t) => t.scope === 'read').length,
      admin: tokens.filter((t) => t.scope === 'admin').length,
    };
  }

  /** Auth off: every route is open (control then listens on loopback only). */
  static off(): ApiAuth {
    return new ApiAuth();
  }

  /** The scope a presented token carries, or null (compared in constant time with every token). */
  identify(presented: string | null): Credential | null {
    return this.#credentials.identify(presented);
  }

  /**
   * The scope a request acts with once admitted: its token's, or admin with auth off (one machine,
   * loopback only). Null for no API token (a metrics token is none).
   */
  scopeOf(headers: IncomingHttpHeaders): Scope | null {
    if (!this.enabled) return 'admin';
    const scope = this.identify(bearerToken(headers.authorization));
    return scope === 'read' || scope === 'admin' ? scope : null;
  }

  /**
   * Admit a request to a route needing `access`, or say why not: 401 (no or unknown token: send
   * `WWW-Authenticate: Bearer`) or 403 (a read token on a write route).
   */
  check(access: Access, headers: IncomingHttpHeaders): AuthRefusal | null {
    if (access === 'public') return null;
    if (access === 'metrics' && !this.metricsProtected) return null;
    if (access !== 'metrics' && !this.enabled) return null;
    const presented = bearerToken(headers.authorization);
    const scope = this.identify(presented);
    if (scope === null)
      return {
        status: 401,
        reason: presented === null ? 'no bearer token' : 'unknown token',
        message:
          presented === null
            ? 'authentication required: send Authorization: Bearer <token>'
            : 'the bearer token is not valid',
        challenge: presented === null ? 'Bearer realm="mcp-fleet"' : 'Bearer realm="mcp-fleet", error="invalid_token"',
      };
    if (access === 'metrics') return null; // any known token reads the metrics
    if (scope === 'metrics' || (access === 'admin' && scope !== 'admin'))
      return {
        status: 403,
        reason: `a ${scope} token on a route needing ${access}`,
        message: `this needs a token with ${access} scope; the one sent has ${scope} scope`,
        challenge: `Bearer realm="mcp-fleet", error="insufficient_scope", scope="${access}"`,
      };
    return null;
  }
}

export interface AuthRefusal {
  status: 401 | 403;
  /** For the log (never the token). */
  reason: string;
  /** For the client, as `{ error }`. */
  message: string;
  /** The `WWW-Authenticate` header. */
  challenge: string;
}

/** Where control serves MCP, beside the API (mcp/endpoint.ts). */
export const MCP_PATH = '/mcp';

/** What a route needs, from its method and path: a new route is protected unless listed here. */
export function accessOf(method: string, pattern: string): Access {
  if (pattern === '/healthz' || pattern === '/readyz') return 'public';
  if (pattern === '/metrics') return 'metrics';
  // MCP posts every request, reads too: any token enters, and the tools it sees follow its scope.
  if (pattern === MCP_PATH) return 'read';
  return method === 'GET' || method === 'HEAD' ? 'read' : 'admin';
}

/** `Authorization: Bearer <token>` (scheme case-insensitive), else null. */
export function bearerToken(header: string | undefined): string | null {
  const m = header?.match(/^Bearer[ \t]+(\S+)[ \t]*$/i);
  return m ? m[1]! : null;
}

/**
 * Control's API auth as an environment gives it, parsed as `mcp-fleet control` parses it (config's
 * control schema: MCP_FLEET_API_TOKENS, MCP_FLEET_ADMIN_TOKEN, MCP_FLEET_READ_TOKEN and
 * MCP_FLEET_METRICS_TOKEN, each single token also from `<VAR>_FILE`): for tests and deploy checks.
 */
export function apiAuthFromEnv(env: Env): ApiAuth {
  return new ApiAuth(parseEnv(controlEnv, env).auth);
}

/** What turns control's API auth on, for the error above. */
export const API_AUTH_HOW = 'Set MCP_FLEET_API_TOKENS (or MCP_FLEET_ADMIN_TOKEN / MCP_FLEET_READ_TOKEN)';
