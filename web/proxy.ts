// In front of every page, route and server action (Next 16's proxy, formerly middleware):
// - a write (POST: server actions, sign-in, sign-out) from another site's page is refused, 403;
// - with sign-in off, only Host names that cannot be rebound are served (loopback names, IP
//   literals, MCP_FLEET_ALLOWED_HOSTS), even with MCP_FLEET_ALLOW_UNAUTHENTICATED=1: no DNS
//   rebinding into an open dashboard (both rules are store's request-guard, as control's API has them);
// - with sign-in on, a request without a valid session goes to /login (a page) or gets 401 (a POST).
// Server actions check the session again themselves (lib/session.ts).
import { type NextRequest, NextResponse } from 'next/server';
import { browserRefusal, SESSION_COOKIE, safeNext, webAuth } from './lib/auth-core';

/** Reachable without a session: the sign-in page and its post, and the container probes. */
const HOP_COOKIE = 'mcp-fleet-hop';

const OPEN = new Set(['/login', '/auth/login', '/auth/logout', '/healthz', '/readyz']);

export function proxy(request: NextRequest) {
  const path = request.nextUrl.pathname;
  let auth: ReturnType<typeof webAuth>;
  try {
    auth = webAuth();
  } catch (err) {
    console.error(`dashboard: sign-in is misconfigured: ${(err as Error).message}`);
    return refuse(500, `The dashboard's sign-in is misconfigured: ${(err as Error).message}`);
  }
  const safe = request.method === 'GET' || request.method === 'HEAD';
  const refused = browserRefusal(auth, { method: request.method, path, headers: request.headers });
  if (refused) return refuse(403, `Refused: ${refused}.`);
  if (!auth.enabled || OPEN.has(path)) return NextResponse.next();
  const cookie = request.cookies.get(SESSION_COOKIE)?.value;
  if (auth.verify(cookie)) {
    const res = NextResponse.next();
    if (request.cookies.has(HOP_COOKIE)) res.cookies.delete(HOP_COOKIE);
    return res;
  }
  if (!safe) return refuse(401, 'Sign in first.');
  // A link followed from another site arrives without the SameSite=Strict cookie; one reload from
  // this origin sends it (without a session, that reload comes back here and goes to /login). The
  // Lax hop cookie makes it one reload at most, whatever a browser makes of the refresh.
  if (
    request.headers.get('sec-fetch-site') === 'cross-site' &&
    request.headers.get('sec-fetch-mode') === 'navigate' &&
    !request.cookies.has(HOP_COOKIE)
  ) {
    const res = new NextResponse('<!doctype html><meta http-equiv="refresh" content="0"><title>mcp-fleet</title>', {
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
    });
    res.cookies.set(HOP_COOKIE, '1', { path: '/', maxAge: 30, httpOnly: true, sameSite: 'lax' });
    return res;
  }
  const login = new URL('/login', request.url);
  const next = safeNext(`${path}${request.nextUrl.search}`);
  if (next !== '/') login.searchParams.set('next', next);
  if (cookie) login.searchParams.set('error', 'expired');
  return NextResponse.redirect(login, 307);
}

function refuse(status: number, message: string): NextResponse {
  return new NextResponse(message, {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
  });
}

export const config = {
  // Everything but the build's static files and the icon (no data in them).
  matcher: ['/((?!_next/static|_next/image|icon.svg|favicon.ico).*)'],
};
