import { readFile } from 'node:fs/promises';
import { expandFleetFile, FleetFileError } from '@mcp-fleet/control';
import { parse, secretEnv } from '../args';
import { EXIT, UsageError } from '../usage';

const OPTIONS = { fleet: { type: 'string' }, api: { type: 'string' } } as const;

/**
 * `apply --fleet file`: read and check the fleet file here (errors name the file, the line and the
 * field; nothing is sent), expand its `${NAME}` references from this environment — the operator's,
 * where the file is read — and send the result to the running control as JSON, which control takes
 * literally and applies declaratively. Control never expands a fleet sent to it.
 */
export async function applyCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const path = values.fleet ?? 'mcp-fleet.yaml';
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new UsageError(`cannot read the fleet file ${path}`);
  }
  let fleet: unknown;
  try {
    fleet = expandFleetFile(text, path, process.env);
  } catch (err) {
    if (!(err instanceof FleetFileError)) throw err;
    process.stderr.write(`mcp-fleet: ${err.message}\n`);
    return EXIT.usage;
  }
  const api = values.api ?? `http://127.0.0.1:${process.env.MCP_FLEET_API_PORT ?? 7070}`;
  // With API tokens on, applying needs an admin token: MCP_FLEET_API_TOKEN or the file
  // MCP_FLEET_API_TOKEN_FILE names (never a flag, which `ps` shows).
  const token = secretEnv().MCP_FLEET_API_TOKEN?.trim();
  let res: Response;
  try {
    res = await fetch(`${api}/api/fleet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(fleet),
    });
  } catch {
    process.stderr.write(`mcp-fleet: control is not answering at ${api} (is mcp-fleet up or control running?)\n`);
    return EXIT.failed;
  }
  const body = (await res.json().catch(() => ({}))) as { error?: string };
  if (!res.ok) {
    const hint =
      res.status === 401 || res.status === 403 ? ' (set MCP_FLEET_API_TOKEN to an admin token of this control)' : '';
    process.stderr.write(`mcp-fleet: ${body.error ?? `HTTP ${res.status}`}${hint}\n`);
    return res.status === 400 ? EXIT.usage : EXIT.failed;
  }
  out(JSON.stringify(body, null, 2));
  return EXIT.ok;
}
