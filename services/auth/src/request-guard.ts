// What a browser may make control's API and the dashboard do: the rules against cross-site writes
// (CSRF) and DNS rebinding, and the listening rule they rest on. Control (its router's gate) and the
// dashboard (proxy.ts, its sign-in routes, its own server) use this one copy, so the two never
// disagree on a Host, an Origin or an address. Pure string rules, no database: store exports it on
// a sub-path of its own (@mcp-fleet/auth/request-guard), beside api-tokens, because both callers
// already depend on store and the dashboard's proxy must bundle none of store's database code.
//
// The trust boundary is a web page in the user's browser: whatever a page can make the browser
// send (a form post, a fetch without a preflight, a page on a name it rebinds to 127.0.0.1) is
// hostile. A client that is not a browser sends neither Origin nor Sec-Fetch-Site and carries no
// one's cookies but its own: these rules are not about it (tokens and sessions are).
import { isLoopbackAddress } from '@mcp-fleet/probe/loopback';
import { AuthConfigError } from './api-tokens';

/** Container probes: answered whatever the Host, so a kubelet or a healthcheck reaches them. */
export const PROBE_PATHS: readonly string[] = ['/healthz', '/readyz'];

/** Fetch's `Headers` (the dashboard) or node:http's header object (control). */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

function headerOf(headers: HeaderSource, name: string): string | null {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name);
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? null);
}

/** GET, HEAD and OPTIONS change nothing (OPTIONS is a preflight, which neither server allows). */
export function isWrite(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
}

/**
 * A host name as the WHATWG URL parser has it (lower case, IPv4 in dotted decimal, IPv6 compressed
 * in brackets, one trailing dot dropped), or null if it is none. `host` carries no port.
 */
function hostnameOf(host: string): string | null {
  if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)$/.test(host)) return null;
  try {
    return new URL(`http://${host}`).hostname.replace(/(?<=.)\.$/, '');
  } catch {
    return null;
  }
}

/** `name[:port]` or `[v6][:port]` as a Host header carries it: the host name, or null if malformed. */
function hostHeaderName(host: string): string | null {
  const m = host.match(/^(\[[^\]]*\]|[^:]*)(:\d{1,5})?$/);
  return m ? hostnameOf(m[1]!) : null;
}

const IPV4 = /^\d+\.\d+\.\d+\.\d+$/;

function isIpLiteral(hostname: string): boolean {
  return IPV4.test(hostname) || hostname.startsWith('[');
}

/**
 * Loopback addresses (isLoopbackAddress: 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104), `localhost` and `*.localhost` (browsers resolve those to
 * loopback themselves, never through DNS): addresses only this machine reaches. Takes a bind
 * address (`::1`, `0.0.0.0`) or a host name.
 */
export function isLoopbackHost(host: string): boolean {
  const name = hostnameOf(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);
  if (name === null) return false;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  return isLoopbackAddress(name);
}

/**
 * DNS rebinding: a page on attacker.example that points its name at 127.0.0.1 reaches a server on
 * this machine as the same origin as itself, so it can read what it asks for; its requests still
 * say `Host: attacker.example`. So, with auth off (no token, no session to stop it), only Host names
 * that cannot be rebound are served: loopback names, IP literals (a rebinding page's Host is always
 * its own name, never an IP literal: a page served from an address has no name to rebind), and the
 * names the operator lists in MCP_FLEET_ALLOWED_HOSTS. A request without Host (HTTP/1.0) is no
 * browser's.
 */
export function hostRefusal(headers: HeaderSource, allowedHosts: readonly string[]): string | null {
  const host = headerOf(headers, 'host');
  if (host === null) return null;
  const name = hostHeaderName(host);
  if (name === null) return `Host ${JSON.stringify(host.slice(0, 100))} is not a host name`;
  if (isLoopbackHost(name) || isIpLiteral(name) || allowedHosts.includes(name)) return null;
  return `Host ${host.slice(0, 100)} is not a loopback name, an IP address or a name in MCP_FLEET_ALLOWED_HOSTS, and auth is off`;
}

/**
 * A write from another site's page (CSRF): refused when the browser says the page is another site's
 * (`Sec-Fetch-Site: cross-site` or `same-site`: a sibling subdomain or another port's page is not
 * us either), or when `Origin` names any origin but this server's own: its host and port must be
 * the request's Host (or, with `forwardedHost`, the X-Forwarded-Host a proxy in front set, which a
 * page cannot set without a preflight that neither server allows). `Origin: null` (a sandboxed or
 * file page, a redirect) and malformed origins are refused. No Origin and no Sec-Fetch-Site: no
 * browser (curl, the CLI, the dashboard's server-side calls), which passes.
 */
export function crossSiteRefusal(headers: HeaderSource, opts: { forwardedHost?: boolean } = {}): string | null {
  const site = headerOf(headers, 'sec-fetch-site');
  if (site !== null && site !== 'same-origin' && site !== 'none')
    return `a ${site.slice(0, 40)} request (Sec-Fetch-Site)`;
  const origin = headerOf(headers, 'origin');
  if (origin === null) return null;
  if (origin === 'null') return 'Origin null (a sandboxed or local page, or a redirect from another site)';
  let from: URL;
  try {
    from = new URL(origin);
  } catch {
    return `Origin ${JSON.stringify(origin.slice(0, 100))} is malformed`;
  }
  // An origin is exactly scheme://host[:port], as browsers serialize it.
  if (from.origin !== origin) return `Origin ${JSON.stringify(origin.slice(0, 100))} is opaque or malformed`;
  const hosts = [headerOf(headers, 'host')];
  if (opts.forwardedHost) hosts.push(headerOf(headers, 'x-forwarded-host')?.split(',')[0]?.trim() ?? null);
  const ours = hosts.some((host) => {
    if (host === null || hostHeaderName(host) === null) return false;
    try {
      // The Host read with the Origin's scheme, so a default port (80, 443) compares as omitted.
      return new URL(`${from.protocol}//${host}`).host === from.host;
    } catch {
      return false;
    }
  });
  return ours ? null : `Origin ${origin.slice(0, 100)} is not this server's own`;
}

export interface GuardPolicy {
  /** Auth on: a token or a session is needed anyway, which a rebinding page does not have. */
  authEnabled: boolean;
  /** MCP_FLEET_ALLOWED_HOSTS. */
  allowedHosts: readonly string[];
  /** Origin may match X-Forwarded-Host too (the dashboard, as Next's own server-action check does). */
  forwardedHost?: boolean;
}

/** Why a request is refused (403), or null: a foreign Host with auth off, or a cross-site write. */
export function requestRefusal(
  req: { method: string; path: string; headers: HeaderSource },
  policy: GuardPolicy,
): string | null {
  if (!policy.authEnabled && !PROBE_PATHS.includes(req.path)) {
    const foreign = hostRefusal(req.headers, policy.allowedHosts);
    if (foreign) return foreign;
  }
  return isWrite(req.method) ? crossSiteRefusal(req.headers, policy) : null;
}

/**
 * MCP_FLEET_ALLOWED_HOSTS: comma-separated host names served with auth off besides loopback names
 * and IP literals (the names a proxy or another container uses, e.g. `control` in docker-compose).
 * Names only: a scheme, port, path, wildcard or address is refused, naming the entry.
 */
export function parseAllowedHosts(list: string | undefined): string[] {
  return (list ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .flatMap((entry, i) => {
      if (!entry) return [];
      const name = hostnameOf(entry);
      const label = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;
      if (
        name === null ||
        isIpLiteral(name) ||
        name.length > 253 ||
        !name.split('.').every((l) => label.test(l)) ||
        /^\d+$/.test(name.split('.').at(-1)!)
      )
        throw new AuthConfigError(
          `MCP_FLEET_ALLOWED_HOSTS entry ${i + 1} (${JSON.stringify(entry.slice(0, 100))}) is not a host name: ` +
            'list names only, comma-separated, without scheme, port, path or wildcard (IP addresses are always served)',
        );
      return [name];
    });
}

/**
 * Refuse to listen beyond loopback with auth off, unless MCP_FLEET_ALLOW_UNAUTHENTICATED=1.
 * `what` names the listener ("control's API", "the dashboard"); `how` says how to turn auth on.
 */
export function assertSafeBind(opts: {
  what: string;
  host: string;
  authEnabled: boolean;
  allowUnauthenticated: boolean;
  how: string;
}): void {
  if (opts.authEnabled || opts.allowUnauthenticated || isLoopbackHost(opts.host)) return;
  throw new AuthConfigError(
    `${opts.what} would listen on ${opts.host} with no authentication: anyone who reaches it could change the fleet. ` +
      `${opts.how}, listen on 127.0.0.1, or set MCP_FLEET_ALLOW_UNAUTHENTICATED=1 if something in front of it authenticates.`,
  );
}
