import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { applyEnv, expandFleetFile, FleetFileError, type FleetObject, parseEnv } from '@mcp-fleet/config';
import type { ApplySummary } from '@mcp-fleet/control';
import { parse } from '../args';
import { planLines, retiring, totals } from '../plan-text';
import { EXIT, UsageError } from '../usage';

const OPTIONS = {
  fleet: { type: 'string' },
  api: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  yes: { type: 'boolean', short: 'y', default: false },
  json: { type: 'boolean', default: false },
} as const;

/**
 * `apply [file]`: read and check the fleet file here (errors name the file, line and column;
 * nothing is sent), expand its `${NAME}` references from this environment — the operator's, where
 * the file is read — and send the result to the running control as JSON, which control takes
 * literally and applies declaratively. Control first answers the plan (a dry run: its apply rolled
 * back); `--dry-run` prints it and stops. Retiring anything needs a yes: asked on a terminal,
 * `--yes` from a script, else refused (exit 2). The apply then names the plan it was shown, so
 * control refuses it (409) if the fleet moved in between.
 */
export async function applyCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (positionals.length > (values.fleet ? 0 : 1)) throw new UsageError(`unexpected argument: ${positionals.at(-1)}`);
  const path = values.fleet ?? positionals[0] ?? 'mcp-fleet.yaml';
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the fleet file ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let fleet: FleetObject;
  try {
    fleet = expandFleetFile(text, path, process.env);
  } catch (err) {
    if (!(err instanceof FleetFileError)) throw err;
    process.stderr.write(`mcp-fleet: ${err.message}\n`);
    return EXIT.usage;
  }
  // With API tokens on, applying needs an admin token: MCP_FLEET_API_TOKEN or the file
  // MCP_FLEET_API_TOKEN_FILE names (never a flag, which `ps` shows).
  const settings = parseEnv(applyEnv, process.env);
  const control = new ControlClient(values.api ?? settings.apiUrl, settings.apiToken, path, fleet);

  const plan = await control.post('?dryRun=1');
  if (typeof plan === 'number') return plan;
  if (values['dry-run']) {
    out(
      values.json
        ? JSON.stringify(plan, null, 2)
        : `Plan for ${path} (dry run, nothing applied):\n${planLines(plan)}\n${totals(plan)}`,
    );
    return EXIT.ok;
  }
  const retires = plan.retired.length > 0 || plan.testsRetired > 0;
  const ask = retires && !values.yes;
  if (ask) {
    if (!process.stdin.isTTY) {
      process.stderr.write(
        `mcp-fleet: applying ${path} would retire ${retiring(plan)}; nothing applied.\n` +
          'Run it with --yes to apply it anyway (from a script), or with --dry-run to see the whole plan.\n',
      );
      return EXIT.usage;
    }
    process.stderr.write(`Plan for ${path}:\n${planLines(plan)}\n${totals(plan)}\n`);
    if (!(await confirm(`Retire ${retiring(plan)}? Type yes to apply: `))) {
      process.stderr.write('Nothing applied.\n');
      return EXIT.failed;
    }
  }
  const done = await control.post(`?plan=${plan.plan}`);
  if (typeof done === 'number') return done;
  // The plan shown before the question is not repeated.
  out(
    values.json
      ? JSON.stringify(done, null, 2)
      : `Applied ${path}:\n${ask ? '' : `${planLines(done)}\n`}${totals(done, true)}`,
  );
  return EXIT.ok;
}

/** Control's POST /api/fleet, its refusals said with the file's name (an exit code when refused). */
class ControlClient {
  constructor(
    private readonly api: string,
    private readonly token: string | undefined,
    private readonly path: string,
    private readonly fleet: FleetObject,
  ) {}

  async post(query: string): Promise<ApplySummary | number> {
    const token = this.token;
    let res: Response;
    try {
      res = await fetch(`${this.api}/api/fleet${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(this.fleet),
      });
    } catch {
      process.stderr.write(
        `mcp-fleet: ${this.path} not applied: control is not answering at ${this.api} (is mcp-fleet up or control running?)\n`,
      );
      return EXIT.failed;
    }
    // Control's answer crosses a trust boundary too: only its known shape is used.
    const body = (await res.json().catch(() => ({}))) as Partial<ApplySummary> & { error?: unknown };
    if (!res.ok) {
      const hint =
        res.status === 401 || res.status === 403 ? ' (set MCP_FLEET_API_TOKEN to an admin token of this control)' : '';
      const error = typeof body.error === 'string' ? body.error : `HTTP ${res.status}`;
      process.stderr.write(`mcp-fleet: ${this.path} not applied: control refused it: ${error}${hint}\n`);
      return res.status === 400 ? EXIT.usage : EXIT.failed;
    }
    if (!Array.isArray(body.retired) || typeof body.plan !== 'string') {
      process.stderr.write(
        `mcp-fleet: ${this.path}: control answered something other than a plan (is ${this.api} control?)\n`,
      );
      return EXIT.failed;
    }
    return body as ApplySummary;
  }
}

/** A yes on the terminal; anything else, or the end of its input, is no. */
async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const closed = new Promise<string>((resolve) => rl.once('close', () => resolve('')));
  try {
    const answer = await Promise.race([rl.question(question), closed]);
    return /^\s*y(es)?\s*$/i.test(answer);
  } catch {
    return false;
  } finally {
    rl.close();
  }
}
