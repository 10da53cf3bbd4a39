// Times and durations as an operator reads them: UTC, to the second, and "3 min ago".

export function utc(d: Date | string | null | undefined): string {
  if (!d) return '—';
  const date = typeof d === 'string' ? new Date(d) : d;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export function ago(d: Date | string | null | undefined, now = Date.now()): string {
  if (!d) return 'never';
  const ms = now - (typeof d === 'string' ? new Date(d) : d).getTime();
  if (ms < 60_000) return `${Math.max(0, Math.round(ms / 1000))} s ago`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min ago`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h ago`;
  return `${Math.round(ms / 86_400_000)} d ago`;
}

export function percent(part: number, whole: number): string {
  return whole > 0 ? `${Math.round((part / whole) * 100)}%` : '—';
}
