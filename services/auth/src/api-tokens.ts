// API tokens as the environment configures them, each with a scope: `read` or `admin`. Control's
// API takes them as bearer tokens and the dashboard as passwords; both read them through this one
// parser and compare through one SecretSet, so the two can never disagree on what a token opens.
//
// Secrets are kept as SHA-256 digests and a presented one is compared with every one of them in
// constant time (timingSafeEqual over equal-length digests), so neither a secret's value nor its
// length leaks through timing. Errors name the variable and the entry's position, never the value.
import { createHash, timingSafeEqual } from 'node:crypto';

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
