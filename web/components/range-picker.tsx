'use client';
// The shared time range: kept in a cookie so every page uses it, and in the URL of the page where
// it was picked so the link can be shared. Until one is picked, the default is fitted to the data's
// age (lib/range.ts), and the picker says so.
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useState, useTransition } from 'react';
import { RANGE_COOKIE as COOKIE, RANGE_NAMES as RANGES } from '../lib/cookies';

export function RangePicker({ saved, fitted }: { saved: string; fitted: boolean }) {
  const router = useRouter();
  const path = usePathname();
  const params = useSearchParams();
  const [pending, start] = useTransition();
  // The layout that passed `saved` is not rendered again on navigation: remember a pick here.
  const [picked, setPicked] = useState<string | null>(null);
  const fromUrl = params.get('range');
  const linked = fromUrl && (RANGES as readonly string[]).includes(fromUrl) ? fromUrl : null;
  const current = linked ?? picked ?? saved;
  const isFitted = fitted && !linked && !picked;
  const pick = (range: string) => {
    // biome-ignore lint/suspicious/noDocumentCookie: a plain preference cookie; the server reads it.
    document.cookie = `${COOKIE}=${range}; path=/; max-age=31536000; samesite=lax`;
    setPicked(range);
    const next = new URLSearchParams(params);
    next.set('range', range);
    next.delete('page');
    next.delete('before');
    start(() => router.replace(`${path}?${next}`, { scroll: false }));
  };
  return (
    <span className="range">
      <fieldset
        className="segmented"
        aria-label="Time range"
        aria-describedby={isFitted ? 'range-fitted' : undefined}
        aria-busy={pending}
        style={{ padding: 0, margin: 0 }}
      >
        {RANGES.map((r) => (
          <button key={r} type="button" aria-pressed={r === current} onClick={() => pick(r)}>
            {r}
          </button>
        ))}
      </fieldset>
      {isFitted && (
        <span
          id="range-fitted"
          className="range-hint"
          data-testid="range-fitted"
          title="No range picked: the default fits how old the data is (the oldest run). Pick one to keep it."
        >
          {current} (fitted to data)
        </span>
      )}
    </span>
  );
}
