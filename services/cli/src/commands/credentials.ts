// mcp-fleet credentials add|list|rm: control's named credentials (issue 18), through its API. A
// credential is stored sealed by control, bound to one origin, and referenced by id (an MCP tool's
// `mcpCredentialId`), so a secret never passes through an agent's context. Nothing here prints a
// value: control never answers one, and `add` echoes only header names.
import { apiClientEnv, parseEnv } from '@mcp-fleet/config';
import { headers, parse } from '../args';
import { terminalText } from '../check-report';
import { columns } from '../table';
import { EXIT, UsageError } from '../usage';

const OPTIONS = {
  header: { type: 'string', multiple: true, short: 'H' },
  url: { type: 'string' },
  origin: { type: 'string' },
  api: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

/** A credential as control lists it: never a value. */
interface Credential {
  id: string;
  name: string;
  origin: string;
  headerNames: string[];
  createdAt: string;
  usedBy: number;
}

/** Trust boundary: control's answer is read for these fields only (a wrong URL could answer anything). */
function asCredential(v: unknown): Credential | null {
  if (v === null || typeof v !== 'object') return null;
  const c = v as Record<string, unknown>;
  const strings = ['id', 'name', 'origin', 'createdAt'].every((k) => typeof c[k] === 'string');
  const names = Array.isArray(c.headerNames) && c.headerNames.every((n) => typeof n === 'string');
  if (!strings || !names || typeof c.usedBy !== 'number') return null;
  return {
    id: c.id as string,
    name: c.name as string,
    origin: c.origin as string,
    headerNames: c.headerNames as string[],
    createdAt: c.createdAt as string,
    usedBy: c.usedBy,
  };
}

export async function credentialsCommand(args: string[], out: (s: string) => void): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parse(rest, OPTIONS);
  const settings = parseEnv(apiClientEnv, process.env);
  const api = new Api(values.api ?? settings.apiUrl, settings.apiToken);
  const only = (allowed: string[]) => {
    for (const flag of ['header', 'url', 'origin'] as const)
      if (values[flag] !== undefined && !allowed.includes(flag))
        throw new UsageError(`credentials ${action} takes no --${flag}`);
  };

  switch (action) {
    case 'add': {
      only(['header', 'url', 'origin']);
      const [name, ...extra] = positionals;
      if (!name)
        throw new UsageError("credentials add needs a name: credentials add <name> --url <url> --header 'Name: value'");
      if (extra.length) throw new UsageError(`unexpected argument: ${extra[0]}`);
      if ((values.url === undefined) === (values.origin === undefined))
        throw new UsageError('credentials add takes --url (its origin is taken) or --origin, one of them');
      const given = headers(values.header);
      if (Object.keys(given).length === 0)
        throw new UsageError("credentials add needs at least one --header 'Name: value'");
      const answer = await api.send('POST', '/api/credentials', {
        name,
        ...(values.url !== undefined ? { url: values.url } : { origin: values.origin }),
        headers: given,
      });
      if (typeof answer === 'number') return answer;
      const c = asCredential((answer as { credential?: unknown }).credential);
      if (!c) return api.odd();
      out(
        values.json
          ? JSON.stringify(c, null, 2)
          : `Added credential ${terminalText(c.name)} (${terminalText(c.id)}): ${terminalText(c.headerNames.join(', '))}, sent to ${terminalText(c.origin)} only`,
      );
      return EXIT.ok;
    }
    case 'list': {
      only([]);
      if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
      const answer = await api.send('GET', '/api/credentials');
      if (typeof answer === 'number') return answer;
      const given = (answer as { credentials?: unknown }).credentials;
      const list = Array.isArray(given) ? given.map(asCredential) : [null];
      if (list.some((c) => c === null)) return api.odd();
      const credentials = list as Credential[];
      out(values.json ? JSON.stringify(credentials, null, 2) : table(credentials));
      return EXIT.ok;
    }
    case 'rm': {
      only([]);
      const [id, ...extra] = positionals;
      if (!id) throw new UsageError('credentials rm needs an id (credentials list shows them)');
      if (extra.length) throw new UsageError(`unexpected argument: ${extra[0]}`);
      const answer = await api.send('DELETE', `/api/credentials/${encodeURIComponent(id)}`);
      if (typeof answer === 'number') return answer;
      out(`Removed credential ${terminalText(id)}`);
      return EXIT.ok;
    }
    default:
      throw new UsageError(
        action === undefined ? 'credentials needs add, list or rm' : `credentials takes add, list or rm, not ${action}`,
      );
  }
}

function table(list: Credential[]): string {
  if (list.length === 0) return 'No credentials.';
  return columns([
    ['ID', 'Name', 'Origin', 'Headers', 'Servers'],
    ...list.map((c) => [c.id, c.name, c.origin, c.headerNames.join(', '), String(c.usedBy)].map(terminalText)),
  ]);
}

/** Control's API: its refusals said on stderr with what to do (an exit code), else its JSON. */
class Api {
  constructor(
    private readonly url: string,
    private readonly token: string | undefined,
  ) {}

  async send(method: string, path: string, body?: unknown): Promise<unknown | number> {
    let res: Response;
    try {
      res = await fetch(`${this.url.replace(/\/+$/, '')}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        redirect: 'error',
        signal: AbortSignal.timeout(30_000),
      });
    } catch {
      process.stderr.write(
        `mcp-fleet: control is not answering at ${this.url} (is mcp-fleet up or control running? MCP_FLEET_API_URL)\n`,
      );
      return EXIT.failed;
    }
    if (res.status === 204) return {};
    const json = (await res.json().catch(() => undefined)) as { error?: unknown } | undefined;
    if (!res.ok) {
      const hint =
        res.status === 401 || res.status === 403 ? ' (set MCP_FLEET_API_TOKEN to an admin token of this control)' : '';
      const error = typeof json?.error === 'string' ? json.error : `HTTP ${res.status}`;
      process.stderr.write(`mcp-fleet: control refused it: ${terminalText(error)}${hint}\n`);
      return res.status === 400 ? EXIT.usage : EXIT.failed;
    }
    if (json === undefined) return this.odd();
    return json;
  }

  odd(): number {
    process.stderr.write(`mcp-fleet: control answered something unexpected (is ${this.url} control?)\n`);
    return EXIT.failed;
  }
}
