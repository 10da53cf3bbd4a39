// The on-call view: recent era moves and downgrades, newest first, each linking to its server and run.
import { decodeCursor, encodeCursor, eraMovesList } from '@mcp-fleet/store';
import Link from 'next/link';
import { RevisionBadge } from '../../components/revision-badge';
import { SelectFilter } from '../../components/select-filter';
import { getDb } from '../../lib/db';
import { ago, utc } from '../../lib/format';
import { param, pickRange, type SearchParams } from '../../lib/range';
import { regionsOfFleet } from '../../lib/regions';

export const metadata = { title: 'Era moves' };

const PAGE = 100;

export default async function EraMoves({ searchParams }: { searchParams: SearchParams }) {
  const params = await searchParams;
  const db = await getDb();
  const range = await pickRange(params);
  const region = param(params, 'region') ?? '';
  const kindParam = param(params, 'kind');
  const kind = kindParam === 'downgrade' || kindParam === 'era' ? kindParam : '';
  const before = decodeCursor(param(params, 'before'));
  const [list, regions] = await Promise.all([
    eraMovesList(db, {
      since: range.since,
      region: region || undefined,
      downgrade: kind === 'downgrade',
      eraChanged: kind === 'era',
      limit: PAGE,
      before,
    }),
    regionsOfFleet(db),
  ]);
  const filterQuery = new URLSearchParams();
  if (region) filterQuery.set('region', region);
  if (kind) filterQuery.set('kind', kind);

  return (
    <>
      <h1>Era moves</h1>
      <p className="sub">
        A move is a test negotiating a different revision than its previous run ("now X, was Y"); a downgrade is a move
        to an older revision. Last {range.name}, newest first.
      </p>
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
          ]}
        />
        <button type="submit" className="primary">
          Apply
        </button>
        <Link href="/era-moves">Clear</Link>
      </form>

      {list.moves.length === 0 ? (
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
                <th scope="col">Kind</th>
                <th scope="col">Run</th>
              </tr>
            </thead>
            <tbody>
              {list.moves.map((m) => (
                <tr key={m.id}>
                  <td title={utc(m.at)}>{ago(m.at)}</td>
                  <td>
                    <Link href={`/servers/${m.serverId}`}>{m.serverName}</Link>
                  </td>
                  <td>{m.region}</td>
                  <td>
                    now <RevisionBadge revision={m.toRevision} />, was <RevisionBadge revision={m.fromRevision} />
                  </td>
                  <td>
                    {m.downgrade ? <span className="fail">downgrade</span> : <span className="ok">upgrade</span>}
                    {m.eraChanged ? ' · era change' : ''}
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
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav className="pager" aria-label="Era move pages">
        {before && <Link href={`/era-moves?${filterQuery}`}>Newest</Link>}
        {list.next && (
          <Link
            href={`/era-moves?${new URLSearchParams([...filterQuery, ['before', encodeCursor(list.next.at, list.next.id)]])}`}
          >
            Older →
          </Link>
        )}
      </nav>
    </>
  );
}
