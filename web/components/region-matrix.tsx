// Region × revision: how many servers each region sees on each revision. A cell whose share of its
// region differs from the fleet's share by more than STANDS_OUT is outlined: that region disagrees.
import { percent } from '../lib/format';
import { REVISION_NAMES } from '../lib/revisions';
import { RevisionBadge } from './revision-badge';

const STANDS_OUT = 0.1;

export function RegionMatrix({ cells }: { cells: { region: string; revision: string | null; servers: number }[] }) {
  const regions = [...new Set(cells.map((c) => c.region))].sort();
  if (regions.length === 0) return <p className="empty">No region has run a test yet.</p>;
  const at = (region: string, revision: string) =>
    cells.find((c) => c.region === region && c.revision === revision)?.servers ?? 0;
  const regionTotal = (region: string) =>
    cells.filter((c) => c.region === region && c.revision).reduce((n, c) => n + c.servers, 0);
  const all = regions.reduce((n, r) => n + regionTotal(r), 0);
  const fleetShare = (revision: string) => (all ? regions.reduce((n, r) => n + at(r, revision), 0) / all : 0);
  return (
    <div className="table-wrap">
      <table className="matrix" data-testid="region-matrix">
        <thead>
          <tr>
            <th scope="col">Region</th>
            {REVISION_NAMES.map((r) => (
              <th key={r} scope="col" className="num">
                <RevisionBadge revision={r} />
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {regions.map((region) => {
            const total = regionTotal(region);
            return (
              <tr key={region}>
                <th scope="row">{region}</th>
                {REVISION_NAMES.map((r) => {
                  const n = at(region, r);
                  const odd = total > 0 && Math.abs(n / total - fleetShare(r)) > STANDS_OUT;
                  return (
                    <td
                      key={r}
                      className={`num${odd ? ' stands-out' : ''}`}
                      title={odd ? `${region} differs from the fleet on ${r}` : undefined}
                    >
                      {n} <span className="muted">({percent(n, total)})</span>
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
