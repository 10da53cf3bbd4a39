// The sign-in form's post. Refused (403) unless it comes from this dashboard's own pages — the
// explicit CSRF check (proxy.ts makes it too) — then the password is checked in constant time and
// a session cookie set: HttpOnly, SameSite=Strict, Secure over HTTPS, signed, 12 hours. Failed
// sign-ins are rationed per client and in all (lib/sign-in-budget.ts).
import { browserRefusal, isHttps, safeNext, sessionCookie, webAuth } from '../../../lib/auth-core';
import { clientAddress, sharedSignInBudget } from '../../../lib/sign-in-budget';

export const dynamic = 'force-dynamic';

export async function POST(request: Request) {
  const auth = webAuth();
  const refused = browserRefusal(auth, { method: 'POST', path: '/auth/login', headers: request.headers });
  if (refused) return text(403, `Sign-in refused: ${refused}.`);
  const form = await request.formData().catch(() => null);
  const next = safeNext(form?.get('next'));
  if (!auth.enabled) return seeOther(next);
  const back = (error: 'wrong' | 'busy') => {
    const query = new URLSearchParams({ error });
    if (next !== '/') query.set('next', next);
    return seeOther(`/login?${query}`);
  };
  const budget = sharedSignInBudget();
  const client = clientAddress(request.headers);
  // Spent: the password is not even compared, so a guess made now can tell nothing.
  if (budget.wait(client) > 0) return back('busy');
  const password = form?.get('password');
  const scope = typeof password === 'string' ? auth.login(password) : null;
  if (!scope) {
    budget.failed(client);
    // A pause makes guessing slow; the answer says nothing about which part was wrong.
    await new Promise((r) => setTimeout(r, 400));
    return back('wrong');
  }
  return seeOther(next, sessionCookie(auth.sign(scope), isHttps(request.headers, request.url)));
}

function seeOther(location: string, cookie?: string): Response {
  const headers = new Headers({ location, 'cache-control': 'no-store' });
  if (cookie) headers.append('set-cookie', cookie);
  return new Response(null, { status: 303, headers });
}

function text(status: number, body: string): Response {
  return new Response(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}
