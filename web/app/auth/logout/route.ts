// Sign out: the session cookie is cleared (same-origin posts only, as for signing in).
import { browserRefusal, isHttps, sessionCookie, webAuth } from '../../../lib/auth-core';

export const dynamic = 'force-dynamic';

export async function POST(request: Request) {
  const refused = browserRefusal(webAuth(), { method: 'POST', path: '/auth/logout', headers: request.headers });
  if (refused)
    return new Response(`Sign-out refused: ${refused}.`, {
      status: 403,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
  const headers = new Headers({ location: '/login', 'cache-control': 'no-store' });
  headers.append('set-cookie', sessionCookie(null, isHttps(request.headers, request.url)));
  return new Response(null, { status: 303, headers });
}
