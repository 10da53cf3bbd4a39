// A cross-era run as `mcp-fleet check --cross-era` prints it: a verdict line, one row per protocol
// (what it negotiated, how it went, what it offers), the checks failures first, and under each failed
// check the items and protocols that disagree. `--json` adds issue 16's `crossEra` object. Pure.
import type { CrossEraRun } from '@mcp-fleet/probe';
import { failuresFirst, resultWord, terminalText } from './check-report';
import { plural } from './plural';
import { columns } from './table';

/** The differences shown under one failed check in the terminal (the JSON carries them all). */
const SHOWN_DIFFERENCES = 10;

export function crossEraVerdict(run: CrossEraRun): string {
  const mustFailed = run.checks.filter((c) => c.level === 'MUST' && c.status === 'fail').length;
  const warnings = run.checks.filter((c) => c.level === 'SHOULD' && c.status === 'fail').length;
  const passed = run.checks.filter((c) => c.status === 'pass').length;
  const skipped = run.checks.filter((c) => c.status === 'skip').length;
  return [
    run.pass ? 'PASS' : 'FAIL',
    `${passed} passed`,
    `${mustFailed} MUST failed`,
    plural(warnings, 'warning'),
    `${skipped} skipped`,
    plural(run.protocols.length, 'protocol'),
    `${plural(run.requests, 'request')} in ${run.millis} ms`,
  ].join(' · ');
}

export function formatCrossEra(run: CrossEraRun): string {
  const head = columns([['Cross-era', crossEraVerdict(run)]]);
  const protocols = run.protocols.length
    ? columns([
        ['Protocol', 'Negotiated', 'Era', 'Outcome', 'Surface'],
        ...run.protocols.map((p) => [
          p.protocol,
          p.negotiated ? terminalText(p.negotiated) : 'none',
          p.era ?? '-',
          p.outcome,
          terminalText(p.message),
        ]),
      ])
    : '';
  const ordered = failuresFirst(run.checks);
  const lines = columns([
    ['Check', 'Level', 'Result', 'Message'],
    ...ordered.map((c) => [c.id, c.level, resultWord(c), terminalText(c.message)]),
  ]).split('\n');
  const table = [
    lines[0],
    ...ordered.flatMap((c, i) => {
      const row = lines[i + 1]!;
      // One difference is the check's message already; more are listed under it.
      if (c.status !== 'fail' || c.differences.length < 2) return [row];
      const shown = c.differences
        .slice(0, SHOWN_DIFFERENCES)
        .map(
          (d) =>
            `  └ ${d.kind.replace('_', ' ')} ${terminalText(d.name)} · ${terminalText(d.era)} · ${terminalText(d.detail)}`,
        );
      const rest = c.differences.length - SHOWN_DIFFERENCES;
      return [row, ...shown, ...(rest > 0 ? [`  └ … and ${plural(rest, 'more difference')} (--json lists them)`] : [])];
    }),
  ];
  return `${head}\n${protocols ? `\n${protocols}\n` : ''}\n${table.join('\n')}\n`;
}

/** `--json`'s `crossEra`: issue 16's shape (pass, protocols, checks with their differences), plus the cost. */
export function crossEraJson(run: CrossEraRun) {
  return {
    pass: run.pass,
    protocols: run.protocols.map((p) => ({ ...p })),
    checks: run.checks.map((c) => ({
      id: c.id,
      level: c.level,
      status: c.status,
      message: c.message,
      differences: c.differences.map((d) => ({ kind: d.kind, name: d.name, era: d.era, detail: d.detail })),
    })),
    requests: run.requests,
    millis: run.millis,
  };
}
