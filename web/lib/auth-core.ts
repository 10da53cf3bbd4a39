// Dashboard sign-in, without Next: which passwords are accepted, the signed session cookie, and
// the same-origin check on form posts. Shared by proxy.ts, the sign-in route, the server actions
// and `mcp-fleet up` (which checks the configuration before starting anything).
//
// Auth is on when any of MCP_FLEET_WEB_PASSWORD, MCP_FLEET_API_TOKENS, MCP_FLEET_ADMIN_TOKEN,
// MCP_FLEET_READ_TOKEN or MCP_FLEET_API_TOKEN is set: the web password signs in with admin scope,
// an API token with its own scope (a read token gives a read-only session), and the dashboard's
// own control token (MCP_FLEET_API_TOKEN) counts as an admin password, so a dashboard holding an
// admin token can never be an open door to control. Passwords are compared as SHA-256 digests in
// constant time. The session is `v1.<scope>.<expiry>.<HMAC-SHA256>`, keyed by MCP_FLEET_SESSION_KEY
// (or a random key made when the process starts) and the credentials, so changing a password ends
// the sessions it opened.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type Scope = 'read' | 'admin';
export interface Session {
  scope: Scope;
  expires: number;
}

export const SESSION_COOKIE = 'mcp-fleet-session';
export const SESSION_TTL_SECONDS = 12 * 3600;
export const MIN_PASSWORD_LENGTH = 12;
export const MIN_TOKEN_LENGTH = 32;
export const MIN_SESSION_KEY_LENGTH = 32;

export class WebAuthConfigError extends Error {}

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
  const credentials: { scope: Scope; digest: Buffer }[] = [];
  const add = (scope: Scope, secret: string) => credentials.push({ scope, digest: digest(secret) });

  const password = env.MCP_FLEET_WEB_PASSWORD;
  if (password !== undefined && password !== '') {
    if (password.length < MIN_PASSWORD_LENGTH)
      throw new WebAuthConfigError(
        `MCP_FLEET_WEB_PASSWORD is ${password.length} characters; it needs at least ${MIN_PASSWORD_LENGTH}`,
      );
    add('admin', password);
  }
  (env.MCP_FLEET_API_TOKENS ?? '')
    .split(',')
    .map((e) => e.trim())
    .forEach((entry, i) => {
      if (!entry) return;
      const from = `MCP_FLEET_API_TOKENS entry ${i + 1}`;
      const colon = entry.indexOf(':');
      const scope = colon > 0 ? entry.slice(0, colon).trim() : '';
      if (scope !== 'read' && scope !== 'admin')
        throw new WebAuthConfigError(`${from} is not "read:<token>" or "admin:<token>"`);
      add(scope, checkToken(entry.slice(colon + 1).trim(), from));
    });
  for (const [name, scope] of [
    ['MCP_FLEET_ADMIN_TOKEN', 'admin'],
    ['MCP_FLEET_READ_TOKEN', 'read'],
    ['MCP_FLEET_API_TOKEN', 'admin'],
  ] as const) {
    const token = env[name]?.trim();
    if (token) add(scope, checkToken(token, name));
  }
  for (const [i, a] of credentials.entries())
    if (credentials.slice(i + 1).some((b) => b.digest.equals(a.digest) && b.scope !== a.scope))
      throw new WebAuthConfigError('one token is configured with two scopes (read and admin)');

  const configuredKey = env.MCP_FLEET_SESSION_KEY;
  if (configuredKey && configuredKey.length < MIN_SESSION_KEY_LENGTH)
    throw new WebAuthConfigError(`MCP_FLEET_SESSION_KEY needs at least ${MIN_SESSION_KEY_LENGTH} characters`);
  // The MAC key covers the credentials: a changed password or token ends the sessions it opened.
  const fingerprint = createHash('sha256');
  for (const c of credentials) fingerprint.update(`${c.scope}:`).update(c.digest);
  const macKey = createHmac('sha256', configuredKey ? Buffer.from(configuredKey, 'utf8') : randomBytes(32))
    .update('mcp-fleet dashboard session v1\0')
    .update(fingerprint.digest())
    .digest();
  const mac = (payload: string) => createHmac('sha256', macKey).update(payload).digest();

  return {
    enabled: credentials.length > 0,
    allowUnauthenticated: env.MCP_FLEET_ALLOW_UNAUTHENTICATED === '1' || env.MCP_FLEET_ALLOW_UNAUTHENTICATED === 'true',
    login(presented) {
      if (!presented) return null;
      const d = digest(presented);
      let found: Scope | null = null;
      // Every credential is compared, in constant time: no early exit on a match.
      for (const c of credentials) if (timingSafeEqual(c.digest, d) && found === null) found = c.scope;
      return found;
    },
    sign(scope, now = Date.now()) {
      const payload = `v1.${scope}.${Math.floor(now / 1000) + SESSION_TTL_SECONDS}`;
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    verify(value, now = Date.now()) {
      const m = value?.match(/^(v1\.(read|admin)\.(\d{1,12}))\.([A-Za-z0-9_-]{43})$/);
      if (!m || credentials.length === 0) return null;
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
      g[KEY] = { auth: webAuthFromEnv(process.env) };
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

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function checkToken(token: string, from: string): string {
  if (token.length < MIN_TOKEN_LENGTH)
    throw new WebAuthConfigError(`${from} is ${token.length} characters; a token needs at least ${MIN_TOKEN_LENGTH}`);
  if (!/^[\x21-\x7e]+$/.test(token) || token.includes(','))
    throw new WebAuthConfigError(`${from} may only hold printable ASCII without spaces or commas`);
  return token;
}
