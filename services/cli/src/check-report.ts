// A conformance run as `mcp-fleet check` prints it: the terminal's header and table (failures
// first), and the `--json` object of issue 15's contract (probe's checkJson). Pure: the command and
// the tests call them with a run, real or hand-built.
import {
  CAUSES,
  type CheckResult,
  type ConformanceRun,
  causeOf,
  causeSentence,
  type Evidence,
  isPassing,
  tally,
} from '@mcp-fleet/probe';
import { causeHint } from './cause-hint';
import { plural } from './plural';
import { columns } from './table';

/** The connection opened, so the checks ran (a run that did not open has none). */
export function connected(run: Pick<ConformanceRun, 'outcome'>): boolean {
  return isPassing(run.outcome);
}

/** MUST failures, then SHOULD failures (warnings), then passes, then skips; table order within each. */
const RANK = (c: Pick<CheckResult, 'status' | 'level'>): number =>
  c.status === 'fail' ? (c.level === 'MUST' ? 0 : 1) : c.status === 'pass' ? 2 : 3;

export function failuresFirst<C extends Pick<CheckResult, 'status' | 'level'>>(checks: readonly C[]): C[] {
  // Array.prototype.sort is stable: checks keep the table's order within their rank.
  return [...checks].sort((a, b) => RANK(a) - RANK(b));
}

/** The word in the Result column: loud for what needs attention. */
export function resultWord(c: Pick<CheckResult, 'status' | 'level'>): string {
  if (c.status === 'fail') return c.level === 'MUST' ? 'FAIL' : 'WARN';
  return c.status;
}

/**
 * Trust boundary: messages and evidence quote the server (an error message, a body), so a hostile
 * one could put a newline into a table row or an ANSI escape, a bidi override or a C1 control into
 * the operator's terminal. Line breaks and tabs become spaces, the rest U+FFFD.
 */
export function terminalText(text: string): string {
  return (
    text
      .replace(/[ ]*[\t\n\r][\t\n\r ]*/g, ' ')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing them is the point
      .replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '\ufffd')
  );
}

/** The reply that decided a failure, in one line (as detect shows a revision's); `said` is left out (the check's message). */
export function evidenceLine(e: Evidence, said?: string): string {
  const parts: string[] = [];
  if (e.status !== null) parts.push(`HTTP ${e.status}${e.contentType ? `, ${e.contentType.split(';')[0]}` : ''}`);
  if (e.jsonRpcErrorCode !== null) parts.push(`JSON-RPC ${e.jsonRpcErrorCode} ${e.jsonRpcErrorMessage ?? ''}`.trim());
  if (e.message && e.message !== said) parts.push(e.message);
  if (e.bodyPreview && e.jsonRpcErrorCode === null)
    parts.push(`first bytes ${JSON.stringify(e.bodyPreview.slice(0, 60))}`);
  return terminalText(parts.join(' · '));
}

/** "2026-07-28 (modern)", or "none" when nothing was negotiated. */
function negotiatedText(run: ConformanceRun): string {
  const { negotiated, era } = run.protocol;
  if (!negotiated) return 'none';
  return `${terminalText(negotiated)}${era ? ` (${era})` : ''}`;
}

/** The one-line verdict: PASS or FAIL, then the counts. */
export function verdictLine(run: ConformanceRun): string {
  const spent = `${plural(run.requests, 'request')} in ${run.millis} ms`;
  if (!connected(run)) return `FAIL · could not connect, no check ran · ${spent}`;
  const t = tally(run);
  return [
    run.pass ? 'PASS' : 'FAIL',
    `${t.passed} passed`,
    `${t.failedMust} MUST failed`,
    plural(t.warnings, 'warning'),
    `${t.skipped} skipped`,
    spent,
  ].join(' · ');
}

/**
 * The run for a terminal: Target, Protocol (requested → negotiated, era), Server, the cause when the
 * connection did not open (as handshake leads with it), the verdict; then Check · Level · Result ·
 * Message, failures first, each failure's evidence on its own line under it.
 */
export function formatCheckRun(run: ConformanceRun): string {
  const head: string[][] = [
    ['Target', run.target],
    ['Protocol', `${run.protocol.requested} → ${negotiatedText(run)}`],
  ];
  if (run.serverInfo) head.push(['Server', terminalText(`${run.serverInfo.name} ${run.serverInfo.version}`.trim())]);
  if (!connected(run)) {
    const cause = causeOf(run.evidence);
    if (cause && run.evidence) {
      head.push(['Outcome', run.outcome]);
      // The run's message leads with its cause already when the runner wrote it so; say it either way.
      const sentence = causeSentence(cause, run.evidence);
      head.push(['Cause', terminalText(run.message.startsWith(CAUSES[cause]) ? run.message : sentence)]);
      head.push(['', causeHint(cause, run.target.startsWith('stdio: '))]);
    } else head.push(['Outcome', terminalText(`${run.outcome}: ${run.message}`)]);
  }
  head.push(['Verdict', verdictLine(run)]);
  if (run.checks.length === 0) return `${columns(head)}\n`;

  const ordered = failuresFirst(run.checks);
  const lines = columns([
    ['Check', 'Level', 'Result', 'Message'],
    ...ordered.map((c) => [c.id, c.level, resultWord(c), terminalText(c.message)]),
  ]).split('\n');
  // Evidence goes under its failing check, outside the columns so it cannot widen them.
  const table = [
    lines[0],
    ...ordered.flatMap((c, i) =>
      c.status === 'fail' && c.evidence ? [lines[i + 1], `  └ ${evidenceLine(c.evidence, c.message)}`] : [lines[i + 1]],
    ),
  ];
  return `${columns(head)}\n\n${table.join('\n')}\n`;
}

/** `--json`: issue 15's object, shaped in probe (control's POST /api/check answers the same). */
export { checkJson } from '@mcp-fleet/probe';
