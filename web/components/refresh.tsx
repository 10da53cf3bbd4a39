'use client';
// Refresh without a full reload: the server components render again and the charts keep their place.
import { useRouter } from 'next/navigation';
import { useEffect, useState, useTransition } from 'react';

const EVERY_MS = 30_000;

export function Refresh() {
  const router = useRouter();
  const [pending, start] = useTransition();
  const [auto, setAuto] = useState(true);
  const [at, setAt] = useState<string>('');
  useEffect(() => setAt(new Date().toISOString().slice(11, 19)), []);
  const refresh = () =>
    start(() => {
      router.refresh();
      setAt(new Date().toISOString().slice(11, 19));
    });
  // biome-ignore lint/correctness/useExhaustiveDependencies: refresh is recreated each render; the interval follows `auto`.
  useEffect(() => {
    if (!auto) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') refresh();
    }, EVERY_MS);
    return () => clearInterval(timer);
  }, [auto]);
  return (
    <span style={{ display: 'inline-flex', gap: 8, alignItems: 'center' }}>
      <button type="button" onClick={refresh} disabled={pending} aria-label="Refresh now">
        {pending ? 'Refreshing…' : 'Refresh'}
      </button>
      <label className="check" style={{ flexDirection: 'row', alignItems: 'center' }}>
        <input type="checkbox" checked={auto} onChange={(e) => setAuto(e.target.checked)} /> every 30 s
      </label>
      <span className="muted" aria-live="polite" style={{ fontSize: 12 }}>
        {at ? `updated ${at} UTC` : ''}
      </span>
    </span>
  );
}
