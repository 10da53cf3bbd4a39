// Every server: current revision per region, era, its state (health, and per region the worst
// state across its tests with the test that caused it), last run, pinned tests' state.
// Search, filters and sorting travel in the URL (a plain GET form), so a view can be shared.
// Live servers by default; retired ones (history kept, read-only) under their own tab, counted apart.
// Beside each server, its multi-region verdicts (loaded for the page's servers only): an open region
// disagreement, uptime and reachability (24 h, 30 d with the SLO line), "upgrade available", and
// for a failing test its consensus ("failing in 2 of 3 regions").
import { OUTCOME_NAMES } from '@mcp-fleet/probe';
import { isServerHealth, SERVER_HEALTHS, SERVER_SORTS, type ServerSort, serversPage } from '@mcp-fleet/store';
import Link from 'next/link';
import {
  AvailabilityCell,
  consensusTestName,
  consensusText,
  DisagreementMark,
  UpgradeMark,
} from '../../../components/region-verdicts';
import { RevisionBadge } from '../../../components/revision-badge';
import { SelectFilter } from '../../../components/select-filter';
import { HEALTH_LABELS, HealthText, RegionStates } from '../../../components/server-state';
import { getDb } from '../../../lib/db';
import { ago } from '../../../lib/format';
import { param, type SearchParams } from '../../../lib/range';
import { regionsOfFleet } from '../../../lib/regions';
import { eraOf, REVISION_NAMES } from '../../../lib/revisions';

export const metadata = { title: 'Servers' };

const PAGE_SIZE = 50;

export default async function Servers({ searchParams }: { searchParams: SearchParams }) {
  const params = await searchParams;
  const db = await getDb();
  const search = param(params, 'q') ?? '';
  const revision = param(params, 'revision') ?? '';
  const eraParam = param(params, 'era');
  const era = eraParam === 'legacy' || eraParam === 'modern' ? eraParam : undefined;
  const region = param(params, 'region') ?? '';
  const outcome = param(params, 'outcome') ?? '';
  // From the URL (the browser's to write): only a known health filters.
  const healthParam = param(params, 'health');
  const health = isServerHealth(healthParam) ? healthParam : undefined;
  const sortParam = param(params, 'sort');
  const sort: ServerSort = SERVER_SORTS.includes(sortParam as ServerSort) ? (sortParam as ServerSort) : 'name';
  const descending = param(params, 'dir') === 'desc';
  const pageParam = Number(param(params, 'page') ?? '1');
  const retired = param(params, 'status') === 'retired';
  const now = new Date();

  const [page, regions] = await Promise.all([
    serversPage(db, {
      status: retired ? 'retired' : 'live',
      search,
      revision: revision || undefined,
      era,
      region: region || undefined,
      outcome: outcome || undefined,
      health,
      sort,
      descending,
      page: Number.isFinite(pageParam) ? pageParam : 1,
      pageSize: PAGE_SIZE,
      now,
    }),
    regionsOfFleet(db),
  ]);

  const link = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams();
    const all = {
      status: retired ? 'retired' : '',
      q: search,
      revision,
      era,
      region,
      outcome,
      health,
      sort,
      dir: descending ? 'desc' : '',
      ...changes,
    };
    for (const [k, v] of Object.entries(all)) if (v && !(k === 'sort' && v === 'name')) next.set(k, v);
    const qs = next.toString();
    return qs ? `/servers?${qs}` : '/servers';
  };
  const sortLink = (key: ServerSort) => link({ sort: key, dir: sort === key && !descending ? 'desc' : '', page: '' });
  const ariaSort = (key: ServerSort) => (sort === key ? (descending ? 'descending' : 'ascending') : undefined);
  const columns = regions.length ? regions : [...new Set(page.servers.flatMap((s) => s.byRegion.map((r) => r.region)))];

  return (
    <>
      <h1>Servers</h1>
      <nav className="tabs" aria-label="Live or retired servers" data-testid="server-tabs">
        <Link className="tab" href={link({ status: '', page: '' })} aria-current={retired ? undefined : 'page'}>
          Live ({page.counts.live})
        </Link>
        <Link className="tab" href={link({ status: 'retired', page: '' })} aria-current={retired ? 'page' : undefined}>
          Retired ({page.counts.retired})
        </Link>
      </nav>
      <form className="filters" method="get" action="/servers" aria-label="Filter servers">
        <label>
          Search
          <input type="search" name="q" defaultValue={search} placeholder="name or URL" />
        </label>
        <SelectFilter label="Revision" name="revision" value={revision} options={REVISION_NAMES} />
        <SelectFilter label="Era" name="era" value={era ?? ''} options={['legacy', 'modern']} />
        <SelectFilter label="Region" name="region" value={region} options={regions} />
        <SelectFilter
          label="State"
          name="health"
          value={health ?? ''}
          options={SERVER_HEALTHS.map((h) => ({ value: h, label: HEALTH_LABELS[h] }))}
        />
        <SelectFilter label="Outcome (any test)" name="outcome" value={outcome} options={OUTCOME_NAMES} />
        {retired && <input type="hidden" name="status" value="retired" />}
        {sort !== 'name' && <input type="hidden" name="sort" value={sort} />}
        {descending && <input type="hidden" name="dir" value="desc" />}
        <button type="submit" className="primary">
          Apply
        </button>
        <Link href="/servers">Clear</Link>
      </form>

      <p className="muted" data-testid="servers-count" aria-live="polite">
        {page.total} {retired ? 'retired ' : ''}
        {page.total === 1 ? 'server' : 'servers'}
        {page.pages > 1 ? ` · page ${page.page} of ${page.pages}` : ''}
      </p>

      {page.servers.length === 0 ? (
        <div className="panel empty">
          {page.total === 0 && retired && !search ? (
            'No retired servers: servers a fleet file no longer names, or deleted through the API, are kept here.'
          ) : page.total === 0 && !search && !revision && !era && !region && !outcome && !health ? (
            <>
              No servers yet. <Link href="/servers/new">Add a server</Link>.
            </>
          ) : (
            'No server matches these filters.'
          )}
        </div>
      ) : (
        <div className="panel table-wrap">
          <table data-testid="servers-table">
            <thead>
              <tr>
                <th scope="col" aria-sort={ariaSort('name')}>
                  <Link href={sortLink('name')}>Server</Link>
                </th>
                {columns.map((r) => (
                  <th key={r} scope="col">
                    {r}
                  </th>
                ))}
                <th scope="col">Era</th>
                <th scope="col">State</th>
                <th scope="col">Availability</th>
                <th scope="col" aria-sort={ariaSort('lastRun')}>
                  <Link href={sortLink('lastRun')}>Last run</Link>
                </th>
                <th scope="col" aria-sort={ariaSort('failing')}>
                  <Link href={sortLink('failing')}>Tests</Link>
                </th>
              </tr>
            </thead>
            <tbody>
              {page.servers.map((s) => {
                const latest = [...s.byRegion].sort(
                  (a, b) => (b.lastRunAt?.getTime() ?? 0) - (a.lastRunAt?.getTime() ?? 0),
                )[0];
                const eras = [...new Set(s.byRegion.map((r) => eraOf(r.currentRevision)).filter(Boolean))];
                const pinned = s.tests.filter((t) => t.mode === 'pinned');
                const pinnedFailing = pinned.filter((t) => t.states.some((st) => st.failing));
                const newestFailing = s.tests.some((t) => t.mode === 'newest' && t.states.some((st) => st.failing));
                const judged = page.judged[s.id];
                // A test failing somewhere (failAfter runs in a row): its consensus says whether that is the
                // server's trouble (a quorum of regions) or a region's.
                const failingConsensus = (judged?.consensus ?? []).filter((c) => c.regionsFailing > 0);
                return (
                  <tr key={s.id}>
                    <th scope="row">
                      <Link href={`/servers/${s.id}`}>{s.name}</Link>
                      {s.retiredAt && (
                        <span className="muted" style={{ fontWeight: 400 }} title={s.retiredAt.toISOString()}>
                          {' '}
                          · retired {ago(s.retiredAt)}
                        </span>
                      )}
                      <div className="muted" style={{ fontWeight: 400, fontSize: 12 }}>
                        {s.url}
                      </div>
                      {judged?.disagreements.map((d) => (
                        <div key={d.id} style={{ fontWeight: 400, fontSize: 12 }}>
                          <DisagreementMark d={d} now={now} />
                        </div>
                      ))}
                    </th>
                    {columns.map((r) => {
                      const st = s.byRegion.find((b) => b.region === r);
                      return (
                        <td key={r}>
                          {st ? <RevisionBadge revision={st.currentRevision} /> : <span className="muted">—</span>}
                        </td>
                      );
                    })}
                    <td>{eras.join(' / ') || <span className="muted">—</span>}</td>
                    <td data-testid="server-state">
                      <HealthText health={s.health} />
                      <RegionStates byRegion={s.byRegion} />
                    </td>
                    <td style={{ fontSize: 12 }}>
                      <AvailabilityCell availability={judged?.availability ?? null} />
                    </td>
                    <td title={latest?.lastRunAt?.toISOString()}>{ago(latest?.lastRunAt)}</td>
                    <td>
                      {newestFailing && <div className="fail">newest supported failing</div>}
                      {failingConsensus.map((c) => (
                        <div key={c.testId} className={c.failing ? 'fail' : 'warn'} data-testid="consensus">
                          {consensusTestName(c)}: {consensusText(c)}
                        </div>
                      ))}
                      {judged?.upgrades.map((u) => (
                        <UpgradeMark key={u.testId} upgrade={u} />
                      ))}
                      {pinned.length === 0 ? (
                        <span className="muted">no pinned tests</span>
                      ) : pinnedFailing.length ? (
                        <span className="fail">
                          pinned: {pinnedFailing.length} of {pinned.length} failing
                        </span>
                      ) : (
                        <span className="ok">pinned: {pinned.length} passing</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}

      {page.pages > 1 && (
        <nav className="pager" aria-label="Pages of servers">
          {page.page > 1 ? (
            <Link href={link({ page: String(page.page - 1) })}>← Previous</Link>
          ) : (
            <span className="muted">← Previous</span>
          )}
          <span>
            Page {page.page} of {page.pages}
          </span>
          {page.page < page.pages ? (
            <Link href={link({ page: String(page.page + 1) })}>Next →</Link>
          ) : (
            <span className="muted">Next →</span>
          )}
        </nav>
      )}
    </>
  );
}
