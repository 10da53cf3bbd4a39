// The signed-in session as pages and server actions see it. proxy.ts already turns away requests
// without one; server actions check again here (a proxy matcher can drift, an action cannot).
import 'server-only';
import { cookies } from 'next/headers';
import { SESSION_COOKIE, type Session, webAuth } from './auth-core';

/** The session, `open` when sign-in is off (everyone is admin on a one-machine dashboard), or null. */
export async function currentSession(): Promise<(Session & { open: boolean }) | null> {
  const auth = webAuth();
  if (!auth.enabled) return { scope: 'admin', expires: Number.POSITIVE_INFINITY, open: true };
  const s = auth.verify((await cookies()).get(SESSION_COOKIE)?.value);
  return s ? { ...s, open: false } : null;
}

/** Why this request may not change the fleet, or null: no session, or a read-only one. */
export async function writeRefusal(): Promise<string | null> {
  const s = await currentSession();
  if (!s) return 'Sign in first: your session has ended.';
  if (s.scope !== 'admin')
    return 'This session is read-only (signed in with a read token): it cannot change the fleet.';
  return null;
}
