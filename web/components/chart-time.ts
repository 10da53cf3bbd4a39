// Axis and tooltip labels for time-bucketed charts (UTC, matching the rest of the dashboard).

export function tickFormat(spanMs: number): (ms: number) => string {
  return (ms: number) => {
    const iso = new Date(ms).toISOString();
    return spanMs > 2 * 86_400_000 ? iso.slice(5, 10) : iso.slice(11, 16);
  };
}

export function labelFormat(ms: unknown): string {
  return typeof ms === 'number' ? `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC` : String(ms);
}
