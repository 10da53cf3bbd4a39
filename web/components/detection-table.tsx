// The latest detection as the editor shows it (docs/protocol.md#detection-in-the-editor):
// Revision | Generation | Result | Note, with the evidence (status, content type, first bytes) of
// every revision the server does not support. When one cause explains every revision (a 401, a
// refused connection…: probe's cause.ts, docs/protocol.md#not-era-evidence) it comes first, and a
// revision nothing was learnt about reads "unknown", not "Not supported".
import { type Cause, causeSentence, isCause, learntNothing } from '@mcp-fleet/probe/cause';

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

/** What an operator at the dashboard can do about each cause (the CLI words its own). */
const HINTS: Record<Cause, string> = {
  unreachable: 'Is the server running, and listening at this address and port?',
  dns: 'Check the host name.',
  tls: "The server's certificate must be current, for this host name, and from a CA the probes trust.",
  auth_required:
    'Give the server the credential it needs: a header such as Authorization, under Headers in the editor.',
  server_error: 'The server is failing: try again later, or look at its logs.',
  timeout: 'No answer in time: raise the timeout, or check that the server is answering.',
  policy: "The probe floor or the fleet's policy does not let probes reach this address.",
};

/**
 * The cause sentence, or nothing when there is no one cause. `cause` comes from a stored result
 * (the bus validated it; an older one has none): anything but a known cause is ignored.
 */
export function DetectionCause({ cause, revisions }: { cause: unknown; revisions: DetectionEntry[] }) {
  const evidence = revisions[0]?.evidence;
  if (!isCause(cause) || !evidence) return null;
  return (
    <p className="notice" data-testid="detection-cause">
      <strong>{causeSentence(cause, evidence)}</strong> on every revision, so nothing was learnt about which it speaks.{' '}
      {HINTS[cause]}
    </p>
  );
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
                    {learntNothing(r.evidence) ? (
                      <span className="muted">unknown</span>
                    ) : (
                      <span className="fail">Not supported</span>
                    )}
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
