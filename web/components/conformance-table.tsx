// A server's last conformance result per era, as the CLI prints it (Check · Level · Result ·
// Message), failures first, plus since when each check has stood so and its evidence on click.
// Messages and evidence come from the probed server through an agent (hostile): they are only ever
// text nodes here (React escapes them), the evidence as JSON in a <pre>, cut to a bound.
import { checkById } from '@mcp-fleet/probe';
import type { EraConformance, MergedCheck } from '@mcp-fleet/store';
import { ago, utc } from '../lib/format';
import { RevisionBadge } from './revision-badge';

/** The most evidence one check shows (probe bounds it already; a row from an older agent may not be). */
const EVIDENCE_CHARS = 4_000;

export function ConformanceResults({ eras }: { eras: EraConformance[] }) {
  return (
    <>
      {eras.map((e) => {
        const failingMust = e.checks.filter((c) => c.status === 'fail' && c.level === 'MUST').length;
        const warnings = e.checks.filter((c) => c.status === 'fail' && c.level === 'SHOULD').length;
        return (
          <div key={e.era} data-testid={`conformance-${e.era}`} className="conformance-era">
            <h3>
              {e.era === 'modern' ? 'Modern' : e.era === 'legacy' ? 'Legacy' : e.era} era{' '}
              {e.negotiated.map((r) => (
                <RevisionBadge key={r} revision={r} />
              ))}{' '}
              {failingMust > 0 ? (
                <span className="fail">
                  {failingMust} MUST {failingMust === 1 ? 'check fails' : 'checks fail'}
                </span>
              ) : (
                <span className="ok">passes every MUST check</span>
              )}
              {warnings > 0 ? (
                <span className="warn">
                  {' '}
                  · {warnings} {warnings === 1 ? 'warning' : 'warnings'}
                </span>
              ) : null}
            </h3>
            <p className="sub">
              Last run {ago(e.lastRunAt)} ({utc(e.lastRunAt)})
              {e.current ? '' : ': an earlier era, the server negotiates another one now'}.
            </p>
            <div className="table-wrap">
              <table className="conformance" data-testid="conformance-table">
                <thead>
                  <tr>
                    <th scope="col">Check</th>
                    <th scope="col">Level</th>
                    <th scope="col">Result</th>
                    <th scope="col">Message</th>
                    <th scope="col">Since</th>
                  </tr>
                </thead>
                <tbody>
                  {e.checks.map((c) => (
                    <CheckRow key={c.checkId} check={c} />
                  ))}
                </tbody>
              </table>
            </div>
          </div>
        );
      })}
    </>
  );
}

function CheckRow({ check: c }: { check: MergedCheck }) {
  const rule = checkById(c.checkId)?.rule;
  const failing = c.status === 'fail';
  return (
    <tr className={failing ? `check-fail ${c.level === 'MUST' ? 'must' : 'should'}` : undefined}>
      <th scope="row" className="nowrap" title={rule}>
        <code>{c.checkId}</code>
        {rule ? <div className="muted rule">{rule}</div> : null}
      </th>
      <td>{c.level}</td>
      <td className="nowrap">
        <span className={failing ? (c.level === 'MUST' ? 'fail' : 'warn') : c.status === 'pass' ? 'ok' : 'muted'}>
          {c.status}
        </span>
        {failing && c.level === 'SHOULD' ? <span className="muted"> (warning)</span> : null}
        {c.split && failing ? <div className="muted">in {c.failingRegions.join(', ')}</div> : null}
      </td>
      <td>
        {c.message}
        {c.evidence != null ? (
          <details>
            <summary>Evidence</summary>
            <pre className="evidence" data-testid="check-evidence">
              {evidenceText(c.evidence)}
            </pre>
          </details>
        ) : null}
      </td>
      <td className="nowrap" title={utc(c.since)} data-testid="check-since">
        {failing ? `failing since ${utc(c.since)}` : `since ${utc(c.since)}`}
        <div className="muted">{ago(c.since)}</div>
      </td>
    </tr>
  );
}

/** The stored evidence as indented JSON, cut to a bound: text only, whatever the server put in it. */
function evidenceText(evidence: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(evidence, null, 2) ?? String(evidence);
  } catch {
    text = String(evidence);
  }
  return text.length > EVIDENCE_CHARS ? `${text.slice(0, EVIDENCE_CHARS)}… (cut)` : text;
}
