// Credentials at rest. A server's header values (its credentials) and a URL that carries any (a
// user name, password or query values) are sealed with AES-256-GCM before they reach the database
// and unsealed only where a probe needs them: the scheduler's jobs, a pinned test's first run, the
// dashboard's "keep the stored value". Header names stay readable (the dashboard shows them), and
// the URL in its masked display form; values never are without the key.
//
// A sealed value is one string, `mcpfleet:v1:<key id>:<iv>:<tag>:<ciphertext>` (base64url parts):
// the key id (16 hex digits of a hash of the key, never the key) says which key sealed it, so keys
// can rotate: MCP_FLEET_SECRET_KEY seals, MCP_FLEET_SECRET_KEY_PREVIOUS still unseals, and control
// re-seals everything under the current key when it starts. Each value has its own random 12-byte
// IV; the GCM tag authenticates it together with the server's origin and the header's name, so a
// sealed credential copied to another header, another server or another host does not unseal.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hasUrlCredentials, maskUrl } from '@mcp-fleet/probe';

/** The key that seals credentials: 32 bytes, base64 or hex. */
export const SECRET_KEY_ENV = 'MCP_FLEET_SECRET_KEY';
/** Keys that still unseal what they sealed (comma-separated), while a rotation completes. */
export const PREVIOUS_SECRET_KEY_ENV = 'MCP_FLEET_SECRET_KEY_PREVIOUS';
/** A file holding the key (a mounted secret), instead of MCP_FLEET_SECRET_KEY. */
export const SECRET_KEY_FILE_ENV = 'MCP_FLEET_SECRET_KEY_FILE';

const VERSION = 'mcpfleet:v1:';
const ENVELOPE = /^mcpfleet:v1:([0-9a-f]{16}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]{22}):([A-Za-z0-9_-]*)$/;
const KEY_BYTES = 32;
const IV_BYTES = 12;

/** The key is missing or unusable. Its message says what to set; it never contains a key. */
export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

/** A stored credential that the keys at hand cannot unseal (another key sealed it, or it was altered). */
export class CredentialsUnreadableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialsUnreadableError';
  }
}

/** What to run to make a key, for messages and docs. */
export const KEY_HINT = `32 random bytes as base64 or hex, e.g. \`openssl rand -base64 32\``;

/** A new key, base64. */
export function generateSecretKey(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

/** Parse a key: 64 hex digits, or base64 / base64url of 32 bytes. `what` names it in errors. */
export function parseSecretKey(text: string, what: string): Buffer {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) {
    const key = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === KEY_BYTES) return key;
    throw new SecretKeyError(`${what} must be ${KEY_HINT}; it decodes to ${key.length} bytes`);
  }
  throw new SecretKeyError(`${what} must be ${KEY_HINT}; it is neither`);
}

/** A key's public name: 16 hex digits of a hash of it. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('mcp-fleet secret key id\0').update(key).digest('hex').slice(0, 16);
}

/** Whether a stored value is sealed (else it is a plaintext value from before encryption). */
export function isSealed(value: string): boolean {
  return ENVELOPE.test(value);
}

/** The id of the key that sealed a value, or null for a plaintext value. */
export function sealedBy(value: string): string | null {
  return ENVELOPE.exec(value)?.[1] ?? null;
}

/** The current key, which seals, and older ones, which only unseal. */
export class Keyring {
  /** The current key's id. */
  readonly id: string;
  /** Where the current key came from (an environment variable or a file), fit to print. */
  readonly source: string;
  readonly #current: Buffer;
  readonly #keys = new Map<string, Buffer>();

  constructor(current: Buffer, opts: { previous?: readonly Buffer[]; source?: string } = {}) {
    if (current.length !== KEY_BYTES) throw new SecretKeyError(`a secret key is ${KEY_BYTES} bytes`);
    this.#current = Buffer.from(current);
    this.id = keyId(current);
    this.source = opts.source ?? 'given';
    this.#keys.set(this.id, this.#current);
    for (const key of opts.previous ?? []) {
      if (key.length !== KEY_BYTES) throw new SecretKeyError(`a secret key is ${KEY_BYTES} bytes`);
      if (!this.#keys.has(keyId(key))) this.#keys.set(keyId(key), Buffer.from(key));
    }
  }

  /** Ids of every key that unseals: the current one first. */
  get ids(): string[] {
    return [...this.#keys.keys()];
  }

  /** Seal a value; `context` is authenticated with it and must be given again to unseal it. */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#current, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const b64 = (b: Buffer) => b.toString('base64url');
    return `${VERSION}${this.id}:${b64(iv)}:${b64(cipher.getAuthTag())}:${b64(ciphertext)}`;
  }

  /** Unseal a sealed value; throws CredentialsUnreadableError when no key here sealed it or it was altered. */
  unseal(value: string, context: string): string {
    const m = ENVELOPE.exec(value);
    if (!m) throw new CredentialsUnreadableError('not a sealed value');
    const [, id, iv, tag, ciphertext] = m as unknown as [string, string, string, string, string];
    const key = this.#keys.get(id);
    if (!key)
      throw new CredentialsUnreadableError(
        `sealed under key ${id}, which is neither ${SECRET_KEY_ENV} (key ${this.id}) nor in ${PREVIOUS_SECRET_KEY_ENV}`,
      );
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new CredentialsUnreadableError(
        `sealed under key ${id} but it does not authenticate: it was altered, or moved to another server or header`,
      );
    }
  }

  /** Sealed under the current key (nothing to re-seal). */
  isCurrent(value: string): boolean {
    return sealedBy(value) === this.id;
  }
}

// One keyring per process: openStore installs the one its environment gives, and every store
// function that reads or writes credentials uses it (they take a transaction as readily as a database).
let installed: Keyring | null = null;

/** Make a keyring (or none) the one this process seals and unseals credentials with. */
export function useKeyring(keyring: Keyring | null): void {
  installed = keyring;
}

/** The keyring store functions use: the one the last openStore installed. */
export function currentKeyring(): Keyring | null {
  return installed;
}

/** Where the key comes from (config's secret key settings: the variables below, trimmed, empty as unset). */
export interface KeyringSources {
  /** MCP_FLEET_SECRET_KEY. */
  key?: string | undefined;
  /** MCP_FLEET_SECRET_KEY_FILE. */
  keyFile?: string | undefined;
  /** MCP_FLEET_SECRET_KEY_PREVIOUS: comma-separated. */
  previous?: string | undefined;
  /**
   * Embedded (one-machine) mode: where the key lives when the environment gives none, generated
   * (0600) on first use. Unset (Postgres): no key unless the environment gives one.
   */
  embeddedKeyFile?: string | undefined;
  log?: ((msg: string) => void) | undefined;
}

/**
 * The keyring its sources give: MCP_FLEET_SECRET_KEY or MCP_FLEET_SECRET_KEY_FILE, with
 * MCP_FLEET_SECRET_KEY_PREVIOUS for reading; in embedded mode, else the key file beside the
 * database (made on first use). Null when there is no key (Postgres without one).
 */
export function loadKeyring(sources: KeyringSources = {}): Keyring | null {
  const inline = sources.key?.trim() || undefined;
  const file = sources.keyFile?.trim() || undefined;
  if (inline && file) throw new SecretKeyError(`set ${SECRET_KEY_ENV} or ${SECRET_KEY_FILE_ENV}, not both`);
  const previous = (sources.previous ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .map((k, i) => parseSecretKey(k, `${PREVIOUS_SECRET_KEY_ENV} (key ${i + 1})`));

  if (inline || file) {
    const current = inline ? parseSecretKey(inline, SECRET_KEY_ENV) : readKeyFile(file!, SECRET_KEY_FILE_ENV);
    // Moving from the generated key to one of your own: what the generated key sealed still unseals
    // (and control re-seals it under the new key).
    const generated = sources.embeddedKeyFile ? readKeyFileIfAny(sources.embeddedKeyFile) : undefined;
    return new Keyring(current, {
      previous: generated ? [...previous, generated] : previous,
      source: inline ? SECRET_KEY_ENV : `${SECRET_KEY_FILE_ENV} (${file})`,
    });
  }
  if (sources.embeddedKeyFile) {
    const path = sources.embeddedKeyFile;
    const key = readKeyFileIfAny(path, sources.log) ?? generateKeyFile(path, sources.log);
    return new Keyring(key, { previous, source: `key file ${path}` });
  }
  if (previous.length) throw new SecretKeyError(`${PREVIOUS_SECRET_KEY_ENV} is set but ${SECRET_KEY_ENV} is not`);
  return null;
}

function readKeyFile(path: string, what: string): Buffer {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new SecretKeyError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  return parseSecretKey(text, `the key in ${path}`);
}

function readKeyFileIfAny(path: string, log?: KeyringSources['log']): Buffer | undefined {
  try {
    // Anyone who can read the key can read every stored credential: say so when others may.
    if ((statSync(path).mode & 0o077) !== 0) log?.(`store: WARNING: ${path} is readable by others; chmod 600 it`);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
  }
  return readKeyFile(path, 'the key file');
}

function generateKeyFile(path: string, log: KeyringSources['log']): Buffer {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const text = generateSecretKey();
  try {
    // wx: two processes starting together keep one key, the first one written.
    writeFileSync(path, `${text}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readKeyFile(path, 'the key file');
    throw new SecretKeyError(`cannot write the key file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  log?.(
    `store: generated the key that seals stored credentials: ${path} (back it up; without it stored credentials are lost)`,
  );
  return parseSecretKey(text, path);
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** What a header value's seal is bound to: the server's origin and the header's name. */
function headerContext(url: string, name: string): string {
  return `mcp-fleet header\0${originOf(url)}\0${name}`;
}

/** What a URL's seal is bound to: its origin, which its display form shows too. */
function urlContext(url: string): string {
  return `mcp-fleet url\0${originOf(url)}`;
}

/**
 * A server's URL for the database. One without credentials is stored as written, `urlSealed` null.
 * One with credentials (a user name, password or query values: the probe's rule) is stored in its
 * display form, each credential masked, and sealed whole beside it, bound to its origin.
 */
export function sealUrl(
  url: string,
  keyring: Keyring | null = currentKeyring(),
): { url: string; urlSealed: string | null } {
  if (!hasUrlCredentials(url)) return { url, urlSealed: null };
  if (!keyring)
    throw new SecretKeyError(
      `storing a URL with credentials (a user name, password or query values) needs ${SECRET_KEY_ENV}: ${KEY_HINT}. ` +
        'Credentials are never stored in plaintext.',
    );
  return { url: maskUrl(url), urlSealed: keyring.seal(url, urlContext(url)) };
}

/**
 * The URL a probe goes to: unsealed from its seal, or the stored one when there is none (no
 * credentials, or a row from before URLs were sealed, which control seals at start).
 */
export function unsealUrl(
  stored: string,
  sealed: string | null,
  server: string,
  keyring: Keyring | null = currentKeyring(),
): string {
  if (sealed === null) return stored;
  if (!keyring)
    throw new SecretKeyError(
      `the URL of server ${JSON.stringify(server)} is sealed, and ${SECRET_KEY_ENV} is not set (${KEY_HINT})`,
    );
  try {
    return keyring.unseal(sealed, urlContext(stored));
  } catch (err) {
    throw new CredentialsUnreadableError(`the URL of server ${JSON.stringify(server)}: ${(err as Error).message}`);
  }
}

/** Whether a stored URL should be sealed (again): credentials in the clear, or sealed under an older key. */
export function urlNeedsSeal(stored: string, sealed: string | null, keyring: Keyring): boolean {
  return sealed === null ? hasUrlCredentials(stored) : !keyring.isCurrent(sealed);
}

/** Seal every value of a server's headers for the database. Without a keyring, only no headers can be stored. */
export function sealHeaders(
  headers: Record<string, string>,
  url: string,
  keyring: Keyring | null = currentKeyring(),
): Record<string, string> {
  return sealEach(headers, (name) => headerContext(url, name), keyring, "a server's headers (credentials)");
}

/**
 * Unseal a server's stored headers. Plaintext values (written before encryption) pass as they are;
 * sealed ones need the key that sealed them. `server` names the server in errors.
 */
export function unsealHeaders(
  stored: Record<string, string>,
  url: string,
  server: string,
  keyring: Keyring | null = currentKeyring(),
): Record<string, string> {
  return unsealEach(stored, (name) => headerContext(url, name), keyring, {
    plaintextPasses: true,
    noKey: `the credentials of server ${JSON.stringify(server)} are sealed`,
    which: (name) => `header ${JSON.stringify(name)} of server ${JSON.stringify(server)}`,
  });
}

/** Whether stored headers should be sealed again: plaintext, or sealed under an older key. */
export function needsReseal(stored: Record<string, string>, keyring: Keyring): boolean {
  return Object.values(stored).some((v) => !keyring.isCurrent(v));
}

/** What a stdio server's env value's seal is bound to: its program and the variable's name. */
function envContext(command: string, name: string): string {
  return `mcp-fleet env\0${command}\0${name}`;
}

/**
 * Seal a stdio server's environment for the database, as header values are (issue 20): values may
 * be secrets. Bound to the program and the variable's name, so a value moved to another server's
 * command or another variable does not unseal. Without a keyring, only an empty environment can be stored.
 */
export function sealEnv(
  env: Record<string, string>,
  command: string,
  keyring: Keyring | null = currentKeyring(),
): Record<string, string> {
  return sealEach(
    env,
    (name) => envContext(command, name),
    keyring,
    "a stdio server's env (values may be credentials)",
  );
}

/** Unseal a stdio server's stored environment (always sealed); `server` names the server in errors (never a value). */
export function unsealEnv(
  stored: Record<string, string>,
  command: string,
  server: string,
  keyring: Keyring | null = currentKeyring(),
): Record<string, string> {
  return unsealEach(stored, (name) => envContext(command, name), keyring, {
    plaintextPasses: false,
    noKey: `the env of server ${JSON.stringify(server)} is sealed`,
    which: (name) => `env ${JSON.stringify(name)} of server ${JSON.stringify(server)}`,
  });
}

/** Seal each value of a map of secrets (header or env values), each bound to its own context. */
function sealEach(
  values: Record<string, string>,
  context: (name: string) => string,
  keyring: Keyring | null,
  what: string,
): Record<string, string> {
  const names = Object.keys(values);
  if (names.length === 0) return {};
  if (!keyring)
    throw new SecretKeyError(
      `storing ${what} needs ${SECRET_KEY_ENV}: ${KEY_HINT}. Credentials are never stored in plaintext.`,
    );
  return Object.fromEntries(names.map((name) => [name, keyring.seal(values[name]!, context(name))]));
}

/**
 * Unseal each value of a stored map. `plaintextPasses`: values stored before sealing began (headers)
 * pass as they are; env was sealed from the start, so a plaintext value there fails like a bad seal.
 */
function unsealEach(
  stored: Record<string, string>,
  context: (name: string) => string,
  keyring: Keyring | null,
  say: { plaintextPasses: boolean; noKey: string; which: (name: string) => string },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(stored)) {
    if (say.plaintextPasses && !isSealed(value)) {
      out[name] = value;
      continue;
    }
    if (!keyring) throw new SecretKeyError(`${say.noKey}, and ${SECRET_KEY_ENV} is not set (${KEY_HINT})`);
    try {
      out[name] = keyring.unseal(value, context(name));
    } catch (err) {
      throw new CredentialsUnreadableError(`${say.which(name)}: ${(err as Error).message}`);
    }
  }
  return out;
}
