// `secrets init`: the credentials a docker-compose stack needs, generated at its first start so
// auth is on without anyone inventing a secret. One directory keeps every secret (the master
// copies, read by nothing else); each role gets a subdirectory holding only what its process
// reads, named after the variable it reads (`<VAR>_FILE` points there), so an agent's container
// sees its own NATS password and nothing of control's. A value given in the environment (.env)
// wins and is written instead; otherwise a secret is generated once and kept. Values are never
// printed: the summary names variables only.
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  closeSync,
  fchmodSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AuthConfigError } from '@mcp-fleet/auth/api-tokens';
import { generateSecretKey, parseSecretKey, SecretKeyError } from '@mcp-fleet/auth/keyring';
// Light imports only (config, subpaths; no bus, control or database): this runs at every `docker compose up`.
import { assertRegion } from '@mcp-fleet/bus/region';
import { ConfigError, controlEnv, parseEnv, webEnv } from '@mcp-fleet/config';
import { webAuthFrom } from '@mcp-fleet/web/auth';
import { EXIT, parseArgsError, UsageError } from '../usage';

const OPTIONS = {
  dir: { type: 'string' },
  region: { type: 'string', multiple: true },
  owner: { type: 'string', multiple: true },
} as const;

/** The variable (and file) holding the NATS password of a region's agents, for nats-server's config. */
export const agentNatsPasswordVariable = (region: string) =>
  `MCP_FLEET_NATS_AGENT_${region.toUpperCase().replace(/-/g, '_')}_PASSWORD`;
export const CONTROL_NATS_PASSWORD = 'MCP_FLEET_NATS_CONTROL_PASSWORD';
/** What the nodes of a NATS cluster present to one another on their routes (deploy/nats/cluster.conf). */
export const ROUTE_NATS_PASSWORD = 'MCP_FLEET_NATS_ROUTE_PASSWORD';

/** 32 random bytes, base64url: every token and password we generate (43 characters). */
const token = () => randomBytes(32).toString('base64url');
/**
 * nats-server reads a password from its environment as a config value, so a generated one is
 * letters and digits only and starts with a letter (never read as a number or a keyword); the
 * route password also goes into route URLs, where these characters need no escaping.
 */
const natsPassword = () => `n${randomBytes(32).toString('hex')}`;
const NATS_PASSWORD_RULE = /^[A-Za-z][A-Za-z0-9_-]{15,}$/;

interface Secret {
  /** The master copy's file name, and the variable in the environment (.env) that overrides it. */
  name: string;
  generate(): string;
  /** A value from the environment is checked before anything is written (a generated one always passes). */
  check?(value: string): void;
}

/** Every role's subdirectory: the file names its process reads (`<VAR>_FILE`) and whose secret each holds. */
type Layout = Record<string, Record<string, string>>;

function secretsFor(regions: string[]): { secrets: Secret[]; layout: Layout } {
  const nats = (name: string): Secret => ({
    name,
    generate: natsPassword,
    check(value) {
      if (!NATS_PASSWORD_RULE.test(value))
        throw new AuthConfigError(
          `${name} must be 16 or more letters, digits, - or _, starting with a letter (nats-server reads it as a config value)`,
        );
    },
  });
  const nonEmpty = (name: string): Secret => ({ name, generate: token });
  const secrets: Secret[] = [
    // Tokens, the dashboard's password and session key are checked below by their readers' own parsers.
    nonEmpty('MCP_FLEET_ADMIN_TOKEN'),
    nonEmpty('MCP_FLEET_READ_TOKEN'),
    nonEmpty('MCP_FLEET_WEB_PASSWORD'),
    nonEmpty('MCP_FLEET_SESSION_KEY'),
    {
      name: 'MCP_FLEET_SECRET_KEY',
      generate: generateSecretKey,
      check: (value) => void parseSecretKey(value, 'MCP_FLEET_SECRET_KEY'),
    },
    nonEmpty('POSTGRES_PASSWORD'),
    nonEmpty('GRAFANA_ADMIN_PASSWORD'),
    nats(CONTROL_NATS_PASSWORD),
    ...regions.map((r) => nats(agentNatsPasswordVariable(r))),
    nats(ROUTE_NATS_PASSWORD),
  ];
  const keys = {
    MCP_FLEET_SECRET_KEY: 'MCP_FLEET_SECRET_KEY',
    MCP_FLEET_SECRET_KEY_PREVIOUS: 'MCP_FLEET_SECRET_KEY_PREVIOUS',
    PGPASSWORD: 'POSTGRES_PASSWORD',
  };
  const layout: Layout = {
    control: {
      MCP_FLEET_ADMIN_TOKEN: 'MCP_FLEET_ADMIN_TOKEN',
      MCP_FLEET_READ_TOKEN: 'MCP_FLEET_READ_TOKEN',
      NATS_PASSWORD: CONTROL_NATS_PASSWORD,
      ...keys,
    },
    // The dashboard's own token for control is the admin token; the read token signs in read-only.
    web: {
      MCP_FLEET_API_TOKEN: 'MCP_FLEET_ADMIN_TOKEN',
      MCP_FLEET_READ_TOKEN: 'MCP_FLEET_READ_TOKEN',
      MCP_FLEET_WEB_PASSWORD: 'MCP_FLEET_WEB_PASSWORD',
      MCP_FLEET_SESSION_KEY: 'MCP_FLEET_SESSION_KEY',
      ...keys,
    },
    ...Object.fromEntries(regions.map((r) => [`agent-${r}`, { NATS_PASSWORD: agentNatsPasswordVariable(r) }])),
    // nats-server's config names each user's password, and the cluster's route password, by these
    // variables (deploy/nats); every node of the cluster reads the same files.
    nats: Object.fromEntries(
      [CONTROL_NATS_PASSWORD, ...regions.map(agentNatsPasswordVariable), ROUTE_NATS_PASSWORD].map((n) => [n, n]),
    ),
    postgres: { POSTGRES_PASSWORD: 'POSTGRES_PASSWORD' },
    grafana: { GRAFANA_ADMIN_PASSWORD: 'GRAFANA_ADMIN_PASSWORD' },
  };
  return { secrets, layout };
}

interface Owner {
  uid: number;
  gid: number;
}

function parseOwners(list: string[] | undefined): { all?: Owner; byRole: Map<string, Owner> } {
  const byRole = new Map<string, Owner>();
  let all: Owner | undefined;
  for (const entry of list ?? []) {
    const m = entry.match(/^(?:([a-z][a-z0-9-]*)=)?(\d{1,10})(?::(\d{1,10}))?$/);
    if (!m) throw new UsageError(`--owner takes <uid>[:<gid>] or <role>=<uid>[:<gid>], got ${entry}`);
    const owner = { uid: Number(m[2]), gid: Number(m[3] ?? m[2]) };
    if (m[1]) byRole.set(m[1], owner);
    else all = owner;
  }
  return { all, byRole };
}

/**
 * `secrets init --dir <dir> [--region <name>]... [--owner <uid>[:<gid>]] [--owner <role>=<uid>[:<gid>]]`:
 * write what is missing (0600), take what the environment gives, and refresh every role's copy.
 */
export async function secretsCommand(args: string[], out: (s: string) => void): Promise<number> {
  // node:util directly, not ../args (which loads the probe for its revision helpers).
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw parseArgsError(err);
  }
  const { values, positionals } = parsed;
  if (positionals[0] !== 'init' || positionals.length > 1)
    throw new UsageError('secrets takes one action: init --dir <dir> [--region <name>]...');
  if (!values.dir) throw new UsageError('secrets init needs --dir <dir>');
  const regions = [...new Set(values.region ?? [])];
  for (const r of regions) {
    try {
      assertRegion(r);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const owners = parseOwners(values.owner);
  const dir = values.dir;
  const env = process.env;
  const { secrets, layout } = secretsFor(regions);

  // Decide every value before writing anything: a bad value in .env leaves the files as they were.
  const value = new Map<string, string>();
  const how = { generated: [] as string[], kept: [] as string[], fromEnv: [] as string[] };
  for (const s of secrets) {
    const given = env[s.name];
    const held = readSecret(join(dir, s.name));
    if (given !== undefined && given !== '') {
      value.set(s.name, given);
      how.fromEnv.push(s.name);
    } else if (held !== undefined && held !== '') {
      value.set(s.name, held);
      how.kept.push(s.name);
    } else {
      value.set(s.name, s.generate());
      how.generated.push(s.name);
    }
  }
  // A new key from the environment must not strand what the old one sealed: the old key keeps
  // unsealing (MCP_FLEET_SECRET_KEY_PREVIOUS) and control re-seals everything under the new one.
  const previous = (env.MCP_FLEET_SECRET_KEY_PREVIOUS || readSecret(join(dir, 'MCP_FLEET_SECRET_KEY_PREVIOUS')) || '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const oldKey = readSecret(join(dir, 'MCP_FLEET_SECRET_KEY'));
  if (oldKey && oldKey !== value.get('MCP_FLEET_SECRET_KEY') && !previous.includes(oldKey)) previous.push(oldKey);
  value.set('MCP_FLEET_SECRET_KEY_PREVIOUS', previous.filter((k) => k !== value.get('MCP_FLEET_SECRET_KEY')).join(','));

  try {
    for (const s of secrets) if (how.fromEnv.includes(s.name)) s.check?.(value.get(s.name)!);
    for (const [i, k] of previous.entries()) parseSecretKey(k, `MCP_FLEET_SECRET_KEY_PREVIOUS (key ${i + 1})`);
    // Each role's environment, parsed as its process will parse it: control's API tokens, the
    // dashboard's password, session key and tokens. What they refuse is refused here, before any write.
    const roleEnv = (role: string) =>
      Object.fromEntries(Object.entries(layout[role]!).map(([file, secret]) => [file, value.get(secret)]));
    parseEnv(controlEnv, roleEnv('control'));
    const web = parseEnv(webEnv, roleEnv('web'));
    webAuthFrom(web.signIn, web.exposure.allowedHosts);
  } catch (err) {
    if (err instanceof AuthConfigError || err instanceof SecretKeyError || err instanceof ConfigError) {
      process.stderr.write(`mcp-fleet: ${err.message}; nothing written\n`);
      return EXIT.usage;
    }
    throw err;
  }

  ensureDir(dir);
  for (const s of [...secrets.map((x) => x.name), 'MCP_FLEET_SECRET_KEY_PREVIOUS'])
    writeSecret(join(dir, s), value.get(s)!, undefined);
  for (const [role, files] of Object.entries(layout)) {
    const owner = owners.byRole.get(role) ?? owners.all;
    const roleDir = join(dir, role);
    ensureDir(roleDir, owner);
    for (const [file, secret] of Object.entries(files)) writeSecret(join(roleDir, file), value.get(secret)!, owner);
  }
  const list = (names: string[]) => (names.length ? names.join(', ') : 'none');
  out(
    `secrets in ${dir} (0600; values are never printed): generated ${list(how.generated)}; kept ${list(how.kept)}; ` +
      `from the environment ${list(how.fromEnv)}. Roles: ${Object.keys(layout).join(', ')}.`,
  );
  return EXIT.ok;
}

/** A secret file's value (one trailing newline dropped), or undefined when there is none. */
function readSecret(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

function ensureDir(path: string, owner?: Owner) {
  try {
    statSync(path);
  } catch {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    if (owner) chownSync(path, owner.uid, owner.gid);
  }
}

/**
 * Write a secret if it differs: a new file, 0600 (and chowned) before a byte goes in, renamed over
 * the old one, so no reader ever sees it half-written or readable by others.
 */
function writeSecret(path: string, text: string, owner: Owner | undefined) {
  try {
    const st = statSync(path);
    const same = readSecret(path) === text && (st.mode & 0o777) === 0o600;
    if (same && (!owner || (st.uid === owner.uid && st.gid === owner.gid))) return;
  } catch {
    // missing or unreadable: write it
  }
  const tmp = `${path}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    fchmodSync(fd, 0o600); // whatever the umask
    if (owner) chownSync(tmp, owner.uid, owner.gid);
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}
