// A server's surface change history, newest first, as the run history reads: when, where, the
// severity (breaking, warning, info) and the one-line message ("tool `create_order`: parameter
// `currency` now required"), with a link to the diff of the item. Messages quote the server's own
// names (hostile): the backticked parts become <code> text nodes, never markup.
import type { SurfaceChangeRow } from '@mcp-fleet/store';
import Link from 'next/link';
import { ago, utc } from '../lib/format';
import { cut, SEVERITY_CLASS, TEXT_CHARS } from '../lib/surface';

export function SeverityBadge({ severity }: { severity: string }) {
  return (
    <span className={`badge severity ${SEVERITY_CLASS[severity] ?? 'muted'}`} data-severity={severity}>
      {cut(severity, 20)}
    </span>
  );
}

/** A change's message with its `backticked` names as code. */
export function ChangeMessage({ message }: { message: string }) {
  const parts = cut(message, TEXT_CHARS).split('`');
  return (
    <>
      {parts.map((p, i) =>
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one string, in order
        i % 2 === 1 && i < parts.length - 1 ? <code key={i}>{p}</code> : <span key={i}>{p}</span>,
      )}
    </>
  );
}

export function SurfaceChangeTable({
  changes,
  focus,
  showServer = false,
}: {
  changes: SurfaceChangeRow[];
  /** The change whose diff is shown. */
  focus?: number | undefined;
  /** Across the fleet (the era-moves page): a column for the server. */
  showServer?: boolean;
}) {
  return (
    <div className="table-wrap">
      <table data-testid="surface-changes">
        <thead>
          <tr>
            <th scope="col">When</th>
            {showServer ? <th scope="col">Server</th> : null}
            <th scope="col">Region</th>
            <th scope="col">Era</th>
            <th scope="col">Severity</th>
            <th scope="col">Change</th>
            <th scope="col">Diff</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((c) => (
            <tr key={c.id} id={`change-${c.id}`} className={focus === c.id ? 'highlight' : undefined}>
              <td className="nowrap" title={utc(c.at)}>
                {ago(c.at)}
              </td>
              {showServer ? (
                <td>
                  <Link href={`/servers/${c.serverId}`}>{c.serverName}</Link>
                </td>
              ) : null}
              <td className="nowrap">{cut(c.region, 60)}</td>
              <td>{cut(c.era, 20)}</td>
              <td>
                <SeverityBadge severity={c.severity} />
              </td>
              <td className="change-message">
                <ChangeMessage message={c.message} />
              </td>
              <td className="nowrap">
                <Link href={`/servers/${c.serverId}?change=${c.id}#surface-diff`}>diff</Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
