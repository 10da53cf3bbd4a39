import { STANDARD_RANGE } from '@mcp-fleet/store';
import type { Metadata } from 'next';
import { cookies } from 'next/headers';
import Link from 'next/link';
import { Suspense } from 'react';
import { MainNav } from '../components/main-nav';
import { RangePicker } from '../components/range-picker';
import { Refresh } from '../components/refresh';
import { ThemeToggle } from '../components/theme-toggle';
import { THEME_COOKIE } from '../lib/cookies';
import { savedRange } from '../lib/range';
import { currentSession } from '../lib/session';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'mcp-fleet', template: '%s · mcp-fleet' },
  description: 'Which MCP protocol revisions the fleet speaks, region by region.',
};

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  const jar = await cookies();
  const theme = jar.get(THEME_COOKIE)?.value;
  // Signed out (only /login renders so): the brand and the theme, no pages to go to.
  const session = await currentSession().catch(() => null);
  // Without a database the page's own error says why; the picker falls back to the standard range.
  const range = session ? await savedRange().catch(() => ({ name: STANDARD_RANGE, fitted: false })) : null;
  return (
    <html lang="en" data-theme={theme === 'dark' || theme === 'light' ? theme : undefined}>
      <body>
        <a className="skip" href="#content">
          Skip to content
        </a>
        <header className="top">
          <Link className="brand" href="/">
            mcp-fleet
          </Link>
          {session && <MainNav />}
          <div className="toolbar">
            {session && (
              <>
                <Suspense>
                  <RangePicker saved={range?.name ?? STANDARD_RANGE} fitted={range?.fitted ?? false} />
                </Suspense>
                <Refresh />
              </>
            )}
            <ThemeToggle current={theme} />
            {session && !session.open && (
              <form method="post" action="/auth/logout">
                {session.scope === 'read' && <span className="muted">read-only · </span>}
                <button type="submit">Sign out</button>
              </form>
            )}
          </div>
        </header>
        <main id="content">{children}</main>
      </body>
    </html>
  );
}
