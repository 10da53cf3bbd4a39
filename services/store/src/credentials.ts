// Named credentials (issue 18): request headers stored once, sealed, and referenced by id, so an
// MCP tool takes `mcpCredentialId` and a secret never passes through an agent's context. The secret
// flow has one rule: a credential is bound to one origin (scheme, host, port) and its headers are
// unsealed only for a URL on that origin; a URL anywhere else is refused before any request exists.
// Values never leave this file except as headers for such a URL: the list shows header names only.
//
// Each value is sealed with the process keyring (auth's keyring.ts) under a context naming the
// credential's id, its origin and the header's name: a sealed value copied to another credential,
// another origin or another header does not unseal.
import { randomUUID } from 'node:crypto';
import { CredentialsUnreadableError, currentKeyring, KEY_HINT, SECRET_KEY_ENV, SecretKeyError } from '@mcp-fleet/auth';
import { and, asc, count, eq, isNull } from 'drizzle-orm';
import type { Db } from './db';
import { pgCode, withoutParams } from './errors';
import { credentials, servers } from './schema';

/** A credential as anyone may see it: never a value. */
export interface CredentialView {
  id: string;
  name: string;
  /** The only origin its headers are sent to. */
  origin: string;
  /** Header names as given, sorted. */
  headerNames: string[];
  createdAt: Date;
  /** Live (not retired) servers whose headers were copied from it. */
  usedBy: number;
}

export interface CredentialInput {
  name: string;
  /** `scheme://host[:port]` (any URL's origin is taken by the caller). */
  origin: string;
  /** Header name → plaintext value; sealed here, never stored as given. */
  headers: Record<string, string>;
}

/** A credential id names nothing. */
export class UnknownCredentialError extends Error {
  constructor(readonly id: string) {
    super(`no credential ${id}`);
    this.name = 'UnknownCredentialError';
  }
}

/** A credential asked to go to a URL off its origin: refused, whatever the caller wanted. */
export class CredentialOriginError extends Error {
  constructor(
    readonly credential: { id: string; name: string; origin: string },
    readonly asked: string,
  ) {
    super(
      `credential ${JSON.stringify(credential.name)} is only sent to ${credential.origin}, not to ${asked}: ` +
        'a credential is never sent to another origin',
    );
    this.name = 'CredentialOriginError';
  }
}

/** Deleting a credential live servers still use. */
export class CredentialInUseError extends Error {
  constructor(
    readonly credential: { id: string; name: string },
    readonly servers: string[],
  ) {
    super(
      `credential ${JSON.stringify(credential.name)} is used by ${servers.length} server(s): ${servers.map((s) => JSON.stringify(s)).join(', ')}; ` +
        'give them other headers (or retire them) first',
    );
    this.name = 'CredentialInUseError';
  }
}

/** A second credential with the same name. */
export class DuplicateCredentialError extends Error {
  readonly code = '23505';
  constructor(name: string) {
    super(`a credential named ${JSON.stringify(name)} already exists`);
    this.name = 'DuplicateCredentialError';
  }
}

/** `scheme://host:port` of an http(s) URL or origin, or null (an opaque origin is none). */
export function credentialOrigin(url: string): string | null {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    return u.origin;
  } catch {
    return null;
  }
}

/** What one header value's seal is bound to. */
function context(id: string, origin: string, header: string): string {
  return `mcp-fleet credential\0${id}\0${origin}\0${header}`;
}

type Row = typeof credentials.$inferSelect;

function view(row: Row, usedBy: number): CredentialView {
  return {
    id: row.id,
    name: row.name,
    origin: row.origin,
    // Sorted: jsonb keeps its own key order, not the one given.
    headerNames: Object.keys(row.headers).sort(),
    createdAt: row.createdAt,
    usedBy,
  };
}

/** Store a credential, each value sealed. Without a keyring nothing is stored (SecretKeyError). */
export async function createCredential(db: Db, input: CredentialInput): Promise<CredentialView> {
  const origin = credentialOrigin(input.origin);
  if (origin === null) throw new Error(`a credential's origin is an http(s) origin, not ${input.origin}`);
  const names = Object.keys(input.headers);
  if (names.length === 0) throw new Error('a credential has at least one header');
  const keyring = currentKeyring();
  if (!keyring)
    throw new SecretKeyError(
      `storing a credential needs ${SECRET_KEY_ENV}: ${KEY_HINT}. Credentials are never stored in plaintext.`,
    );
  // The id is chosen here, before the insert, so that every seal can be bound to it.
  const id = randomUUID();
  const headers = Object.fromEntries(
    names.map((name) => [name, keyring.seal(input.headers[name]!, context(id, origin, name))]),
  );
  try {
    const [row] = await db.insert(credentials).values({ id, name: input.name, origin, headers }).returning();
    return view(row!, 0);
  } catch (err) {
    if (pgCode(err) === '23505') throw new DuplicateCredentialError(input.name);
    throw withoutParams(err);
  }
}

const liveUse = (id: string) => and(eq(servers.credentialId, id), isNull(servers.retiredAt));

/** Every credential, by name, with how many live servers use it; never a value. */
export async function listCredentials(db: Db): Promise<CredentialView[]> {
  const rows = await db.select().from(credentials).orderBy(asc(credentials.name));
  const uses = await db
    .select({ id: servers.credentialId, n: count() })
    .from(servers)
    .where(isNull(servers.retiredAt))
    .groupBy(servers.credentialId);
  const used = new Map(uses.map((u) => [u.id, Number(u.n)]));
  return rows.map((r) => view(r, used.get(r.id) ?? 0));
}

/** One credential (never a value), or null. */
export async function getCredential(db: Db, id: string): Promise<CredentialView | null> {
  const [row] = await db.select().from(credentials).where(eq(credentials.id, id));
  if (!row) return null;
  const [used] = await db.select({ n: count() }).from(servers).where(liveUse(id));
  return view(row, Number(used?.n ?? 0));
}

/**
 * The credential's headers, unsealed, for a request to `url`. The secret-flow rule: refused with
 * CredentialOriginError when `url` is not on the credential's origin, before anything is unsealed.
 * UnknownCredentialError when the id names nothing; SecretKeyError / CredentialsUnreadableError
 * when the keys at hand cannot unseal it.
 */
export async function credentialHeadersFor(
  db: Db,
  id: string,
  url: string,
): Promise<{ credential: { id: string; name: string; origin: string }; headers: Record<string, string> }> {
  const [row] = await db.select().from(credentials).where(eq(credentials.id, id));
  if (!row) throw new UnknownCredentialError(id);
  const credential = { id: row.id, name: row.name, origin: row.origin };
  const asked = credentialOrigin(url);
  if (asked === null || asked !== row.origin) throw new CredentialOriginError(credential, asked ?? url);
  const keyring = currentKeyring();
  if (!keyring)
    throw new SecretKeyError(
      `credential ${JSON.stringify(row.name)} is sealed, and ${SECRET_KEY_ENV} is not set (${KEY_HINT})`,
    );
  const headers: Record<string, string> = {};
  for (const [name, sealed] of Object.entries(row.headers)) {
    try {
      headers[name] = keyring.unseal(sealed, context(row.id, row.origin, name));
    } catch (err) {
      throw new CredentialsUnreadableError(
        `header ${JSON.stringify(name)} of credential ${JSON.stringify(row.name)}: ${(err as Error).message}`,
      );
    }
  }
  return { credential, headers };
}

/**
 * Delete a credential; false when there is none. Refused (CredentialInUseError, naming them) while
 * live servers use it; retired servers keep their own sealed copy of its headers and lose the link.
 */
export function deleteCredential(db: Db, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(credentials).where(eq(credentials.id, id)).for('update');
    if (!row) return false;
    const users = await tx
      .select({ name: servers.name })
      .from(servers)
      .where(liveUse(id))
      .orderBy(asc(servers.name))
      .for('update');
    if (users.length)
      throw new CredentialInUseError(
        row,
        users.map((u) => u.name),
      );
    await tx.update(servers).set({ credentialId: null }).where(eq(servers.credentialId, id));
    await tx.delete(credentials).where(eq(credentials.id, id));
    return true;
  });
}

/** Record which credential a server's headers were copied from (null: headers given directly). */
export async function setServerCredential(db: Db, serverId: string, credentialId: string | null): Promise<void> {
  try {
    await db.update(servers).set({ credentialId }).where(eq(servers.id, serverId));
  } catch (err) {
    // Deleted between reading its headers and this write.
    if (credentialId !== null && pgCode(err) === '23503') throw new UnknownCredentialError(credentialId);
    throw withoutParams(err);
  }
}

/** The credential a server's headers came from, as GET /api/servers/:id names it. */
export async function serverCredential(
  db: Db,
  serverId: string,
): Promise<{ credentialId: string | null; credentialName: string | null }> {
  const [row] = await db
    .select({ id: credentials.id, name: credentials.name })
    .from(servers)
    .innerJoin(credentials, eq(credentials.id, servers.credentialId))
    .where(eq(servers.id, serverId));
  return { credentialId: row?.id ?? null, credentialName: row?.name ?? null };
}

/** What resealCredentials did. */
export interface CredentialResealReport {
  /** Credentials sealed again under the current key. */
  resealed: string[];
  /** Credentials no key at hand unseals (they stay as they are). */
  unreadable: { id: string; name: string; reason: string }[];
}

/**
 * Bring every credential under the current key, as sealStoredCredentials does for servers (for
 * control to run at start, beside it): a value sealed under MCP_FLEET_SECRET_KEY_PREVIOUS is
 * sealed again, so the previous key can be dropped. Without a key it throws SecretKeyError when
 * any credential is stored.
 */
export async function resealCredentials(db: Db): Promise<CredentialResealReport> {
  const keyring = currentKeyring();
  return db.transaction(async (tx) => {
    const rows = await tx.select().from(credentials).orderBy(asc(credentials.name)).for('update');
    const report: CredentialResealReport = { resealed: [], unreadable: [] };
    if (rows.length === 0) return report;
    if (!keyring)
      throw new SecretKeyError(
        `${rows.length} named credential(s) are stored and ${SECRET_KEY_ENV} is not set: set it (${KEY_HINT}), the key they were sealed with`,
      );
    for (const row of rows) {
      if (Object.values(row.headers).every((v) => keyring.isCurrent(v))) continue;
      try {
        const headers = Object.fromEntries(
          Object.entries(row.headers).map(([name, sealed]) => {
            const ctx = context(row.id, row.origin, name);
            return [name, keyring.seal(keyring.unseal(sealed, ctx), ctx)];
          }),
        );
        await tx.update(credentials).set({ headers }).where(eq(credentials.id, row.id));
        report.resealed.push(row.name);
      } catch (err) {
        report.unreadable.push({ id: row.id, name: row.name, reason: (err as Error).message });
      }
    }
    return report;
  });
}
