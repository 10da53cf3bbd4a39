import type { Metadata } from 'next';
import { cookies } from 'next/headers';
import Link from 'next/link';
import { Suspense } from 'react';
import { MainNav } from '../components/main-nav';
import { RangePicker } from '../components/range-picker';
import { Refresh } from '../components/refresh';
import { ThemeToggle } from '../components/theme-toggle';
import { RANGE_COOKIE, THEME_COOKIE } from '../lib/cookies';
import { DEFAULT_RANGE } from '../lib/range';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'mcp-fleet', template: '%s · mcp-fleet' },
  description: 'Which MCP protocol revisions the fleet speaks, region by region.',
};

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  const jar = await cookies();
  const theme = jar.get(THEME_COOKIE)?.value;
  const range = jar.get(RANGE_COOKIE)?.value ?? DEFAULT_RANGE;
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
          <MainNav />
          <div className="toolbar">
            <Suspense>
              <RangePicker saved={range} />
            </Suspense>
            <Refresh />
            <ThemeToggle current={theme} />
          </div>
        </header>
        <main id="content">{children}</main>
      </body>
    </html>
  );
}
