import { FleetFileError, loadFleetFile } from '@mcp-fleet/config';
import { parse } from '../args';
import { count } from '../plan-text';
import { EXIT, UsageError } from '../usage';

/**
 * `validate <file>...`: check fleet files offline, as `promtool check config` does — the schema,
 * the policy, durations, headers, and `${NAME}` against this environment, exactly as `apply` would
 * read them (the same reader, the same messages) — with no control to ask. One `file:line:column:
 * field: message` line per problem; exit 0 when every file is valid, 2 when one is not.
 */
export async function validateCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { positionals } = parse(args, {});
  if (positionals.length === 0)
    throw new UsageError('validate needs a fleet file, e.g. mcp-fleet validate mcp-fleet.yaml');
  let code: number = EXIT.ok;
  for (const file of positionals) {
    try {
      const fleet = await loadFleetFile(file, process.env);
      const tests = fleet.servers.reduce((n, s) => n + s.tests.length, 0);
      out(
        `${file}: valid: ${count(fleet.regions.length, 'region')}, ${count(fleet.servers.length, 'server')}, ${count(tests, 'test')}`,
      );
    } catch (err) {
      if (!(err instanceof FleetFileError)) throw err;
      out(err.problems.join('\n'));
      out(`${file}: invalid: ${count(err.problems.length, 'problem')}`);
      code = EXIT.usage;
    }
  }
  return code;
}
