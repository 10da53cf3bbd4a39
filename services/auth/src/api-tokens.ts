// API tokens as the environment configures them, each with a scope: `read` or `admin`. Control's
// API takes them as bearer tokens and the dashboard as passwords; both read them through this one
// parser and compare through one SecretSet, so the two can never disagree on what a token opens.
//
// Secrets are kept as SHA-256 digests and a presented one is compared with every one of them in
// constant time (timingSafeEqual over equal-length digests), so neither a secret's value nor its
// length leaks through timing. Errors name the variable and the entry's position, never the value.
import { createHash, timingSafeEqual } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

export type Scope = 'read' | 'admin';

export const MIN_TOKEN_LENGTH = 32;

/** Authentication misconfigured: a clear sentence for the operator (the CLI exits with code 2). */
export class AuthConfigError extends Error {}

export interface ApiToken {
  scope: Scope;
  token: string;
  /** Where it was configured ("MCP_FLEET_API_TOKENS entry 2", "MCP_FLEET_ADMIN_TOKEN"). */
  from: string;
}

/**
 * The secrets that may come from a file instead (`<VAR>_FILE`: a mounted secret, e.g. the files
 * `mcp-fleet secrets init` writes for docker-compose). MCP_FLEET_SECRET_KEY_FILE is credentials.ts's own.
 */
export const SECRET_FILE_VARIABLES = [
  'MCP_FLEET_ADMIN_TOKEN',
  'MCP_FLEET_READ_TOKEN',
  'MCP_FLEET_API_TOKEN',
  'MCP_FLEET_WEB_PASSWORD',
  'MCP_FLEET_METRICS_TOKEN',
  'MCP_FLEET_SESSION_KEY',
  'MCP_FLEET_SECRET_KEY_PREVIOUS',
  'NATS_PASSWORD',
  'PGPASSWORD',
] as const;
export type SecretFileVariable = (typeof SECRET_FILE_VARIABLES)[number];

/** A secret file is a line or two; anything bigger (a device, the wrong path) is refused unread. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/** `<VAR>_FILE` names a file that cannot be read: a clear sentence naming the variable and path. */
export class SecretFileError extends AuthConfigError {}

/**
 * One secret: the variable's own value when set (non-empty), else the contents of the file its
 * `_FILE` variable names (one trailing newline dropped), else undefined. The file's contents are
 * never in an error: only the variable and the path are.
 */
export function secretFromEnv(name: SecretFileVariable, env: Record<string, string | undefined>): string | undefined {
  const inline = env[name];
  if (inline !== undefined && inline !== '') return inline;
  const path = env[`${name}_FILE`]?.trim();
  if (!path) return inline;
  // The path crosses a trust boundary only as configuration; the contents are a secret: read at
  // most MAX_SECRET_FILE_BYTES (a device like /dev/zero never ends) and never echo them.
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new SecretFileError(`cannot read ${name}_FILE ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    const buf = Buffer.alloc(MAX_SECRET_FILE_BYTES + 1);
    let size = 0;
    for (let n = -1; n !== 0 && size < buf.length; size += n) n = readSync(fd, buf, size, buf.length - size, null);
    if (size > MAX_SECRET_FILE_BYTES)
      throw new SecretFileError(
        `${name}_FILE ${path} is larger than ${MAX_SECRET_FILE_BYTES} bytes: not a secret file`,
      );
    return buf
      .subarray(0, size)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  } catch (err) {
    if (err instanceof SecretFileError) throw err;
    throw new SecretFileError(`cannot read ${name}_FILE ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * The environment with every `<VAR>_FILE` of SECRET_FILE_VARIABLES read into `<VAR>` where `<VAR>`
 * itself is unset or empty (the variable wins). A copy: the process's environment is not changed.
 */
export function withSecretFiles(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const out = { ...env };
  for (const name of SECRET_FILE_VARIABLES) {
    const value = secretFromEnv(name, env);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** The variables that each hold one token of one scope. */
const SINGLE_TOKEN_VARIABLES = [
  ['MCP_FLEET_ADMIN_TOKEN', 'admin'],
  ['MCP_FLEET_READ_TOKEN', 'read'],
] as const;

/**
 * `MCP_FLEET_API_TOKENS` (comma-separated `scope:token`), `MCP_FLEET_ADMIN_TOKEN` and
 * `MCP_FLEET_READ_TOKEN`, plus any `also` variables (the dashboard counts its own control token,
 * MCP_FLEET_API_TOKEN, as an admin password). Each at least 32 characters of printable ASCII
 * without spaces or commas; one token cannot hold two scopes.
 */
export function tokensFromEnv(
  env: Record<string, string | undefined>,
  also: readonly (readonly [string, Scope])[] = [],
): ApiToken[] {
  const out: ApiToken[] = [];
  (env.MCP_FLEET_API_TOKENS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .forEach((entry, i) => {
      if (!entry) return;
      const from = `MCP_FLEET_API_TOKENS entry ${i + 1}`;
      const colon = entry.indexOf(':');
      const scope = colon > 0 ? entry.slice(0, colon).trim() : '';
      if (scope !== 'read' && scope !== 'admin')
        throw new AuthConfigError(`${from} is not "read:<token>" or "admin:<token>"`);
      out.push({ scope, token: checkToken(entry.slice(colon + 1).trim(), from), from });
    });
  for (const [name, scope] of [...SINGLE_TOKEN_VARIABLES, ...also]) {
    const token = env[name]?.trim();
    if (token) out.push({ scope, token: checkToken(token, name), from: name });
  }
  digestOnce(out.map((t) => ({ value: t.scope, secret: t.token, from: t.from })));
  return out;
}

/** The token, if it is one: long enough, printable ASCII without spaces or commas. */
export function checkToken(token: string, from: string): string {
  if (token.length < MIN_TOKEN_LENGTH)
    throw new AuthConfigError(
      `${from} is ${token.length} characters; a token needs at least ${MIN_TOKEN_LENGTH} (e.g. openssl rand -hex 32)`,
    );
  if (!/^[\x21-\x7e]+$/.test(token) || token.includes(','))
    throw new AuthConfigError(`${from} may only hold printable ASCII without spaces or commas`);
  return token;
}

/** Secrets, each opening a value (a scope), matched in constant time. */
export class SecretSet<V extends string> {
  readonly #entries: { value: V; digest: Buffer }[];

  /** Refuses one secret configured with two different values, naming both places. */
  constructor(entries: Iterable<{ value: V; secret: string; from: string }>) {
    this.#entries = digestOnce(entries);
  }

  get size(): number {
    return this.#entries.length;
  }

  /** What a presented secret opens, or null. Every entry is compared, match or not: no early exit. */
  identify(presented: string | null | undefined): V | null {
    if (!presented) return null;
    const d = digest(presented);
    let found: V | null = null;
    for (const e of this.#entries) if (timingSafeEqual(e.digest, d) && found === null) found = e.value;
    return found;
  }

  /** A digest of every secret and its value: what a session MAC covers, so changing one ends its sessions. */
  fingerprint(): Buffer {
    const hash = createHash('sha256');
    for (const e of this.#entries) hash.update(`${e.value}:`).update(e.digest);
    return hash.digest();
  }
}

/** Each secret's digest with its value; one secret with two different values is refused. */
function digestOnce<V extends string>(entries: Iterable<{ value: V; secret: string; from: string }>) {
  const seen: { value: V; digest: Buffer; from: string }[] = [];
  for (const e of entries) {
    const d = digest(e.secret);
    const clash = seen.find((s) => s.digest.equals(d) && s.value !== e.value);
    if (clash) throw new AuthConfigError(`${clash.from} and ${e.from} are the same token with different scopes`);
    seen.push({ value: e.value, digest: d, from: e.from });
  }
  return seen.map(({ value, digest }) => ({ value, digest }));
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
