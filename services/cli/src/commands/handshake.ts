import { displayUrl, type HandshakeRun, handshake, isPassing } from '@mcp-fleet/probe';
import { COMMON_OPTIONS, headers, parse, positiveInt, revision, revisionChoice, targetUrl } from '../args';
import { columns } from '../table';
import { EXIT, UsageError } from '../usage';

const OPTIONS = { ...COMMON_OPTIONS, revision: { type: 'string' }, current: { type: 'string' } } as const;

export async function handshakeCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  const url = targetUrl(positionals, 'handshake');
  const choice = revisionChoice(values.revision);
  const current = revision(values.current, '--current');
  if (current && choice !== 'newest')
    throw new UsageError('--current goes with --revision newest (a pinned run has no current revision)');
  const run = await handshake(url, {
    revision: choice,
    current,
    headers: headers(values.header),
    timeoutMs: positiveInt(values.timeout, '--timeout', 10_000, 600_000),
  });
  out(values.json ? JSON.stringify(run, null, 2) : formatRun(displayUrl(url), run));
  return isPassing(run.outcome) ? EXIT.ok : EXIT.failed;
}

export function formatRun(target: string, run: HandshakeRun): string {
  const rows = [
    ['Target', target],
    [
      'Protocol',
      run.mode === 'pinned'
        ? `${run.requested} (pinned)`
        : `Newest supported (currently ${run.negotiated ?? 'unknown'})`,
    ],
    ['Outcome', `${run.outcome}: ${run.message}`],
    ['Requested', run.requested ?? '-'],
    ['Negotiated', run.negotiated ?? '-'],
  ];
  if (run.generation) rows.push(['Generation', `${run.generation} (${run.era})`]);
  if (run.previousRevision) rows.push(['Previous', run.previousRevision]);
  if (run.serverInfo) rows.push(['Server', `${run.serverInfo.name} ${run.serverInfo.version}`]);
  if (run.assertion)
    rows.push([
      'Assertion',
      `${run.assertion.name} expected ${run.assertion.expected}, actual ${run.assertion.actual}`,
    ]);
  if (run.lookup.performed)
    rows.push(['Lookup', `found ${run.lookup.found ?? 'nothing'} in ${run.lookup.requests} requests`]);
  rows.push(['Requests', `${run.requests} in ${run.millis} ms`]);
  return `${columns(rows)}\n`;
}
