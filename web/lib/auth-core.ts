// Dashboard sign-in, without Next: which passwords are accepted, the signed session cookie, and
// what a browser may ask (store's request-guard, the rules control's API applies too: no write
// from another site's page, and with sign-in off only Host names that cannot be rebound). Shared
// by proxy.ts, the sign-in routes, the server actions and `mcp-fleet up` (which checks the
// configuration before starting anything).
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
import { AuthConfigError, checkToken, type Scope, SecretSet } from '@mcp-fleet/auth/api-tokens';
import { type HeaderSource, requestRefusal } from '@mcp-fleet/auth/request-guard';
import type { SignInSettings } from '@mcp-fleet/config';

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
  /** Sign-in required. Off: every page open, and only Host names that cannot be rebound are served. */
  enabled: boolean;
  /** MCP_FLEET_ALLOWED_HOSTS: names served with sign-in off besides loopback names and IP literals. */
  allowedHosts: readonly string[];
  /** The scope a password opens, or null. */
  login(password: string): Scope | null;
  /** A cookie value for a new session. */
  sign(scope: Scope, now?: number): string;
  /** The session a cookie value holds, or null (forged, expired, another key). */
  verify(value: string | undefined, now?: number): Session | null;
}

/**
 * Sign-in from its settings (config parsed them at the dashboard's start): the password, the API
 * tokens and the dashboard's own control token, the session key; `allowedHosts` for sign-in off.
 */
export function webAuthFrom(signIn: SignInSettings, allowedHosts: readonly string[]): WebAuth {
  const secrets: { value: Scope; secret: string; from: string }[] = [];
  const password = signIn.password;
  if (password !== undefined && password !== '') {
    if (password.length < MIN_PASSWORD_LENGTH)
      throw new AuthConfigError(
        `MCP_FLEET_WEB_PASSWORD is ${password.length} characters; it needs at least ${MIN_PASSWORD_LENGTH}`,
      );
    secrets.push({ value: 'admin', secret: password, from: 'MCP_FLEET_WEB_PASSWORD' });
  }
  for (const t of signIn.tokens) secrets.push({ value: t.scope, secret: t.token, from: t.from });
  const dashboardToken = signIn.dashboardToken?.trim();
  if (dashboardToken)
    secrets.push({
      value: 'admin',
      secret: checkToken(dashboardToken, 'MCP_FLEET_API_TOKEN'),
      from: 'MCP_FLEET_API_TOKEN',
    });
  const credentials = new SecretSet(secrets);

  const configuredKey = signIn.sessionKey;
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
    allowedHosts,
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
 * The process's sign-in, made once at the dashboard's start (its random session key must outlive
 * a request). A configuration error is kept too, so every request says it rather than starting half-open.
 */
export function webAuth(): WebAuth {
  const held = (globalThis as unknown as Record<symbol, { auth?: WebAuth; error?: Error } | undefined>)[KEY];
  if (!held) throw new Error("the dashboard's sign-in is not set up: the dashboard is started by startDashboard");
  if (held.error) throw held.error;
  return held.auth!;
}

/** Set up the process's sign-in (the dashboard's start), or forget it (`signIn` undefined: the dashboard stopped). */
export function setWebAuth(make: (() => WebAuth) | undefined): void {
  let held: { auth?: WebAuth; error?: Error } | undefined;
  if (make)
    try {
      held = { auth: make() };
    } catch (err) {
      held = { error: err as Error };
    }
  (globalThis as unknown as Record<symbol, unknown>)[KEY] = held;
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
 * Why the dashboard refuses a request (403), or null: with sign-in off, a Host that could be a
 * rebound name; always, a write (a server action, a sign-in or sign-out post) from another site's
 * page. Origin may name the X-Forwarded-Host a proxy in front set, as Next's own server-action
 * check allows. Even MCP_FLEET_ALLOW_UNAUTHENTICATED=1 keeps the Host rule: the proxy in front
 * checks who, this checks which name the browser thinks it is talking to.
 */
export function browserRefusal(
  auth: WebAuth,
  request: { method: string; path: string; headers: HeaderSource },
): string | null {
  return requestRefusal(request, { authEnabled: auth.enabled, allowedHosts: auth.allowedHosts, forwardedHost: true });
}

const DUMMY_ORIGIN = 'http://dashboard.invalid';

/**
 * A path on this dashboard to go to after signing in; anything else is `/`. It comes from the URL
 * of /login, which anyone can link to, and ends in a Location header, so it is read as a browser
 * reads a URL: browsers drop tabs and newlines from it and take `\` for `/`, so `/\evil.example`
 * or `/<tab>/evil.example` would be `//evil.example`, another host. Control characters and `\` are
 * refused anywhere, `//` in the path; what is left is resolved against a dummy origin, must stay on
 * it, and is given back as the URL parser wrote it (percent-encoded: always a valid header).
 */
export function safeNext(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2_000 || !value.startsWith('/')) return '/';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  if (/[\u0000-\u001f\u007f-\u009f\\]/.test(value) || value.split(/[?#]/, 1)[0]!.includes('//')) return '/';
  let url: URL;
  try {
    url = new URL(value, DUMMY_ORIGIN);
  } catch {
    return '/';
  }
  if (url.origin !== DUMMY_ORIGIN || url.pathname.startsWith('//')) return '/';
  // Not back to the sign-in page or its posts (a loop).
  if (/^\/login\/*$/.test(url.pathname) || url.pathname.startsWith('/auth/')) return '/';
  return `${url.pathname}${url.search}${url.hash}`;
}
