// The on-call view: recent era moves and downgrades, newest first, each linking to its server and run;
// and, as a kind of its own, surface changes (what servers offer, classified breaking, warning,
// info), each linking to its diff on the server page. Two views: confirmed (the default: confirmed
// moves, and each flap once, "flapping: A→B→A") and raw (every move recorded, pending and
// superseded ones too), each move with its state badge.
import { SURFACE_KINDS, SURFACE_SEVERITIES } from '@mcp-fleet/probe';
import {
  decodeCursor,
  type EraMoveView,
  encodeCursor,
  eraMovesList,
  isEraMoveView,
  listSurfaceChanges,
} from '@mcp-fleet/store';
import Link from 'next/link';
import { MoveStateBadge, moveLabel, StoredRevision, VERDICT_CHARS, WRAP } from '../../components/region-verdicts';
import { SelectFilter } from '../../components/select-filter';
import { SurfaceChangeTable } from '../../components/surface-changes';
import { getDb } from '../../lib/db';
import { ago, utc } from '../../lib/format';
import { param, pickRange, type SearchParams } from '../../lib/range';
import { regionsOfFleet } from '../../lib/regions';
import { cut } from '../../lib/surface';

export const metadata = { title: 'Era moves' };

const PAGE = 100;

export default async function EraMoves({ searchParams }: { searchParams: SearchParams }) {
  const params = await searchParams;
  const db = await getDb();
  const range = await pickRange(params);
  const region = param(params, 'region') ?? '';
  const kindParam = param(params, 'kind');
  const kind = kindParam === 'downgrade' || kindParam === 'era' || kindParam === 'surface' ? kindParam : '';
  // A surface change's severity and item kind: filters of the surface kind only; a value outside the lists is no filter.
  const severity = SURFACE_SEVERITIES.find((s) => kind === 'surface' && s === param(params, 'severity'));
  const item = SURFACE_KINDS.find((k) => kind === 'surface' && k === param(params, 'item'));
  const beforeParam = param(params, 'before');
  const before = decodeCursor(beforeParam);
  const surface = kind === 'surface';
  // From the URL (the browser's to write): only a known view, else the confirmed one.
  const viewParam = param(params, 'view');
  const view: EraMoveView = isEraMoveView(viewParam) ? viewParam : 'confirmed';
  const [list, changes, regions] = await Promise.all([
    surface
      ? { moves: [], next: null }
      : eraMovesList(db, {
          since: range.since,
          region: region || undefined,
          downgrade: kind === 'downgrade',
          eraChanged: kind === 'era',
          view,
          limit: PAGE,
          before,
        }),
    surface
      ? listSurfaceChanges(db, {
          since: range.since,
          until: range.until,
          region: region || undefined,
          severity,
          kind: item,
          limit: PAGE,
          cursor: before ? beforeParam : undefined,
        })
      : { changes: [], next: null },
    regionsOfFleet(db),
  ]);
  const filterQuery = new URLSearchParams();
  if (region) filterQuery.set('region', region);
  if (kind) filterQuery.set('kind', kind);
  if (severity) filterQuery.set('severity', severity);
  if (item) filterQuery.set('item', item);
  if (view === 'raw' && !surface) filterQuery.set('view', 'raw');
  const viewLink = (v: EraMoveView) => {
    const q = new URLSearchParams([...filterQuery].filter(([k]) => k !== 'view'));
    if (v === 'raw') q.set('view', 'raw');
    const qs = q.toString();
    return qs ? `/era-moves?${qs}` : '/era-moves';
  };
  const olderCursor = surface ? changes.next : list.next && encodeCursor(list.next.at, list.next.id);

  return (
    <>
      <h1>Era moves</h1>
      <p className="sub">
        A move is a test negotiating a different revision than its previous run ("now X, was Y"); a downgrade is a move
        to an older revision. A move counts once confirmed (seen in enough runs of its region, or by a quorum of
        regions); one that went back inside the flap window is one flap (A→B→A), not two moves and a downgrade. A
        surface change is a change in what a server offers (breaking, warning or info). Last {range.name}, newest first.
      </p>
      {!surface && (
        <nav className="tabs" aria-label="Confirmed or raw moves" data-testid="move-view">
          <Link className="tab" href={viewLink('confirmed')} aria-current={view === 'confirmed' ? 'page' : undefined}>
            Confirmed
          </Link>
          <Link className="tab" href={viewLink('raw')} aria-current={view === 'raw' ? 'page' : undefined}>
            Raw (every move recorded)
          </Link>
        </nav>
      )}
      <form className="filters" method="get" action="/era-moves" aria-label="Filter era moves">
        <SelectFilter label="Region" name="region" value={region} options={regions} />
        <SelectFilter
          label="Kind"
          name="kind"
          value={kind}
          none="every move"
          options={[
            { value: 'downgrade', label: 'downgrades only' },
            { value: 'era', label: 'era changes only (legacy ↔ modern)' },
            { value: 'surface', label: 'surface changes' },
          ]}
        />
        {view === 'raw' && !surface && <input type="hidden" name="view" value="raw" />}
        {surface && (
          <>
            <SelectFilter label="Severity" name="severity" value={severity ?? ''} options={SURFACE_SEVERITIES} />
            <SelectFilter
              label="Item"
              name="item"
              value={item ?? ''}
              options={SURFACE_KINDS.map((k) => ({ value: k, label: k.replace('_', ' ') }))}
            />
          </>
        )}
        <button type="submit" className="primary">
          Apply
        </button>
        <Link href="/era-moves">Clear</Link>
      </form>

      {surface ? (
        changes.changes.length === 0 ? (
          <div className="panel empty">No surface changes match, in the last {range.name}.</div>
        ) : (
          <div className="panel">
            <SurfaceChangeTable changes={changes.changes} showServer />
          </div>
        )
      ) : list.moves.length === 0 ? (
        <div className="panel empty">No era moves match, in the last {range.name}.</div>
      ) : (
        <div className="panel table-wrap">
          <table data-testid="era-moves">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Server</th>
                <th scope="col">Region</th>
                <th scope="col">Move</th>
                <th scope="col">State</th>
                <th scope="col">Kind</th>
                <th scope="col">Run</th>
              </tr>
            </thead>
            <tbody>
              {list.moves.map((m) => {
                const flap = m.state === 'flapping' && m.flapOf !== null;
                return (
                  <tr key={m.id} data-state={m.state}>
                    <td title={utc(m.at)}>{ago(m.at)}</td>
                    <td>
                      <Link href={`/servers/${m.serverId}`}>{cut(m.serverName, VERDICT_CHARS)}</Link>
                    </td>
                    <td style={WRAP}>{cut(m.region, VERDICT_CHARS)}</td>
                    <td data-testid="move">
                      {flap ? (
                        <span
                          className="warn"
                          title={m.flapStartedAt ? `went at ${utc(m.flapStartedAt)}, back at ${utc(m.at)}` : undefined}
                        >
                          {moveLabel(m)}
                        </span>
                      ) : (
                        <>
                          now <StoredRevision revision={m.toRevision} />, was{' '}
                          <StoredRevision revision={m.fromRevision} />
                        </>
                      )}
                    </td>
                    <td>
                      <MoveStateBadge move={m} />
                    </td>
                    <td>
                      {flap ? (
                        <span className="warn">flap</span>
                      ) : m.downgrade ? (
                        <span className="fail">downgrade</span>
                      ) : (
                        <span className="ok">upgrade</span>
                      )}
                      {!flap && m.eraChanged ? ' · era change' : ''}
                    </td>
                    <td>
                      {/* Retention prunes raw runs; the move stays, without its run. */}
                      {m.runId === null ? (
                        <span className="muted" title="the run was pruned by retention; the move is kept">
                          pruned
                        </span>
                      ) : (
                        <Link href={`/servers/${m.serverId}?run=${m.runId}#run-${m.runId}`}>run {m.runId}</Link>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <nav className="pager" aria-label="Era move pages">
        {before && <Link href={`/era-moves?${filterQuery}`}>Newest</Link>}
        {olderCursor && (
          <Link href={`/era-moves?${new URLSearchParams([...filterQuery, ['before', olderCursor]])}`}>Older →</Link>
        )}
      </nav>
    </>
  );
}
