// What a probe's stdio processes did besides answering, as a run, a detection or a conformance run
// reports it: how many processes it started, the findings (stdout carrying what is not a JSON-RPC
// message; a process that did not end when its stdin closed) and the last words on stderr. Stderr
// is evidence, never judged an error by itself: servers log there by design.
import { BOUNDS, excerpt } from '../bounds';
import type { ProbeContext, ProcessRecord } from '../context';
import { printable, stderrExcerpt } from '../evidence';

export type StdioFindingId = 'stdout_only_protocol' | 'exits_on_stdin_close';

export interface StdioFinding {
  id: StdioFindingId;
  /** One line, within BOUNDS.check (a conformance check's message says the same). */
  message: string;
}

export interface StdioReport {
  /** Processes the probe started (one per conversation). */
  processes: number;
  /** Lines on stdout, over every process, that were not JSON-RPC messages. */
  stdoutNotJson: number;
  findings: StdioFinding[];
  /** The last words on stderr of the last process that wrote any (bounded, redacted). */
  stderr: string | null;
}

/** The report of a probe over stdio; undefined for an HTTP target. */
export function stdioReport(ctx: ProbeContext): StdioReport | undefined {
  if (!ctx.command) return undefined;
  const secrets = ctx.secrets;
  const findings: StdioFinding[] = [];
  const notJson = stdoutNotJson(ctx.processes);
  if (notJson.count > 0) findings.push({ id: 'stdout_only_protocol', message: notJsonSentence(notJson, secrets) });
  const lingered = ctx.processes.filter((p) => p.ending && p.ending.by !== 'stdin_close' && p.ending.by !== 'itself');
  if (lingered.length > 0)
    findings.push({
      id: 'exits_on_stdin_close',
      message: excerpt(
        `${lingered.length} of ${ctx.processes.length} processes did not exit when stdin closed (ended by ${[...new Set(lingered.map((p) => p.ending!.by.toUpperCase()))].join(', ')})`,
        secrets,
        BOUNDS.check,
      ),
    });
  const lastWords = [...ctx.processes].reverse().find((p) => p.stderr.trim() !== '')?.stderr;
  return {
    processes: ctx.processes.length,
    stdoutNotJson: notJson.count,
    findings,
    stderr: lastWords ? stderrExcerpt(lastWords, secrets) : null,
  };
}

export function stdoutNotJson(processes: readonly ProcessRecord[]): { count: number; first: string | undefined } {
  let count = 0;
  let first: string | undefined;
  for (const p of processes) {
    count += p.notJson.count;
    first ??= p.notJson.samples[0];
  }
  return { count, first };
}

export function notJsonSentence(n: { count: number; first: string | undefined }, secrets: readonly string[]): string {
  const sample = n.first === undefined ? '' : `, the first: ${JSON.stringify(excerpt(n.first, secrets, 80))}`;
  return printable(
    excerpt(
      `${n.count} line${n.count === 1 ? '' : 's'} on stdout ${n.count === 1 ? 'was' : 'were'} not JSON-RPC (stdout is for protocol messages; logs belong on stderr)${sample}`,
      secrets,
      BOUNDS.check,
    ),
  );
}
