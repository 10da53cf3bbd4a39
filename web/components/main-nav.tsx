'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';

const PAGES = [
  { href: '/', label: 'Overview' },
  { href: '/servers', label: 'Servers' },
  { href: '/era-moves', label: 'Era moves' },
  { href: '/conformance', label: 'Conformance' },
  { href: '/servers/new', label: 'Add server' },
];

export function MainNav() {
  const path = usePathname();
  const current = (href: string) =>
    href === '/'
      ? path === '/'
      : href === '/servers'
        ? path === '/servers' || (path.startsWith('/servers/') && path !== '/servers/new')
        : path === href;
  return (
    <nav className="main" aria-label="Pages">
      {PAGES.map((p) => (
        <Link key={p.href} href={p.href} aria-current={current(p.href) ? 'page' : undefined}>
          {p.label}
        </Link>
      ))}
    </nav>
  );
}
