// mcp-fleet check <url>: a conformance run (issue 15): the checks a client on the negotiated era
// relies on, each passed, failed (MUST) or warned (SHOULD), or skipped with its reason. With
// --cross-era (issue 16) it also connects once per protocol and compares what each one serves.
import { closeSync, openSync, writeFileSync } from 'node:fs';
import {
  type ConformanceRun,
  type CrossEraRun,
  conformance,
  crossEra,
  isCommandSpec,
  redactStrings,
  secretsOf,
} from '@mcp-fleet/probe';
import { conformanceProtocol, crossEraProtocols, headers, parse } from '../args';
import { checkJson, formatCheckRun } from '../check-report';
import { officialChecks } from '../conformance-format';
import { crossEraJson, formatCrossEra } from '../cross-era-report';
import { checkExit } from '../exit-status';
import { junitReport } from '../junit';
import { probeTarget, STDIO_OPTIONS } from '../stdio-target';
import { UsageError } from '../usage';

// Issue 15's contract, kept exactly: no --timeout (the runner's own bounds apply).
const OPTIONS = {
  header: { type: 'string', multiple: true, short: 'H' },
  protocol: { type: 'string' },
  'no-probe': { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  junit: { type: 'string' },
  format: { type: 'string' },
  'cross-era': { type: 'boolean', default: false },
  protocols: { type: 'string' },
  ...STDIO_OPTIONS,
} as const;

export async function checkCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  const { target } = probeTarget(values, positionals, 'check');
  const url = target instanceof URL ? target : undefined;
  const protocol = conformanceProtocol(values.protocol);
  const sent = headers(values.header);
  if (values.format !== undefined && values.format !== 'conformance')
    throw new UsageError(`--format takes conformance, got ${values.format}`);
  if (values.format && values.json) throw new UsageError('--json and --format conformance are two outputs: pick one');
  if (values.junit === '') throw new UsageError('--junit needs a file name');
  const crossEraWanted = values['cross-era'];
  if (values.protocols !== undefined && !crossEraWanted)
    throw new UsageError('--protocols compares protocols: add --cross-era');
  if (crossEraWanted && !url) throw new UsageError('--cross-era is not available over --stdio yet');
  if (crossEraWanted && (values.format || values.junit !== undefined))
    throw new UsageError('--cross-era reports in the table and --json only, not --format conformance or --junit');
  const protocols = crossEraProtocols(values.protocols);

  // The report file is opened before the run: a path that cannot be written is the operator's to
  // fix (exit 2, as a bad flag), and is better said before a minute of probing than after it.
  const junit = values.junit === undefined ? undefined : openReport(values.junit);

  try {
    const raw = await conformance(target, { protocol, probe: !values['no-probe'], headers: sent });
    // The runner redacts what it reports; this is the last door before a terminal, a CI log or a
    // file, so credentials given here (headers, a command's environment) are redacted again,
    // whatever a server echoed and wherever.
    const secrets = url ? secretsOf(sent, url) : secretsOf(isCommandSpec(target) ? { ...target.env } : {});
    const run: ConformanceRun = redactStrings(raw, secrets);
    const cross: CrossEraRun | undefined =
      crossEraWanted && url
        ? redactStrings(await crossEra(url, { headers: sent, ...(protocols ? { protocols } : {}) }), secrets)
        : undefined;
    if (junit !== undefined) writeFileSync(junit, junitReport(run));
    if (values.format === 'conformance') out(JSON.stringify(officialChecks(run), null, 2));
    else if (values.json) {
      const json = checkJson(run);
      // With cross-era checks, `pass` is both verdicts: no MUST failed in either.
      out(
        JSON.stringify(
          cross ? { ...json, pass: run.pass && cross.pass, crossEra: crossEraJson(cross) } : json,
          null,
          2,
        ),
      );
    } else out(cross ? `${formatCheckRun(run)}\n${formatCrossEra(cross)}` : formatCheckRun(run));
    return checkExit({ pass: run.pass && (cross?.pass ?? true) });
  } finally {
    if (junit !== undefined) closeSync(junit);
  }
}

function openReport(path: string): number {
  try {
    return openSync(path, 'w');
  } catch (err) {
    throw new UsageError(`--junit ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
