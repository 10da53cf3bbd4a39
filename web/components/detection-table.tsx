// The latest detection as seed 001's editor shows it: Revision | Generation | Result | Note, with
// the evidence (status, content type, first bytes) of every revision the server does not support.
export interface DetectionEntry {
  revision: string;
  generation: string;
  supported: boolean;
  note: string;
  sentence?: string;
  serverInfo?: { name?: string; version?: string } | null;
  evidence?: {
    status?: number | null;
    contentType?: string | null;
    bodyPreview?: string | null;
    jsonRpcErrorCode?: number | null;
    reachabilityFailure?: string | null;
    message?: string | null;
  } | null;
}

export function DetectionTable({ revisions }: { revisions: DetectionEntry[] }) {
  return (
    <div className="table-wrap">
      <table data-testid="detection-table">
        <thead>
          <tr>
            <th scope="col">Revision</th>
            <th scope="col">Generation</th>
            <th scope="col">Result</th>
            <th scope="col">Note</th>
          </tr>
        </thead>
        <tbody>
          {revisions.map((r) => (
            <tr key={r.revision}>
              <td>{r.revision}</td>
              <td>{r.generation}</td>
              <td>
                {r.supported ? (
                  <span className="ok">Supported</span>
                ) : (
                  <>
                    <span className="fail">Not supported</span>
                    <Evidence e={r.evidence} />
                  </>
                )}
              </td>
              <td>{r.note}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Evidence({ e }: { e: DetectionEntry['evidence'] }) {
  if (!e) return null;
  const parts = [
    e.status ? `HTTP ${e.status}` : (e.reachabilityFailure ?? null),
    e.contentType ?? null,
    e.jsonRpcErrorCode != null ? `JSON-RPC ${e.jsonRpcErrorCode}` : null,
  ].filter(Boolean);
  return (
    <div className="evidence">
      {parts.length > 0 && <div>{parts.join(', ')}</div>}
      {e.bodyPreview && <div>“{e.bodyPreview.slice(0, 120)}”</div>}
      {!parts.length && !e.bodyPreview && e.message && <div>{e.message}</div>}
    </div>
  );
}
