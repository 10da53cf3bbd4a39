// `--stdio -- <command> [args…]`: a stdio target on the command line, for detect, handshake and
// check. The process gets an environment built here, explicitly: PATH (so `node` and `npx` are
// found as in the operator's shell) and each `--env NAME=value` or `--env NAME` (that variable's
// value from this shell); nothing else of the CLI's environment is passed on. `--cwd` picks its
// working directory; without it each process gets a fresh empty one (probe's stdio/child.ts).
import { type CommandSpec, displayCommand, displayUrl, type StdioReport, type Target } from '@mcp-fleet/probe';
import { targetUrl } from './args';
import { terminalText } from './check-report';
import { plural } from './plural';
import { UsageError } from './usage';

export const STDIO_OPTIONS = {
  stdio: { type: 'boolean', default: false },
  env: { type: 'string', multiple: true },
  cwd: { type: 'string' },
} as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface StdioValues {
  stdio?: boolean | undefined;
  env?: string[] | undefined;
  cwd?: string | undefined;
  header?: string[] | undefined;
}

/** The command spec `--stdio` names, or undefined without `--stdio` (the flags that need it say so). */
export function stdioTarget(
  values: StdioValues,
  positionals: string[],
  verb: string,
  shellEnv: NodeJS.ProcessEnv = process.env,
): CommandSpec | undefined {
  if (!values.stdio) {
    if (values.env !== undefined || values.cwd !== undefined)
      throw new UsageError('--env and --cwd go with --stdio (a command to start)');
    return undefined;
  }
  const [command, ...args] = positionals;
  if (!command)
    throw new UsageError(`${verb} --stdio needs a command, e.g. mcp-fleet ${verb} --stdio -- node server.js`);
  if (values.header?.length) throw new UsageError('--header is for HTTP; a stdio server gets --env instead');
  if (values.cwd === '') throw new UsageError('--cwd needs a directory');
  const env: Record<string, string> = {};
  if (shellEnv.PATH !== undefined) env.PATH = shellEnv.PATH;
  for (const entry of values.env ?? []) {
    const eq = entry.indexOf('=');
    const name = eq === -1 ? entry : entry.slice(0, eq);
    // The value may be a credential: errors name the variable, never print it.
    if (!ENV_NAME.test(name)) throw new UsageError('--env takes NAME=value or NAME, with a valid variable name');
    if (eq !== -1) env[name] = entry.slice(eq + 1);
    else if (shellEnv[name] !== undefined) env[name] = shellEnv[name];
    else throw new UsageError(`--env ${name}: not set in this shell (give --env ${name}=value)`);
  }
  return { command, args, env, ...(values.cwd !== undefined ? { cwd: values.cwd } : {}) };
}

/** The target of detect, handshake or check: `--stdio -- <command…>`, or the URL; and how it is shown. */
export function probeTarget(
  values: StdioValues,
  positionals: string[],
  verb: string,
): { target: Target; shown: string } {
  const spec = stdioTarget(values, positionals, verb);
  if (spec) return { target: spec, shown: displayCommand(spec) };
  const url = targetUrl(positionals, verb);
  return { target: url, shown: displayUrl(url) };
}

/** What a stdio probe's processes did, as table rows: processes, each finding, the end of stderr. */
export function stdioRows(report: StdioReport | undefined): [string, string][] {
  if (!report) return [];
  const rows: [string, string][] = [['Processes', `${plural(report.processes, 'process', 'processes')} started`]];
  for (const f of report.findings) rows.push(['Finding', terminalText(`${f.id}: ${f.message}`)]);
  // The process's own words: hostile text, one line here (the JSON output has it whole).
  if (report.stderr) rows.push(['Stderr', terminalText(lastLine(report.stderr)).slice(0, 160)]);
  return rows;
}

function lastLine(text: string): string {
  const lines = text.trimEnd().split('\n');
  return lines.length > 1 ? `…${lines.at(-1)}` : (lines[0] ?? '');
}
