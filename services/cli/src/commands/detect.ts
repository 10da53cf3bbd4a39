import { causeSentence, type Detection, detect, learntNothing } from '@mcp-fleet/probe';
import { COMMON_OPTIONS, headers, parse, positiveInt } from '../args';
import { causeHint } from '../cause-hint';
import { detectionExit } from '../exit-status';
import { plural } from '../plural';
import { probeTarget, STDIO_OPTIONS, stdioRows } from '../stdio-target';
import { columns } from '../table';

export async function detectCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, { ...COMMON_OPTIONS, ...STDIO_OPTIONS });
  const { target, shown } = probeTarget(values, positionals, 'detect');
  const detection = await detect(target, {
    headers: headers(values.header),
    timeoutMs: positiveInt(values.timeout, '--timeout', 10_000, 600_000),
  });
  out(values.json ? JSON.stringify(detection, null, 2) : formatDetection(shown, detection));
  return detectionExit(detection);
}

/**
 * The detection as the editor shows it: Revision | Generation | Result | Note, with evidence under
 * each unsupported revision. When one cause explains every revision it comes first, and revisions
 * that learnt nothing (a cause, a 429) read "unknown", not "Not supported".
 */
export function formatDetection(target: string, d: Detection): string {
  const server = d.serverInfo ? ` · server ${d.serverInfo.name} ${d.serverInfo.version}`.trimEnd() : '';
  const head = [`Target   ${target}`];
  const first = d.revisions[0]?.evidence;
  if (d.cause && first) {
    head.push(
      `Cause    ${causeSentence(d.cause, first)} on every revision, so nothing was learnt about which it speaks`,
    );
    head.push(`         ${causeHint(d.cause, d.stdio !== undefined)}`);
  }
  head.push(
    `Outcome  ${d.outcome}${d.newestSupported ? ` · newest supported ${d.newestSupported}` : ''}${server} · ${plural(d.requests, 'request')} in ${d.millis} ms`,
  );
  if (d.outcome === 'NONE' && !d.cause)
    head.push(`         This ${d.stdio ? 'command' : 'URL'} did not identify itself as an MCP server on any revision.`);
  for (const [label, value] of stdioRows(d.stdio)) head.push(`${label.padEnd(8)} ${value}`);
  if (d.outcome === 'RATE_LIMITED')
    head.push(
      `         The server rate-limited the detection (HTTP 429); try again later.${d.retryAfterHeader ? ` Retry-After: ${d.retryAfterHeader}` : ''}`,
    );
  const rows = [['Revision', 'Generation', 'Result', 'Note']];
  for (const r of d.revisions)
    rows.push([
      r.revision,
      r.generation,
      r.supported ? 'Supported' : learntNothing(r.evidence) ? 'unknown' : 'Not supported',
      r.note,
    ]);
  // Evidence goes on its own line under its revision, outside the columns so it cannot widen them.
  const lines = columns(rows).split('\n');
  const table = [
    lines[0],
    ...d.revisions.flatMap((r, i) => (r.evidence ? [lines[i + 1], `  └ ${evidenceLine(r.evidence)}`] : [lines[i + 1]])),
  ];
  return `${head.join('\n')}\n\n${table.join('\n')}\n`;
}

function evidenceLine(e: NonNullable<Detection['revisions'][number]['evidence']>): string {
  const parts: string[] = [];
  if (e.status !== null) parts.push(`HTTP ${e.status}${e.contentType ? `, ${e.contentType.split(';')[0]}` : ''}`);
  if (e.millis !== null) parts.push(`${e.millis} ms`);
  if (
    e.reachabilityFailure &&
    e.status === null &&
    e.jsonRpcErrorCode === null &&
    !e.message.includes(e.reachabilityFailure)
  )
    parts.push(e.reachabilityFailure.replace(/_/g, ' '));
  // The JSON-RPC error says it best when there is one; otherwise our account of what happened.
  parts.push(
    e.jsonRpcErrorCode !== null ? `JSON-RPC ${e.jsonRpcErrorCode} ${e.jsonRpcErrorMessage ?? ''}`.trim() : e.message,
  );
  if (e.bodyPreview && e.jsonRpcErrorCode === null)
    parts.push(`first bytes ${JSON.stringify(e.bodyPreview.slice(0, 60))}`);
  return parts.join(' · ');
}
