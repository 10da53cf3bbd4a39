import { causeOf, type HandshakeRun, handshake } from '@mcp-fleet/probe';
import { COMMON_OPTIONS, headers, parse, positiveInt, revision, revisionChoice } from '../args';
import { causeHint } from '../cause-hint';
import { runExit } from '../exit-status';
import { plural } from '../plural';
import { probeTarget, STDIO_OPTIONS, stdioRows } from '../stdio-target';
import { columns } from '../table';
import { UsageError } from '../usage';

const OPTIONS = {
  ...COMMON_OPTIONS,
  ...STDIO_OPTIONS,
  revision: { type: 'string' },
  current: { type: 'string' },
} as const;

export async function handshakeCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  const { target, shown } = probeTarget(values, positionals, 'handshake');
  const choice = revisionChoice(values.revision);
  const current = revision(values.current, '--current');
  if (current && choice !== 'newest')
    throw new UsageError('--current goes with --revision newest (a pinned run has no current revision)');
  const run = await handshake(target, {
    revision: choice,
    current,
    headers: headers(values.header),
    timeoutMs: positiveInt(values.timeout, '--timeout', 10_000, 600_000),
  });
  out(values.json ? JSON.stringify(run, null, 2) : formatRun(shown, run));
  return runExit(run);
}

export function formatRun(target: string, run: HandshakeRun): string {
  // A run whose reply shows a cause (a 401, a refused connection…) says so first, then what to do.
  const cause = causeOf(run.evidence);
  const rows = [
    ['Target', target],
    [
      'Protocol',
      run.mode === 'pinned'
        ? `${run.requested} (pinned)`
        : `Newest supported (currently ${run.negotiated ?? 'unknown'})`,
    ],
    ['Outcome', cause ? run.outcome : `${run.outcome}: ${run.message}`],
    ...(cause
      ? [
          ['Cause', run.message],
          ['', causeHint(cause, run.stdio !== undefined)],
        ]
      : []),
    ['Requested', run.requested ?? '-'],
    ['Negotiated', run.negotiated ?? '-'],
  ];
  if (run.generation) rows.push(['Generation', `${run.generation} (${run.era})`]);
  if (run.previousRevision) rows.push(['Previous', run.previousRevision]);
  if (run.serverInfo) rows.push(['Server', `${run.serverInfo.name} ${run.serverInfo.version}`]);
  // "mcp.initialize expected an MCP server" says nothing when a cause stopped the run before any answer.
  if (run.assertion && !(cause && run.assertion.name === 'mcp.initialize'))
    rows.push([
      'Assertion',
      `${run.assertion.name} expected ${run.assertion.expected}, actual ${run.assertion.actual}`,
    ]);
  if (run.lookup.performed)
    rows.push(['Lookup', `found ${run.lookup.found ?? 'nothing'} in ${plural(run.lookup.requests, 'request')}`]);
  rows.push(['Requests', `${plural(run.requests, 'request')} in ${run.millis} ms`]);
  rows.push(...stdioRows(run.stdio));
  return `${columns(rows)}\n`;
}
