'use client';
// Light or dark; without a choice the system's preference holds (globals.css).
import { useState } from 'react';
import { THEME_COOKIE } from '../lib/cookies';

export function ThemeToggle({ current }: { current: string | undefined }) {
  const [theme, setTheme] = useState(current);
  const toggle = () => {
    const dark = theme === 'dark' || (theme !== 'light' && window.matchMedia('(prefers-color-scheme: dark)').matches);
    const next = dark ? 'light' : 'dark';
    document.documentElement.dataset.theme = next;
    // biome-ignore lint/suspicious/noDocumentCookie: a plain preference cookie; the layout reads it.
    document.cookie = `${THEME_COOKIE}=${next}; path=/; max-age=31536000; samesite=lax`;
    setTheme(next);
  };
  return (
    <button type="button" onClick={toggle} aria-label="Switch between light and dark">
      {theme === 'dark' ? 'Light' : theme === 'light' ? 'Dark' : 'Light / dark'}
    </button>
  );
}
