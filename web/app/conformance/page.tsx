// The fleet's conformance now: a check × server matrix of the servers with a conformance test,
// each cell the check's worst state across the server's regions (fail > pass > skip), filterable
// by the era the servers negotiate and by level. Check ids and messages come from agents' results
// (hostile): they are shown as text only, and the query parameters are matched against fixed lists.
import type { CheckLevel, Era } from '@mcp-fleet/probe';
import { type ConformanceMatrix, type ConformanceMatrixCell, conformanceMatrixNow } from '@mcp-fleet/store';
import Link from 'next/link';
import { SelectFilter } from '../../components/select-filter';
import { getDb } from '../../lib/db';
import { param, type SearchParams } from '../../lib/range';

export const metadata = { title: 'Conformance' };

const ERAS: readonly Era[] = ['legacy', 'modern'];
const LEVELS: readonly CheckLevel[] = ['MUST', 'SHOULD'];
const GLYPH = { pass: '✓', fail: '✗', skip: '–' } as const;

export default async function Conformance({ searchParams }: { searchParams: SearchParams }) {
  const params = await searchParams;
  const eraParam = param(params, 'era');
  const era = ERAS.find((e) => e === eraParam);
  const levelParam = param(params, 'level');
  const level = LEVELS.find((l) => l === levelParam);
  const matrix = await conformanceMatrixNow(await getDb(), { era, level });
  const failingMust = matrix.servers.filter((s) => s.failingMust > 0).length;

  return (
    <>
      <h1>Conformance</h1>
      <p className="sub">
        Each server's conformance checks as its tests judged them last, in the era it negotiates now: a cell is the
        check's worst state across the server's regions (fail, then pass, then skip). A failing MUST check breaks
        clients on that era; a failing SHOULD is a warning.
      </p>
      <form className="filters" method="get" action="/conformance" aria-label="Filter conformance">
        <SelectFilter
          label="Era"
          name="era"
          value={era ?? ''}
          none="every era"
          options={ERAS.map((e) => ({ value: e, label: e === 'modern' ? 'modern (2026-07-28)' : e }))}
        />
        <SelectFilter label="Level" name="level" value={level ?? ''} none="every level" options={LEVELS} />
        <button type="submit" className="primary">
          Apply
        </button>
        <Link href="/conformance">Clear</Link>
      </form>

      {matrix.servers.length === 0 ? (
        <div className="panel empty">
          {era || level
            ? 'No conformance result matches these filters.'
            : 'No conformance results yet. Give a server a conformance test (its editor, or depth: conformance in the fleet file).'}
        </div>
      ) : (
        <section className="panel" aria-label="Checks by server">
          <p className="sub" data-testid="conformance-count">
            {matrix.servers.length} {matrix.servers.length === 1 ? 'server' : 'servers'} · {failingMust} failing a MUST
            check
          </p>
          <Matrix matrix={matrix} />
          <p className="sub">
            <span className="ok">{GLYPH.pass}</span> pass · <span className="fail">{GLYPH.fail}</span> fail (MUST) ·{' '}
            <span className="warn">{GLYPH.fail}</span> fail (SHOULD, a warning) ·{' '}
            <span className="muted">{GLYPH.skip}</span> skip (could not run there) · blank: not judged. Hover a cell for
            its message.
          </p>
        </section>
      )}
    </>
  );
}

function Matrix({ matrix }: { matrix: ConformanceMatrix }) {
  return (
    <div className="table-wrap">
      <table className="check-matrix" data-testid="conformance-matrix">
        <thead>
          <tr>
            <th scope="col">Server</th>
            {matrix.checks.map((c) => (
              <th key={c.id} scope="col" title={`${c.level}${c.rule ? `: ${c.rule}` : ''}`} data-check={c.id}>
                <span className="vertical">
                  {c.id}
                  <span className="muted"> {c.level}</span>
                </span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {matrix.servers.map((s) => (
            <tr key={s.id}>
              <th scope="row" className="nowrap">
                <Link href={`/servers/${s.id}`}>{s.name}</Link>
                {s.failingMust > 0 ? (
                  <div className="fail">
                    {s.failingMust} MUST {s.failingMust === 1 ? 'fails' : 'fail'}
                  </div>
                ) : null}
              </th>
              {matrix.checks.map((c) => (
                <Cell key={c.id} check={c.id} level={c.level} cell={s.cells[c.id]} />
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Cell({ check, level, cell }: { check: string; level: string; cell: ConformanceMatrixCell | undefined }) {
  if (!cell) return <td className="cell" data-check={check} title={`${check}: not judged`} />;
  const where =
    cell.status === 'fail'
      ? `fails in ${cell.failingRegions} of ${cell.regions} ${cell.regions === 1 ? 'region' : 'regions'}`
      : `${cell.status} in ${cell.regions === 1 ? 'its region' : `${cell.regions} regions`}`;
  const tone = cell.status === 'fail' ? (level === 'MUST' ? 'fail' : 'warn') : cell.status === 'pass' ? 'ok' : 'muted';
  return (
    <td
      // The status rides in data-status: a `skip` class would be the skip link's (globals.css).
      className="cell"
      data-check={check}
      data-status={cell.status}
      title={`${check} (${level}): ${where} — ${cell.message}`}
    >
      <span className={tone}>{GLYPH[cell.status]}</span>
      {cell.status === 'fail' && cell.regions > 1 ? (
        <span className="muted count">
          {cell.failingRegions}/{cell.regions}
        </span>
      ) : null}
    </td>
  );
}
