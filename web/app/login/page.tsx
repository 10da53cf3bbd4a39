// Sign in: the dashboard password (MCP_FLEET_WEB_PASSWORD) or an API token. A plain form posted to
// /auth/login, so it works without JavaScript and from the keyboard alone.
import { redirect } from 'next/navigation';
import { safeNext, webAuth } from '../../lib/auth-core';
import { param, type SearchParams } from '../../lib/range';
import { currentSession } from '../../lib/session';

export const metadata = { title: 'Sign in' };
export const dynamic = 'force-dynamic';

export default async function Login({ searchParams }: { searchParams: SearchParams }) {
  const params = await searchParams;
  const next = safeNext(param(params, 'next'));
  if (!webAuth().enabled) redirect(next);
  const session = await currentSession();
  if (session) redirect(next);
  const error = param(params, 'error');
  return (
    <div className="panel login">
      <h1>Sign in</h1>
      <form method="post" action="/auth/login" className="editor" aria-describedby="login-help">
        <input type="hidden" name="next" value={next} />
        <label>
          Password
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            // biome-ignore lint/a11y/noAutofocus: the page's only field; nothing else to do here.
            autoFocus
            aria-invalid={error ? true : undefined}
          />
        </label>
        {error && (
          <p role="alert" className="error">
            {error === 'expired'
              ? 'Your session has ended; sign in again.'
              : error === 'busy'
                ? 'Too many failed sign-ins in the last minute; try again in a minute.'
                : 'That password is not right.'}
          </p>
        )}
        <div>
          <button type="submit" className="primary">
            Sign in
          </button>
        </div>
        <p id="login-help" className="help">
          The dashboard password (MCP_FLEET_WEB_PASSWORD), or an API token: a read token opens a read-only session.
        </p>
      </form>
    </div>
  );
}
