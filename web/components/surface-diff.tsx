// The diff view of one surface change: the item it names (a tool's definition, with its input and
// output schema; a prompt, a resource, a capability…) before and after, as pretty JSON with keys
// sorted, diffed line by line with jsdiff (`diff`) and shown unified: removed lines red, added
// green, long unchanged runs folded. Both sides come from the server (hostile): every line is a text
// node, cut to a bound, and the diff itself is bounded in time and edits.
import type { Surface } from '@mcp-fleet/probe';
import type { SurfaceChangeRow } from '@mcp-fleet/store';
import { diffLines } from 'diff';
import Link from 'next/link';
import { ago, utc } from '../lib/format';
import { cut, itemOf, JSON_CHARS, prettyJson } from '../lib/surface';
import { ChangeMessage, SeverityBadge } from './surface-changes';

/** Unchanged lines kept around each change; longer unchanged runs fold. */
const CONTEXT = 3;
/** The longest line shown. */
const LINE_CHARS = 400;
/** The most lines the view draws. */
const MAX_LINES = 1_500;

interface Line {
  sign: ' ' | '+' | '-';
  text: string;
  old?: number;
  new?: number;
}

/** `at`: the row's place in the diff (its key). */
type Row = (Line | { fold: number }) & { at: number };

/** Unified rows of the line diff, unchanged runs beyond the context folded; undefined when too large to diff. */
export function diffRows(before: string, after: string): Row[] | undefined {
  const parts = diffLines(before, after, { maxEditLength: 4_000, timeout: 500 });
  if (!parts) return undefined;
  const lines: Line[] = [];
  let o = 1;
  let n = 1;
  for (const p of parts) {
    const texts = p.value.replace(/\n$/, '').split('\n');
    for (const text of texts) {
      if (p.added) lines.push({ sign: '+', text, new: n++ });
      else if (p.removed) lines.push({ sign: '-', text, old: o++ });
      else lines.push({ sign: ' ', text, old: o++, new: n++ });
    }
  }
  const near = lines.map((_, i) => lines.slice(Math.max(0, i - CONTEXT), i + CONTEXT + 1).some((l) => l.sign !== ' '));
  const rows: Row[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (near[i]) {
      rows.push({ ...lines[i]!, at: i });
      continue;
    }
    let j = i;
    while (j < lines.length && !near[j]) j++;
    rows.push({ fold: j - i, at: i });
    i = j - 1;
  }
  return rows;
}

export function SurfaceDiff({
  change,
  before,
  after,
}: {
  change: SurfaceChangeRow;
  before: Surface | null;
  after: Surface | null;
}) {
  const was = itemOf(before, change.kind, change.name);
  const now = itemOf(after, change.kind, change.name);
  // prettyJson bounds each string, list and object, so both sides keep their shape whatever their size.
  const beforeText = was === undefined ? '' : prettyJson(was);
  const afterText = now === undefined ? '' : prettyJson(now);
  const rows = diffRows(beforeText, afterText);
  const drawn = rows?.slice(0, MAX_LINES);
  return (
    <div className="surface-diff" id="surface-diff" data-testid="surface-diff">
      <h3>
        <SeverityBadge severity={change.severity} /> <ChangeMessage message={change.message} />
      </h3>
      <p className="sub">
        {cut(change.kind, 40)} <code>{cut(change.name, 200)}</code> · {cut(change.region, 60)} · {cut(change.era, 20)}{' '}
        era · <span title={utc(change.at)}>{ago(change.at)}</span>
        {change.path ? (
          <>
            {' '}
            · at <code>{cut(change.path, 200)}</code>
          </>
        ) : null}{' '}
        · <code title={change.fromHash}>{change.fromHash.slice(0, 12)}</code> →{' '}
        <code title={change.toHash}>{change.toHash.slice(0, 12)}</code> ·{' '}
        <Link href={`/servers/${change.serverId}#surface-h`}>close</Link>
      </p>
      {!before || !after ? (
        <p className="notice">
          {!before && !after
            ? 'Neither snapshot is'
            : !before
              ? 'The earlier snapshot is not'
              : 'The later snapshot is not'}{' '}
          stored any more; the diff shows what is left.
        </p>
      ) : null}
      {was === undefined && now === undefined ? (
        <p className="empty">Neither snapshot has this item (it may lie beyond a truncated snapshot's cut).</p>
      ) : !drawn ? (
        <p className="empty" data-testid="diff-too-large">
          Too different to diff line by line: before and after are shown whole.
        </p>
      ) : (
        <div className="table-wrap">
          <table className="diff" data-testid="diff-lines">
            <thead>
              <tr>
                <th scope="col" className="num">
                  before
                </th>
                <th scope="col" className="num">
                  after
                </th>
                <th scope="col">
                  {was === undefined ? '(absent before)' : now === undefined ? '(absent after)' : 'definition'}
                </th>
              </tr>
            </thead>
            <tbody>
              {drawn.map((r) =>
                'fold' in r ? (
                  <tr key={r.at} className="fold">
                    <td colSpan={3} className="muted">
                      … {r.fold} unchanged {r.fold === 1 ? 'line' : 'lines'}
                    </td>
                  </tr>
                ) : (
                  <tr
                    key={r.at}
                    className={r.sign === '+' ? 'add' : r.sign === '-' ? 'del' : undefined}
                    data-sign={r.sign}
                  >
                    <td className="num muted">{r.old ?? ''}</td>
                    <td className="num muted">{r.new ?? ''}</td>
                    <td>
                      <pre>
                        {r.sign} {cut(r.text, LINE_CHARS)}
                      </pre>
                    </td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
          {rows && rows.length > MAX_LINES ? (
            <p className="muted">
              The first {MAX_LINES} of {rows.length} lines shown.
            </p>
          ) : null}
        </div>
      )}
      {!drawn ? (
        <div className="grid">
          <pre className="evidence surface-json">{cut(beforeText, JSON_CHARS)}</pre>
          <pre className="evidence surface-json">{cut(afterText, JSON_CHARS)}</pre>
        </div>
      ) : null}
    </div>
  );
}
