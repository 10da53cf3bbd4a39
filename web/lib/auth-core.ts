// Dashboard sign-in, without Next: which passwords are accepted, the signed session cookie, and
// the same-origin check on form posts. Shared by proxy.ts, the sign-in route, the server actions
// and `mcp-fleet up` (which checks the configuration before starting anything).
//
// Auth is on when any of MCP_FLEET_WEB_PASSWORD, MCP_FLEET_API_TOKENS, MCP_FLEET_ADMIN_TOKEN,
// MCP_FLEET_READ_TOKEN or MCP_FLEET_API_TOKEN is set: the web password signs in with admin scope,
// an API token with its own scope (a read token gives a read-only session), and the dashboard's
// own control token (MCP_FLEET_API_TOKEN) counts as an admin password, so a dashboard holding an
// admin token can never be an open door to control. The tokens are parsed and compared exactly as
// control's API does (store's api-tokens), in constant time. The session is `v1.<scope>.<expiry>.<HMAC-SHA256>`, keyed by MCP_FLEET_SESSION_KEY
// (or a random key made when the process starts) and the credentials, so changing a password ends
// the sessions it opened.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AuthConfigError, type Scope, SecretSet, tokensFromEnv, withSecretFiles } from '@mcp-fleet/store/api-tokens';

export { AuthConfigError, type Scope };
export interface Session {
  scope: Scope;
  expires: number;
}

export const SESSION_COOKIE = 'mcp-fleet-session';
export const SESSION_TTL_SECONDS = 12 * 3600;
export const MIN_PASSWORD_LENGTH = 12;
export const MIN_SESSION_KEY_LENGTH = 32;

export interface WebAuth {
  /** Sign-in required. Off: every page open, and only loopback Host names are served. */
  enabled: boolean;
  /** MCP_FLEET_ALLOW_UNAUTHENTICATED=1: serve any Host with auth off (something in front authenticates). */
  allowUnauthenticated: boolean;
  /** The scope a password opens, or null. */
  login(password: string): Scope | null;
  /** A cookie value for a new session. */
  sign(scope: Scope, now?: number): string;
  /** The session a cookie value holds, or null (forged, expired, another key). */
  verify(value: string | undefined, now?: number): Session | null;
}

export function webAuthFromEnv(env: Record<string, string | undefined> = process.env): WebAuth {
  const secrets: { value: Scope; secret: string; from: string }[] = [];
  const password = env.MCP_FLEET_WEB_PASSWORD;
  if (password !== undefined && password !== '') {
    if (password.length < MIN_PASSWORD_LENGTH)
      throw new AuthConfigError(
        `MCP_FLEET_WEB_PASSWORD is ${password.length} characters; it needs at least ${MIN_PASSWORD_LENGTH}`,
      );
    secrets.push({ value: 'admin', secret: password, from: 'MCP_FLEET_WEB_PASSWORD' });
  }
  for (const t of tokensFromEnv(env, [['MCP_FLEET_API_TOKEN', 'admin']]))
    secrets.push({ value: t.scope, secret: t.token, from: t.from });
  const credentials = new SecretSet(secrets);

  const configuredKey = env.MCP_FLEET_SESSION_KEY;
  if (configuredKey && configuredKey.length < MIN_SESSION_KEY_LENGTH)
    throw new AuthConfigError(`MCP_FLEET_SESSION_KEY needs at least ${MIN_SESSION_KEY_LENGTH} characters`);
  // The MAC key covers the credentials: a changed password or token ends the sessions it opened.
  const macKey = createHmac('sha256', configuredKey ? Buffer.from(configuredKey, 'utf8') : randomBytes(32))
    .update('mcp-fleet dashboard session v1\0')
    .update(credentials.fingerprint())
    .digest();
  const mac = (payload: string) => createHmac('sha256', macKey).update(payload).digest();

  return {
    enabled: credentials.size > 0,
    allowUnauthenticated: env.MCP_FLEET_ALLOW_UNAUTHENTICATED === '1' || env.MCP_FLEET_ALLOW_UNAUTHENTICATED === 'true',
    login: (presented) => credentials.identify(presented),
    sign(scope, now = Date.now()) {
      const payload = `v1.${scope}.${Math.floor(now / 1000) + SESSION_TTL_SECONDS}`;
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    verify(value, now = Date.now()) {
      const m = value?.match(/^(v1\.(read|admin)\.(\d{1,12}))\.([A-Za-z0-9_-]{43})$/);
      if (!m || credentials.size === 0) return null;
      const given = Buffer.from(m[4]!, 'base64url');
      if (given.length !== 32 || !timingSafeEqual(given, mac(m[1]!))) return null;
      const expires = Number(m[3]) * 1000;
      return expires > now ? { scope: m[2] as Scope, expires } : null;
    },
  };
}

const KEY = Symbol.for('mcp-fleet.web.auth');

/**
 * The process's configuration, made once (its random session key must outlive a request). A
 * configuration error is kept too, so every request says it rather than starting half-open.
 */
export function webAuth(): WebAuth {
  const g = globalThis as unknown as Record<symbol, { auth?: WebAuth; error?: Error } | undefined>;
  if (!g[KEY]) {
    try {
      g[KEY] = { auth: webAuthFromEnv(withSecretFiles(process.env)) };
    } catch (err) {
      g[KEY] = { error: err as Error };
    }
  }
  const held = g[KEY];
  if (held.error) throw held.error;
  return held.auth!;
}

/** Forget the configuration (`mcp-fleet up` sets the environment before the dashboard starts). */
export function resetWebAuth(): void {
  (globalThis as unknown as Record<symbol, unknown>)[KEY] = undefined;
}

/** `Set-Cookie` for a session, or to end one (`value` null). Secure when the request came over HTTPS. */
export function sessionCookie(value: string | null, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${value ?? ''}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${value === null ? 0 : SESSION_TTL_SECONDS}`,
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

interface HeaderBag {
  get(name: string): string | null;
}

/** The request came over HTTPS (directly, or as a TLS-terminating proxy says). */
export function isHttps(headers: HeaderBag, url: string): boolean {
  const proto = headers.get('x-forwarded-proto')?.split(',')[0]?.trim();
  return proto ? proto === 'https' : url.startsWith('https:');
}

/**
 * Why a state-changing request is refused as cross-origin, or null. A browser names the page that
 * sent it (`Origin`, and `Sec-Fetch-Site`); it must be this dashboard's own Host (or the
 * `X-Forwarded-Host` a proxy in front set), as Next checks for server actions. No Origin and no
 * Sec-Fetch-Site: not a browser (curl), which carries no one's cookies but its own.
 */
export function crossOriginRefusal(headers: HeaderBag): string | null {
  const site = headers.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') return `a ${site} request`;
  const origin = headers.get('origin');
  if (origin === null) return null;
  let originHost: string;
  try {
    originHost = origin === 'null' ? '' : new URL(origin).host;
  } catch {
    originHost = '';
  }
  if (!originHost) return 'a request from an opaque or malformed origin';
  const hosts = [headers.get('x-forwarded-host')?.split(',')[0]?.trim(), headers.get('host')];
  return hosts.includes(originHost) ? null : `Origin ${origin.slice(0, 100)} is not this dashboard`;
}

/** With auth off, a non-loopback Host is refused: a page rebinding its name to 127.0.0.1 gets nothing. */
export function foreignHostRefusal(headers: HeaderBag): string | null {
  const host = headers.get('host');
  if (host === null) return null;
  const name = host
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  const loopback =
    name === 'localhost' || name.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(name) || name === '::1';
  return loopback ? null : `Host ${host.slice(0, 100)} is not a loopback name and sign-in is off`;
}

/** A path on this dashboard to go to after signing in; anything else is `/`. */
export function safeNext(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return '/';
  if (value === '/login' || value.startsWith('/login?') || value.startsWith('/auth/')) return '/';
  return value.slice(0, 2_000);
}
