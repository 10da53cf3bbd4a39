export function Loading() {
  return (
    <div aria-busy="true" aria-live="polite">
      <p className="muted">Loading…</p>
      <div className="skeleton" />
    </div>
  );
}
