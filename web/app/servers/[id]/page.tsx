// The page on-call lands on: what the server speaks where, its latest detection, its tests, its
// latency by region, its last conformance result per era (conformance tests only), its surface
// (what it offers per era now, the change history and a change's diff) and its run history with
// "now X, was Y" rows for moves; and its Regions section (issue 17): each test's consensus, the open
// region disagreement and its history, uptime and reachability per window with the SLO line. A retired server's
// page stays (era moves and runs link to it), marked retired and read-only.
import {
  conformanceByEra,
  decodeCursor,
  disagreementParts,
  encodeCursor,
  getRun,
  getServer,
  latencyByRegion,
  latestDetection,
  listSurfaceChanges,
  regionDisagreementList,
  runsOfServer,
  serverAvailability,
  serverConformanceResults,
  serversOverview,
  serverUpgrades,
  spanText,
  surfaceBlob,
  surfaceChange,
  surfaceNow,
  testAvailability,
  testConsensus,
  UPTIME_WINDOWS,
  type UptimeWindow,
} from '@mcp-fleet/store';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { Fragment } from 'react';
import { ConformanceResults } from '../../../components/conformance-table';
import { DetectionCause, type DetectionEntry, DetectionTable } from '../../../components/detection-table';
import { LatencyChart } from '../../../components/latency-chart';
import {
  consensusTestName,
  consensusText,
  DisagreementMark,
  pct,
  quorumText,
  SloLine,
  UpgradeMark,
  VERDICT_CHARS,
} from '../../../components/region-verdicts';
import { OutcomeText, RevisionBadge } from '../../../components/revision-badge';
import { HEALTH_HINTS, HealthText, testName } from '../../../components/server-state';
import { SurfaceChangeTable } from '../../../components/surface-changes';
import { SurfaceDiff } from '../../../components/surface-diff';
import { SurfaceNowView } from '../../../components/surface-view';
import { getDb } from '../../../lib/db';
import { ago, utc } from '../../../lib/format';
import { param, pickRange, type SearchParams } from '../../../lib/range';
import { eraOf } from '../../../lib/revisions';
import { shared } from '../../../lib/shared';
import { cut } from '../../../lib/surface';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HISTORY_PAGE = 30;
const CHANGES_PAGE = 30;
/** Disagreements the history shows (the newest). */
const DISAGREEMENTS_SHOWN = 20;
const WINDOWS = Object.keys(UPTIME_WINDOWS) as UptimeWindow[];
const WINDOW_LABELS: Record<UptimeWindow, string> = { '24h': '24 h', '7d': '7 d', '30d': '30 d' };

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (!UUID.test(id)) return { title: 'Server' };
  const server = await getServer(await getDb(), id);
  return { title: server?.name ?? 'Server' };
}

export default async function ServerPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: SearchParams;
}) {
  const { id } = await params;
  const query = await searchParams;
  if (!UUID.test(id)) notFound();
  const db = await getDb();
  const range = await pickRange(query);

  // A run to show (from the era-moves page), or a cursor from "Older runs".
  const runParam = Number(param(query, 'run'));
  const focus = Number.isSafeInteger(runParam) ? await getRun(db, runParam) : null;
  const beforeParam = param(query, 'before');
  const cursor = decodeCursor(beforeParam);
  const before =
    focus?.serverId === id
      ? { finishedAt: focus.finishedAt, id: focus.id + 1 }
      : cursor && { finishedAt: cursor.at, id: cursor.id };

  // The surface change history's own cursor (an odd one is the first page), and a change to diff.
  const changesCursor = param(query, 'changes_before');
  const changesBefore = decodeCursor(changesCursor) ? changesCursor : undefined;
  const changeParam = Number(param(query, 'change'));

  const now = new Date();
  const [
    server,
    overview,
    detection,
    latency,
    history,
    conformance,
    surfaces,
    changes,
    focusChange,
    consensus,
    disagreements,
    availability,
    perTest,
    upgrades,
  ] = await Promise.all([
    getServer(db, id),
    serversOverview(db, { ids: [id] }),
    latestDetection(db, id),
    latencyByRegion(db, id, { since: range.since, until: range.until, buckets: range.buckets }),
    runsOfServer(db, id, { limit: HISTORY_PAGE, before }),
    serverConformanceResults(db, id),
    surfaceNow(db, id),
    listSurfaceChanges(db, { serverId: id, limit: CHANGES_PAGE, cursor: changesBefore }),
    surfaceChange(db, changeParam),
    testConsensus(db, { serverId: id }),
    regionDisagreementList(db, { serverId: id, open: false, limit: DISAGREEMENTS_SHOWN }),
    serverAvailability(db, { serverIds: [id], now }),
    testAvailability(db, id, now),
    serverUpgrades(db, id),
  ]);
  const diffOf = focusChange?.serverId === id ? focusChange : null;
  const [diffBefore, diffAfter] = diffOf
    ? await Promise.all([surfaceBlob(db, diffOf.fromHash), surfaceBlob(db, diffOf.toHash)])
    : [null, null];
  // A retired server stays viewable (era moves and runs link here), read-only: nothing to edit.
  if (!server) notFound();
  const retired = server.retiredAt;
  const conformanceTests = new Set(conformance.tests.map((t) => t.id));
  const summary = overview[0];
  const regions = [...new Set(latency.points.map((p) => p.region))].sort();
  const latencyRows = new Map<number, { at: number } & Record<string, number>>();
  for (const p of latency.points) {
    const at = p.at.getTime();
    const row = latencyRows.get(at) ?? { at };
    row[`${p.region} p50`] = p.p50;
    row[`${p.region} p95`] = p.p95;
    latencyRows.set(at, row);
  }
  const traceUrl = shared().traceUrl;
  const openDisagreements = disagreements.filter((d) => d.endedAt === null);
  const serverUp = availability.get(id) ?? null;
  const upgradeOf = new Map(upgrades.map((u) => [u.testId, u]));
  const testLabel = (t: { mode: string; pinnedRevision: string | null; depth: string }) =>
    `${t.mode === 'pinned' ? `pinned ${t.pinnedRevision}` : 'newest supported'}${t.depth === 'handshake' ? '' : ` (${t.depth})`}`;
  const result = detection?.result as
    | { revisions?: DetectionEntry[]; outcome?: string; newestSupported?: string; cause?: unknown }
    | undefined;

  return (
    <>
      <p className="muted" style={{ margin: '0 0 4px' }}>
        <Link href="/servers">Servers</Link> /
      </p>
      <h1>
        {server.name}
        {retired && (
          <>
            {' '}
            <span className="tag retired">retired</span>
          </>
        )}
      </h1>
      {retired && (
        <p className="notice retired" data-testid="retired-notice">
          Retired {utc(retired)} ({ago(retired)}): no longer probed. Its history is kept and shown here, read-only.
        </p>
      )}
      <p className="sub" style={{ marginTop: -10 }}>
        <span className="evidence">{server.url}</span> · every {Math.round(server.intervalMs / 1000)} s · timeout{' '}
        {Math.round(server.timeoutMs / 1000)} s · regions {server.regions?.join(', ') ?? 'all'}
        {!retired && (
          <>
            {' · '}
            <Link href={`/servers/${id}/edit`}>Edit</Link>
          </>
        )}
      </p>

      <div className="grid">
        <section className="panel" aria-labelledby="now-h">
          <h2 id="now-h">{retired ? 'Last known' : 'Now'}</h2>
          {!summary || summary.byRegion.length === 0 ? (
            <p className="empty">{retired ? 'Never run.' : 'Not run yet: the first runs are scheduled.'}</p>
          ) : (
            <>
              <p className="sub" data-testid="server-health">
                <HealthText health={summary.health} />: {HEALTH_HINTS[summary.health]}. Each region shows the worst
                state across its tests.
              </p>
              <table data-testid="regions-now">
                <thead>
                  <tr>
                    <th scope="col">Region</th>
                    <th scope="col">Revision</th>
                    <th scope="col">Era</th>
                    <th scope="col">State</th>
                    <th scope="col">Test</th>
                    <th scope="col">Last run</th>
                  </tr>
                </thead>
                <tbody>
                  {summary.byRegion.map((r) => (
                    <tr key={r.region}>
                      <th scope="row">{r.region}</th>
                      <td>
                        <RevisionBadge revision={r.currentRevision} />
                      </td>
                      <td>{eraOf(r.currentRevision) ?? '—'}</td>
                      <td>
                        <OutcomeText outcome={r.state?.outcome} />
                        {r.state?.failing ? (
                          <div className="fail">{assertionMessage(r.state.assertion) ?? r.state.message}</div>
                        ) : null}
                      </td>
                      <td>{r.state ? testName(r.state.test) : '—'}</td>
                      <td title={r.lastRunAt?.toISOString()}>{ago(r.lastRunAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
        </section>

        <section className="panel" aria-labelledby="tests-h">
          <h2 id="tests-h">Tests</h2>
          {!summary || summary.tests.length === 0 ? (
            <p className="empty">
              No tests.
              {!retired && (
                <>
                  {' '}
                  <Link href={`/servers/${id}/edit`}>Add one</Link>.
                </>
              )}
            </p>
          ) : (
            <ul data-testid="tests" style={{ paddingLeft: 18, margin: 0 }}>
              {summary.tests.map((t) => {
                const current = t.states.find((s) => s.currentRevision)?.currentRevision;
                // "not run yet" only before the first run (docs/protocol.md#newest-supported-and-pinned);
                // after runs that found none, say so.
                const none = t.states.some((s) => s.lastRunAt) ? 'no revision found yet' : 'not run yet';
                return (
                  <li key={t.id} style={{ marginBottom: 8 }}>
                    <strong>
                      {t.mode === 'pinned'
                        ? `Protocol: ${t.pinnedRevision} (pinned)`
                        : `Protocol: Newest supported (${current ? `currently ${current}` : none})`}
                    </strong>
                    {conformanceTests.has(t.id) ? <span className="muted"> · conformance checks</span> : null}
                    {upgradeOf.has(t.id) && (
                      <UpgradeMark upgrade={upgradeOf.get(t.id)!} regionsTotal={t.states.length} />
                    )}
                    <ul style={{ paddingLeft: 18 }}>
                      {t.states.map((s) => (
                        <li key={s.region}>
                          {s.region}: <OutcomeText outcome={s.lastOutcome} />
                          {s.failing ? <span className="fail"> · failing</span> : null}
                          {assertionMessage(s.lastAssertion) ? (
                            <div className="fail">{assertionMessage(s.lastAssertion)}</div>
                          ) : s.failing && s.lastMessage ? (
                            <div className="muted">{s.lastMessage}</div>
                          ) : null}
                        </li>
                      ))}
                    </ul>
                  </li>
                );
              })}
            </ul>
          )}
        </section>
      </div>

      {summary && summary.tests.length > 0 && (
        <section className="panel" aria-labelledby="regions-h" data-testid="regions">
          <h2 id="regions-h">Regions</h2>
          <p className="sub">
            A test fails for the server when a quorum of its regions fail it, each region after failAfter failed runs in
            a row; fewer failing regions are that region's trouble. Uptime: the share of intervals in which some
            region's run passed; reachability: the share of runs that passed.
          </p>
          {openDisagreements.map((d) => (
            <div key={d.id} className="notice" data-testid="disagreement-open">
              <DisagreementMark d={d} now={now} />
              <span className="muted">started {utc(d.startedAt)}</span>
            </div>
          ))}
          <h3>Consensus</h3>
          <table data-testid="consensus-table">
            <thead>
              <tr>
                <th scope="col">Test</th>
                <th scope="col">Regions failing</th>
                <th scope="col">Quorum</th>
                <th scope="col">failAfter</th>
                <th scope="col">Failing regions</th>
                <th scope="col">Verdict</th>
              </tr>
            </thead>
            <tbody>
              {consensus.map((c) => (
                <tr key={c.testId}>
                  <th scope="row">
                    {consensusTestName(c)}
                    {upgradeOf.has(c.testId) && <UpgradeMark upgrade={upgradeOf.get(c.testId)!} />}
                  </th>
                  <td>
                    {c.regionsFailing} / {c.regionsTotal}
                  </td>
                  <td>{quorumText(c.judgement.quorum, c.needed)}</td>
                  <td>
                    {c.judgement.failAfter} {c.judgement.failAfter === 1 ? 'run' : 'runs'}
                  </td>
                  <td>{cut(c.failingRegions.join(', '), VERDICT_CHARS) || <span className="muted">none</span>}</td>
                  <td className={c.failing ? 'fail' : c.regionsFailing > 0 ? 'warn' : 'ok'}>
                    {c.regionsTotal === 0 ? 'not run yet' : c.regionsFailing > 0 ? consensusText(c) : 'passing'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>

          <h3>Availability</h3>
          {serverUp && (
            <p className="sub" data-testid="slo-line">
              <SloLine slo={serverUp.slo} />
            </p>
          )}
          <div className="table-wrap">
            <table data-testid="availability-table">
              <thead>
                <tr>
                  <th scope="col" rowSpan={2}>
                    Of
                  </th>
                  {WINDOWS.map((w) => (
                    <th key={w} scope="colgroup" colSpan={3}>
                      {WINDOW_LABELS[w]}
                    </th>
                  ))}
                </tr>
                <tr>
                  {WINDOWS.map((w) => (
                    <Fragment key={w}>
                      <th scope="col">Uptime</th>
                      <th scope="col">Reachability</th>
                      <th scope="col" className="num">
                        Runs
                      </th>
                    </Fragment>
                  ))}
                </tr>
              </thead>
              <tbody>
                {[
                  { key: 'server', label: 'the server', windows: serverUp?.windows },
                  ...summary.tests.map((t) => ({ key: t.id, label: testLabel(t), windows: perTest.get(t.id) })),
                ].map((row) => (
                  <tr key={row.key} data-testid={row.key === 'server' ? 'availability-server' : 'availability-test'}>
                    <th scope="row">{row.label}</th>
                    {WINDOWS.map((w) => {
                      const a = row.windows?.[w];
                      return (
                        <Fragment key={w}>
                          <td>{a ? pct(a.uptime) : '—'}</td>
                          <td>{a ? pct(a.reachability) : '—'}</td>
                          <td className="num">{a?.executions ?? 0}</td>
                        </Fragment>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>

          <h3>Region disagreements</h3>
          {disagreements.length === 0 ? (
            <p className="empty">Its regions have always agreed on the revision.</p>
          ) : (
            <table data-testid="disagreement-history">
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Ended</th>
                  <th scope="col">Lasted</th>
                  <th scope="col">Revisions</th>
                </tr>
              </thead>
              <tbody>
                {disagreements.map((d) => (
                  <tr key={d.id}>
                    <td className="nowrap">{utc(d.startedAt)}</td>
                    <td className="nowrap">{d.endedAt ? utc(d.endedAt) : <span className="warn">ongoing</span>}</td>
                    <td className="nowrap">{spanText((d.endedAt ?? now).getTime() - d.startedAt.getTime())}</td>
                    <td>
                      {cut(
                        disagreementParts(d.revisions)
                          .map((p) => `${p.region} ${p.revision}`)
                          .join(', '),
                        VERDICT_CHARS,
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}

      {conformance.tests.length > 0 && (
        <section className="panel" aria-labelledby="conformance-h" data-testid="conformance">
          <h2 id="conformance-h">Conformance</h2>
          {conformance.results.length === 0 ? (
            <p className="empty">
              {retired ? 'Its conformance test never ran.' : 'Not run yet: the first conformance run is scheduled.'}
            </p>
          ) : (
            <>
              <p className="sub">
                The last result in each era the server negotiated, across its regions (a check shows its worst state and
                where it fails). A failing MUST check breaks clients on that era; a failing SHOULD is a warning.
              </p>
              <ConformanceResults eras={conformanceByEra(conformance.results)} />
            </>
          )}
        </section>
      )}

      {(surfaces.length > 0 || changes.changes.length > 0 || changesBefore) && (
        <section className="panel" aria-labelledby="surface-h" data-testid="surface">
          <h2 id="surface-h">Surface</h2>
          <p className="sub">
            What the server offers in each era as its last runs read it (tools, resources, templates, prompts,
            capabilities), and every change between snapshots: breaking (something removed, a parameter now required, a
            type narrowed), warning (a description or annotation changed) or info (something added).
          </p>
          {diffOf && <SurfaceDiff change={diffOf} before={diffBefore} after={diffAfter} />}
          {surfaces.length === 0 ? <p className="empty">No snapshot kept now.</p> : <SurfaceNowView heads={surfaces} />}
          <h3 id="surface-changes-h">Changes</h3>
          {changes.changes.length === 0 ? (
            <p className="empty">No changes recorded.</p>
          ) : (
            <SurfaceChangeTable changes={changes.changes} focus={diffOf?.id} />
          )}
          <nav className="pager" aria-label="Surface change pages">
            {changesBefore && <Link href={`/servers/${id}#surface-changes-h`}>Newest changes</Link>}
            {changes.next && (
              <Link href={`/servers/${id}?changes_before=${changes.next}#surface-changes-h`}>Older changes →</Link>
            )}
          </nav>
        </section>
      )}

      <div className="grid">
        <section className="panel" aria-labelledby="detection-h">
          <h2 id="detection-h">Latest detection</h2>
          {!detection || !result?.revisions ? (
            <p className="empty">
              {retired ? (
                'No detection.'
              ) : (
                <>
                  No detection yet. Detections run on the server's detection interval, or from the{' '}
                  <Link href={`/servers/${id}/edit`}>editor</Link>.
                </>
              )}
            </p>
          ) : (
            <>
              <DetectionCause cause={result.cause} revisions={result.revisions} />
              <p className="sub">
                {result.outcome === 'DETECTED'
                  ? `Newest supported: ${result.newestSupported}`
                  : result.outcome === 'NONE'
                    ? result.cause
                      ? 'No revision detected.'
                      : 'This URL did not identify itself as an MCP server on any revision.'
                    : 'The server rate-limited the detection (HTTP 429).'}{' '}
                · {utc(detection.at)}
                {detection.region ? ` from ${detection.region}` : ''}
              </p>
              <DetectionTable revisions={result.revisions} />
            </>
          )}
        </section>

        <section className="panel" aria-labelledby="latency-h">
          <h2 id="latency-h">Handshake latency by region</h2>
          <p className="sub">p50 (solid) and p95 (dashed), last {range.name}.</p>
          {regions.length === 0 ? (
            <p className="empty">No runs in the last {range.name}.</p>
          ) : (
            <LatencyChart
              points={[...latencyRows.values()]}
              regions={regions}
              since={range.since.getTime()}
              until={range.until.getTime()}
            />
          )}
        </section>
      </div>

      <section className="panel" aria-labelledby="history-h">
        <h2 id="history-h">Run history</h2>
        {history.runs.length === 0 ? (
          <p className="empty">No runs yet.</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="run-history">
              <thead>
                <tr>
                  <th scope="col">Finished</th>
                  <th scope="col">Region</th>
                  <th scope="col">Test</th>
                  <th scope="col">Requested</th>
                  <th scope="col">Negotiated</th>
                  <th scope="col">Outcome</th>
                  <th scope="col" className="num">
                    ms
                  </th>
                  <th scope="col">Message</th>
                </tr>
              </thead>
              <tbody>
                {history.runs.map((r) => {
                  const moved = r.previousRevision && r.negotiated && r.previousRevision !== r.negotiated;
                  const cls = [moved ? 'move' : '', focus?.id === r.id ? 'highlight' : ''].join(' ').trim();
                  const text = withoutMove(assertionMessage(r.assertion) ?? r.message, moved ? r.negotiated : null);
                  return (
                    <tr key={r.id} id={`run-${r.id}`} className={cls || undefined}>
                      <td className="nowrap" title={r.finishedAt.toISOString()}>
                        {utc(r.finishedAt)}
                      </td>
                      <td className="nowrap">{r.region}</td>
                      <td>{r.mode === 'pinned' ? 'Pinned' : 'Newest supported'}</td>
                      <td className="nowrap">{r.requested ?? '—'}</td>
                      <td>
                        <RevisionBadge revision={r.negotiated} />
                      </td>
                      <td>
                        <OutcomeText outcome={r.outcome} />
                      </td>
                      <td className="num">{r.millis}</td>
                      <td>
                        {moved ? (
                          <strong>
                            now {r.negotiated}, was {r.previousRevision}
                          </strong>
                        ) : null}
                        {moved && text ? ' · ' : ''}
                        {text}
                        {traceUrl && r.traceId ? (
                          <>
                            {' '}
                            · <a href={traceUrl.replace('{traceId}', r.traceId)}>trace</a>
                          </>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        <nav className="pager" aria-label="Run history pages">
          {before && <Link href={`/servers/${id}`}>Newest runs</Link>}
          {history.next && (
            <Link href={`/servers/${id}?before=${encodeCursor(history.next.finishedAt, history.next.id)}`}>
              Older runs →
            </Link>
          )}
        </nav>
      </section>
    </>
  );
}

/** The probe's message of a move starts with "now X, was Y", which the row already shows in bold. */
function withoutMove(message: string, negotiated: string | null): string {
  if (!negotiated) return message;
  const rest = message.replace(/^now \S+, was \S+(; )?/, '');
  return rest ? rest.charAt(0).toUpperCase() + rest.slice(1) : '';
}

function assertionMessage(a: unknown): string | undefined {
  const m = (a as { message?: unknown } | null)?.message;
  return typeof m === 'string' ? m : undefined;
}
