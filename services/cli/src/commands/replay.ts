// mcp-fleet replay session.jsonl <url>: send a recorded session's requests again (in its revision,
// or --protocol's) and judge each answer against the recorded one: same, newer equivalent (only
// fields or items added), a clean protocol error, or broken. Exit 1 when any step is broken or the
// conversation does not open. --print-script prints the session as a fleet file's `steps:`.
import { readFileSync, statSync } from 'node:fs';
import { parseSession, type ReplayRun, redactStrings, replaySession, type Session, secretsOf } from '@mcp-fleet/probe';
import { headers, parse, revision, targetUrl } from '../args';
import { columns } from '../table';
import { EXIT, UsageError } from '../usage';
import { scriptYaml } from './record';

const OPTIONS = {
  protocol: { type: 'string' },
  header: { type: 'string', multiple: true, short: 'H' },
  'allow-writes': { type: 'boolean', default: false },
  'print-script': { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const;

/** A session file larger than this is not one `record` writes (256 lines of at most 1 MiB is the bound). */
const SESSION_FILE_MAX_BYTES = 64 * 1024 * 1024;

export async function replayCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  const [file, ...rest] = positionals;
  if (!file) throw new UsageError('replay needs a session file, e.g. mcp-fleet replay session.jsonl <url>');
  const session = readSession(file);
  if (values['print-script']) {
    if (rest.length) throw new UsageError('--print-script prints the steps and replays nothing: drop the URL');
    out(scriptYaml(session));
    return EXIT.ok;
  }
  const url = targetUrl(rest, 'replay');
  const sent = headers(values.header);
  const raw = await replaySession(url, {
    session,
    protocol: revision(values.protocol, '--protocol'),
    headers: sent,
    allowWrites: values['allow-writes'],
  });
  const run: ReplayRun = redactStrings(raw, secretsOf(sent, url));
  out(values.json ? JSON.stringify(run, null, 2) : formatReplay(run));
  return run.pass ? EXIT.ok : EXIT.failed;
}

function readSession(file: string): Session {
  let text: string;
  try {
    if (statSync(file).size > SESSION_FILE_MAX_BYTES) throw new UsageError(`${file}: larger than a session can be`);
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const parsed = parseSession(text);
  if (!parsed.ok) throw new UsageError(`${file}: ${parsed.error}`);
  return parsed.session;
}

export function formatReplay(run: ReplayRun): string {
  const head = columns([
    ['Target', run.target],
    [
      'Protocol',
      `${run.protocol.requested}${run.protocol.requested === run.protocol.recorded ? '' : ` (recorded in ${run.protocol.recorded})`}`,
    ],
    [
      'Outcome',
      run.outcome === 'success' ? `${run.pass ? 'pass' : 'fail'}: ${run.message}` : `${run.outcome}: ${run.message}`,
    ],
    ['Requests', `${run.requests} in ${run.millis} ms`],
  ]);
  if (run.steps.length === 0) return `${head}\n`;
  const rows = [['#', 'Method', 'Name', 'Verdict', 'Why']];
  for (const s of run.steps)
    rows.push([String(s.index + 1), printable(s.method), printable(s.name ?? '-'), s.verdict, printable(s.reason)]);
  return `${head}\n\n${columns(rows)}\n`;
}

/** A server's words may carry terminal control characters: show them as U+FFFD. */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing them is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd');
}
