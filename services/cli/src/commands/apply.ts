import { readFile } from 'node:fs/promises';
import { parse, secretEnv } from '../args';
import { EXIT, UsageError } from '../usage';

const OPTIONS = { fleet: { type: 'string' }, api: { type: 'string' } } as const;

/**
 * `apply --fleet file`: send the fleet file to the running control, which checks it (errors name
 * the line and field, nothing is applied) and applies it declaratively. Header `${ENV}` values
 * resolve in control's environment, where the credentials live.
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
  const api = values.api ?? `http://127.0.0.1:${process.env.MCP_FLEET_API_PORT ?? 7070}`;
  // With API tokens on, applying needs an admin token: MCP_FLEET_API_TOKEN or the file
  // MCP_FLEET_API_TOKEN_FILE names (never a flag, which `ps` shows).
  const token = secretEnv().MCP_FLEET_API_TOKEN?.trim();
  let res: Response;
  try {
    res = await fetch(`${api}/api/fleet`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: text,
    });
  } catch {
    process.stderr.write(`mcp-fleet: control is not answering at ${api} (is mcp-fleet up or control running?)\n`);
    return EXIT.failed;
  }
  const body = (await res.json()) as { error?: string };
  if (!res.ok) {
    const hint =
      res.status === 401 || res.status === 403 ? ' (set MCP_FLEET_API_TOKEN to an admin token of this control)' : '';
    process.stderr.write(`mcp-fleet: ${body.error ?? `HTTP ${res.status}`}${hint}\n`);
    return res.status === 400 ? EXIT.usage : EXIT.failed;
  }
  out(JSON.stringify(body, null, 2));
  return EXIT.ok;
}
