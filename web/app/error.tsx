'use client';
// A page that could not be read (database down, control unreachable): say so, offer a retry, keep the layout.
export default function PageError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="panel" role="alert">
      <h1>This page could not be loaded</h1>
      <p className="error">{error.message || 'The server failed to render this page.'}</p>
      {error.digest && <p className="muted">Reference {error.digest} (the dashboard's log has the details).</p>}
      <button type="button" onClick={reset}>
        Try again
      </button>
    </div>
  );
}
