import { displayUrl, handshake, isPassing, isRevision } from '@mcp-fleet/probe';
import { COMMON_OPTIONS, headers, parse, positiveInt, revisionChoice, targetUrl } from '../args';
import { runLoad } from '../bench/load';
import { columns } from '../table';
import { EXIT, UsageError } from '../usage';

const OPTIONS = {
  ...COMMON_OPTIONS,
  revision: { type: 'string' },
  concurrency: { type: 'string' },
  seconds: { type: 'string' },
} as const;

/** `bench handshake <url>`: handshakes per second, p50/p99 and errors against any URL. */
export async function benchCommand(args: string[], out: (s: string) => void): Promise<number> {
  const [what, ...rest] = args;
  if (what !== 'handshake') throw new UsageError(`bench takes "handshake", e.g. mcp-fleet bench handshake <url>`);
  const { values, positionals } = parse(rest, OPTIONS);
  const url = targetUrl(positionals, 'bench handshake');
  const revision = revisionChoice(values.revision, 'newest');
  const opts = {
    revision,
    headers: headers(values.header),
    timeoutMs: positiveInt(values.timeout, '--timeout', 10_000, 600_000),
  };
  // Newest supported: find the current revision once, as a test would, then run against it.
  const first = await handshake(url, opts);
  const current = revision === 'newest' && isRevision(first.negotiated) ? first.negotiated : undefined;
  const result = await runLoad(async () => isPassing((await handshake(url, { ...opts, current })).outcome), {
    concurrency: positiveInt(values.concurrency, '--concurrency', 1, 1024),
    seconds: positiveInt(values.seconds, '--seconds', 5, 3600),
  });
  const report = { target: displayUrl(url), revision, negotiated: first.negotiated, ...result };
  if (values.json) out(JSON.stringify(report, null, 2));
  else
    out(
      `${columns([
        ['Target', report.target],
        ['Revision', `${revision}${current ? ` (currently ${current})` : ''}`],
        ['Concurrency', String(result.concurrency)],
        ['Handshakes', `${result.operations} in ${result.seconds} s (${result.perSecond}/s)`],
        ['Latency', `p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms`],
        ['Errors', `${result.errors}${result.firstError ? ` (first: ${result.firstError})` : ''}`],
      ])}\n`,
    );
  return result.errors === 0 ? EXIT.ok : EXIT.failed;
}
