'use client';
// The shared time range: kept in a cookie so every page uses it, and in the URL of the page where
// it was picked so the link can be shared.
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useTransition } from 'react';
import { RANGE_COOKIE as COOKIE, RANGE_NAMES as RANGES } from '../lib/cookies';

export function RangePicker({ saved }: { saved: string }) {
  const router = useRouter();
  const path = usePathname();
  const params = useSearchParams();
  const [pending, start] = useTransition();
  const fromUrl = params.get('range');
  const current = fromUrl && (RANGES as readonly string[]).includes(fromUrl) ? fromUrl : saved;
  const pick = (range: string) => {
    // biome-ignore lint/suspicious/noDocumentCookie: a plain preference cookie; the server reads it.
    document.cookie = `${COOKIE}=${range}; path=/; max-age=31536000; samesite=lax`;
    const next = new URLSearchParams(params);
    next.set('range', range);
    next.delete('page');
    next.delete('before');
    start(() => router.replace(`${path}?${next}`, { scroll: false }));
  };
  return (
    <fieldset className="segmented" aria-label="Time range" aria-busy={pending} style={{ padding: 0, margin: 0 }}>
      {RANGES.map((r) => (
        <button key={r} type="button" aria-pressed={r === current} onClick={() => pick(r)}>
          {r}
        </button>
      ))}
    </fieldset>
  );
}
