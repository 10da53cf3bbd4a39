// Fleet overview: live servers by health first (each a link to that list), then headline figures
// (with the share passing every MUST conformance check, once some server has a conformance test),
// revision drift, downgrades, era moves and the region matrix. The breaking surface changes of the
// range are a figure linking to exactly those changes on the era-moves page. Era moves are counted
// and drawn as the confirmed view has them: confirmed moves, and a flap (A→B→A) once, never as a
// downgrade.
import {
  breakingChangeCount,
  conformanceShare,
  downgradesOverTime,
  eraMovesList,
  fleetSummary,
  moveText,
  revisionDrift,
  SERVER_HEALTHS,
  type ServerHealth,
} from '@mcp-fleet/store';
import Link from 'next/link';
import { ChartData } from '../../components/chart-data';
import { DowngradeChart } from '../../components/downgrade-chart';
import { DriftChart } from '../../components/drift-chart';
import { EraMoveTimeline } from '../../components/era-move-timeline';
import { RegionMatrix } from '../../components/region-matrix';
import { VERDICT_CHARS } from '../../components/region-verdicts';
import { RevisionBadge } from '../../components/revision-badge';
import { HEALTH_HINTS, HEALTH_LABELS } from '../../components/server-state';
import { getDb } from '../../lib/db';
import { ago, percent, utc } from '../../lib/format';
import { pickRange, type SearchParams } from '../../lib/range';
import { CURRENT_REVISION, eraOf, REVISION_NAMES, revisionColor, revisionInfo } from '../../lib/revisions';
import { cut } from '../../lib/surface';

export const metadata = { title: 'Overview' };

const TOP_PAIRS = 4;
/** The timeline draws at most this many moves, the newest. */
const TIMELINE_MOVES = 500;

export default async function Overview({ searchParams }: { searchParams: SearchParams }) {
  const range = await pickRange(await searchParams);
  const db = await getDb();
  const window = { since: range.since, until: range.until, buckets: range.buckets };
  const [summary, drift, downgrades, moves, conformance, breaking] = await Promise.all([
    fleetSummary(db, { since: range.since, until: range.until, countRuns: false, eras: false }),
    revisionDrift(db, window),
    downgradesOverTime(db, window),
    eraMovesList(db, { since: range.since, limit: TIMELINE_MOVES }),
    conformanceShare(db),
    breakingChangeCount(db, { since: range.since, until: range.until }),
  ]);

  const now = drift.points[drift.points.length - 1];
  const onCurrent = now?.servers[CURRENT_REVISION] ?? 0;
  const speaking = now?.speaking ?? 0;
  const driftPoints = drift.points.map((p) => ({ at: p.at.getTime(), ...p.servers }));
  const topPairs = downgrades.pairs.slice(0, TOP_PAIRS).map((p) => `${p.requested} → ${p.negotiated}`);
  const downgradePoints = downgrades.points.map((p) => {
    const row: { at: number } & Record<string, number> = { at: p.at.getTime() };
    for (const key of topPairs) row[key] = p.pairs[key] ?? 0;
    const other = p.total - topPairs.reduce((n, k) => n + (p.pairs[k] ?? 0), 0);
    if (downgrades.pairs.length > TOP_PAIRS) row.other = other;
    return row;
  });
  const timeline = moves.moves.map((m) => ({
    at: m.at.getTime(),
    level: REVISION_NAMES.indexOf(m.toRevision as (typeof REVISION_NAMES)[number]),
    serverId: m.serverId,
    serverName: m.serverName,
    // Stored text (an agent's region, a server's answer): bounded before it reaches the client.
    region: cut(m.region, VERDICT_CHARS),
    from: cut(m.fromRevision, VERDICT_CHARS),
    to: cut(m.toRevision, VERDICT_CHARS),
    // A flap went back where it was: not a downgrade.
    downgrade: m.downgrade && m.state === 'confirmed',
  }));

  if (summary.servers === 0)
    return (
      <>
        <h1>Fleet overview</h1>
        <div className="panel empty">
          <p>No servers yet.</p>
          <p>
            <Link className="button primary" href="/servers/new">
              Add a server
            </Link>{' '}
            or apply a fleet file (<code>mcp-fleet apply mcp-fleet.yaml</code>).
          </p>
        </div>
      </>
    );

  return (
    <>
      <h1>Fleet overview</h1>
      <section className="headline" aria-label="Servers by state">
        {SERVER_HEALTHS.filter((h) => h !== 'not_run' || summary.health.not_run > 0).map((h) => (
          <HealthFigure key={h} health={h} servers={summary.health[h]} />
        ))}
      </section>
      <section className="headline" aria-label="Headline figures">
        <Figure label="servers" value={summary.servers} testId="fig-servers" />
        <Figure
          label={`on ${CURRENT_REVISION} (current), of ${speaking} with a revision`}
          value={percent(onCurrent, speaking)}
          testId="fig-current"
        />
        <Figure
          label={summary.failingPinnedTests === 1 ? 'pinned test failing' : 'pinned tests failing'}
          value={summary.failingPinnedTests}
          bad={summary.failingPinnedTests > 0}
          testId="fig-failing-pins"
        />
        <Figure label={`downgrades in ${range.name}`} value={downgrades.total} testId="fig-downgrades" />
        <Figure label={`era moves in ${range.name}`} value={summary.eraMoves} testId="fig-era-moves" />
        <Figure
          label={`breaking surface ${breaking === 1 ? 'change' : 'changes'} in ${range.name}`}
          value={breaking}
          bad={breaking > 0}
          href={`/era-moves?${new URLSearchParams({ kind: 'surface', severity: 'breaking', range: range.name })}`}
          testId="fig-breaking-surface"
        />
        {conformance.servers > 0 && (
          <Figure
            label={
              conformance.judged === 0
                ? `conformance: ${conformance.servers} ${conformance.servers === 1 ? 'server' : 'servers'} not run yet`
                : `pass every MUST conformance check (${conformance.passing} of ${conformance.judged} ${conformance.judged === 1 ? 'server' : 'servers'} with results)`
            }
            value={percent(conformance.passing, conformance.judged)}
            bad={conformance.passing < conformance.judged}
            href="/conformance"
            testId="fig-conformance"
          />
        )}
      </section>

      <div className="grid">
        <section className="panel" aria-labelledby="drift-h">
          <h2 id="drift-h">Revision drift</h2>
          <p className="sub">
            Servers negotiating each revision (their newest-supported test), last {range.name}. A server split across
            regions counts under each revision it speaks.
          </p>
          <DriftChart
            points={driftPoints}
            series={REVISION_NAMES.map((r) => ({
              key: r,
              label: `${r} (${revisionInfo(r).generation})`,
              color: revisionColor(r),
              era: revisionInfo(r).era,
            }))}
          />
          <ChartData
            caption="Servers per revision at the end of each bucket"
            testId="drift-data"
            columns={['At', ...REVISION_NAMES]}
            rows={drift.points.map((p) => [utc(p.at), ...REVISION_NAMES.map((r) => p.servers[r])])}
          />
        </section>

        <section className="panel" aria-labelledby="downgrades-h">
          <h2 id="downgrades-h">Downgrades</h2>
          <p className="sub">
            Runs where the server answered an older revision than the one offered (requested → negotiated).
          </p>
          {downgrades.total === 0 ? (
            <p className="empty">No downgrades in the last {range.name}.</p>
          ) : (
            <>
              <DowngradeChart
                points={downgradePoints}
                pairs={downgrades.pairs.length > TOP_PAIRS ? [...topPairs, 'other'] : topPairs}
              />
              <table data-testid="downgrade-pairs">
                <thead>
                  <tr>
                    <th scope="col">Requested → negotiated</th>
                    <th scope="col" className="num">
                      Runs
                    </th>
                    <th scope="col" className="num">
                      Servers
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {downgrades.pairs.slice(0, 6).map((p) => (
                    <tr key={`${p.requested}-${p.negotiated}`}>
                      <td>
                        <RevisionBadge revision={p.requested} /> → <RevisionBadge revision={p.negotiated} />
                      </td>
                      <td className="num">{p.runs}</td>
                      <td className="num">{p.servers}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
        </section>
      </div>

      <div className="grid">
        <section className="panel" aria-labelledby="moves-h">
          <h2 id="moves-h">Era moves</h2>
          <p className="sub">
            {summary.eraMoves} {summary.eraMoves === 1 ? 'move' : 'moves'} in the last {range.name} (
            {summary.downgrades} to an older revision, {summary.eraChanges} across eras
            {summary.flaps ? `, ${summary.flaps} flapping` : ''})
            {summary.eraMoves > timeline.length ? `; the timeline shows the newest ${timeline.length}` : ''}
            {summary.pendingMoves
              ? `; ${summary.pendingMoves} more ${summary.pendingMoves === 1 ? 'waits' : 'wait'} for confirmation`
              : ''}
            . <Link href="/era-moves">All moves →</Link>
          </p>
          {timeline.length === 0 ? (
            <p className="empty">No era moves in the last {range.name}.</p>
          ) : (
            <>
              <EraMoveTimeline
                moves={timeline}
                revisions={[...REVISION_NAMES]}
                since={range.since.getTime()}
                until={range.until.getTime()}
              />
              <ul data-testid="latest-moves">
                {moves.moves.slice(0, 5).map((m) => (
                  <li key={m.id}>
                    <Link href={`/servers/${m.serverId}`}>{m.serverName}</Link> ({cut(m.region, VERDICT_CHARS)}):{' '}
                    {m.state === 'flapping' ? (
                      cut(moveText(m), VERDICT_CHARS)
                    ) : (
                      <>
                        now {cut(m.toRevision, VERDICT_CHARS)}, was {cut(m.fromRevision, VERDICT_CHARS)}
                        {eraOf(m.toRevision) !== eraOf(m.fromRevision) ? ' · era change' : ''}
                      </>
                    )}{' '}
                    <span className="muted">{ago(m.at)}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </section>

        <section className="panel" aria-labelledby="matrix-h">
          <h2 id="matrix-h">Regions × revisions</h2>
          <p className="sub">
            Servers per revision as each region sees them now; outlined cells disagree with the fleet.
          </p>
          <RegionMatrix cells={summary.byRevision} />
        </section>
      </div>
    </>
  );
}

function Figure({
  label,
  value,
  bad,
  href,
  testId,
}: {
  label: string;
  value: string | number;
  bad?: boolean;
  /** The page with the figure's detail: the card is a link to it. */
  href?: string;
  testId: string;
}) {
  const body = (
    <>
      <div className="value">{value}</div>
      <div className="label">{label}</div>
    </>
  );
  return href ? (
    <Link className={`figure${bad ? ' bad' : ''}`} href={href} data-testid={testId}>
      {body}
    </Link>
  ) : (
    <div className={`figure${bad ? ' bad' : ''}`} data-testid={testId}>
      {body}
    </div>
  );
}

/** A count of live servers in one health; the card is a link to exactly those servers. */
function HealthFigure({ health, servers }: { health: ServerHealth; servers: number }) {
  // Coloured only when there is something to look at.
  const tone = servers === 0 ? '' : health === 'failing' ? ' bad' : health === 'degraded' ? ' warn' : '';
  return (
    <Link className={`figure${tone}`} href={`/servers?health=${health}`} data-testid={`fig-health-${health}`}>
      <div className="value">{servers}</div>
      <div className="label">
        {servers === 1 ? 'server' : 'servers'} {HEALTH_LABELS[health]}
      </div>
      <div className="hint">{HEALTH_HINTS[health]}</div>
    </Link>
  );
}
