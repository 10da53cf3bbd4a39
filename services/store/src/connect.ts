// Opening the database: Postgres through a pg pool when a URL is given, otherwise embedded PGlite
// in a directory. Both get the same drizzle schema and the same migrations from /migrations.
// Opening also settles the key that seals stored credentials (credentials.ts), and Postgres TLS.
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { type Keyring, type KeyringSources, loadKeyring, useKeyring } from '@mcp-fleet/auth';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { lockDataDir } from './data-dir-lock';
import type { Db } from './db';
import * as schema from './schema';
import { openSessionConnection, type SessionConnection } from './session';

export interface StoreOptions {
  /** `postgres://…`; unset = embedded PGlite under `dataDir`. */
  databaseUrl?: string | undefined;
  /** PGlite's directory, created if missing. Default `./.mcp-fleet/pgdata`. */
  dataDir?: string | undefined;
  /**
   * PGlite's first start applies the migrations with initdb (default). False: it only creates the
   * cluster, and the migrations are the caller's (a test of one migration over an older schema).
   */
  firstStartMigrates?: boolean | undefined;
  /**
   * PGlite's shared_buffers (e.g. `64MB`). Its buffer pool lives in the process's own memory;
   * unset = EMBEDDED_SHARED_BUFFERS. Postgres servers keep their own configuration.
   */
  sharedBuffers?: string | undefined;
  /** Postgres pool size (default 10). */
  poolSize?: number | undefined;
  /** PGPASSWORD: the password for a URL without one (as libpq reads it). */
  password?: string | undefined;
  /**
   * libpq's TLS parameters where the URL does not set them (config's database settings: PGSSLMODE,
   * DATABASE_CA / DATABASE_CERT / DATABASE_KEY or libpq's PGSSLROOTCERT / PGSSLCERT / PGSSLKEY).
   */
  tls?: TlsSettings | undefined;
  /** Where the key sealing stored credentials comes from: MCP_FLEET_SECRET_KEY (or _FILE) and _PREVIOUS. */
  secretKey?: Pick<KeyringSources, 'key' | 'keyFile' | 'previous'> | undefined;
  /**
   * The keyring for stored credentials, instead of `secretKey`'s (null: none). Without either,
   * embedded mode makes a key file beside its directory (`./.mcp-fleet/secret.key`); Postgres has none.
   */
  keyring?: Keyring | null | undefined;
  log?: ((msg: string) => void) | undefined;
}

export interface Store {
  kind: 'postgres' | 'pglite';
  /** Where the data lives, safe to print: `127.0.0.1:5432/mcpfleet` or the PGlite directory. */
  where: string;
  /** Postgres: the TLS mode (`off`, `verify-full`, …); PGlite: `none` (no network). */
  tls: string;
  /** What seals stored credentials (also this process's keyring); null = no key, so no credentials can be stored. */
  keyring: Keyring | null;
  db: Db;
  /** Apply the migrations in /migrations that this database has not seen yet. */
  migrate(): Promise<void>;
  /**
   * Postgres: a new session of its own, outside the pool, with TCP keepalives (session.ts); the
   * caller ends it. PGlite: null (one process, one connection: there is no other session to be).
   */
  openSession(): Promise<SessionConnection | null>;
  close(): Promise<void>;
}

export const DEFAULT_DATA_DIR = './.mcp-fleet/pgdata';

/**
 * The repository's /migrations, found from this file so any working directory will do. A path
 * join rather than `new URL(…, import.meta.url)`, which bundlers (the dashboard's) take for an asset.
 */
export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'migrations');

/**
 * The embedded database's shared_buffers unless told otherwise. PGlite's buffer pool is memory of
 * the monitor's own process (a WebAssembly memory, which never shrinks once grown), and Postgres's
 * 128MB default fills with pages as the runs table grows: a one-machine monitor's working set (the
 * latest runs, the fleet) fits in far less, and the OS page cache still holds the files. 16MB is
 * part of what keeps `npm start` under its memory goal (bench:memory); a larger fleet can raise it
 * (StoreOptions.sharedBuffers). Not yet measured: the dashboard's reads at 16MB on a large store.
 */
export const EMBEDDED_SHARED_BUFFERS = '16MB';

/** The first start's helper process (pglite-first-start.mjs): a path join, as for MIGRATIONS_DIR. */
const FIRST_START_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'pglite-first-start.mjs');

/** Any number, as long as every mcp-fleet process migrating the same database uses it. */
const MIGRATION_LOCK = 0x6d6366_6c74; // "mcflt"

/** The embedded mode's generated key: beside the database directory (`./.mcp-fleet/secret.key` by default). */
export function embeddedKeyFile(dataDir: string): string {
  return join(dirname(resolve(dataDir)), 'secret.key');
}

/** libpq's TLS parameters, each added to the URL where it does not set it. */
export interface TlsSettings {
  sslrootcert?: string | undefined;
  sslcert?: string | undefined;
  sslkey?: string | undefined;
  sslmode?: string | undefined;
}

export async function openStore(opts: StoreOptions = {}): Promise<Store> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts) : openPglite(opts.dataDir ?? DEFAULT_DATA_DIR, opts);
}

/** The keyring for stored credentials, installed as this process's (see credentials.ts). */
function settleKeyring(opts: StoreOptions, keyFile: string | undefined): Keyring | null {
  const keyring =
    opts.keyring !== undefined
      ? opts.keyring
      : loadKeyring({ ...opts.secretKey, embeddedKeyFile: keyFile, log: opts.log });
  useKeyring(keyring);
  if (keyring) opts.log?.(`store: stored credentials sealed with key ${keyring.id} (${keyring.source})`);
  else opts.log?.('store: no MCP_FLEET_SECRET_KEY: servers with headers (credentials) cannot be stored');
  return keyring;
}

/** libpq's TLS parameters, and what each is. */
const TLS_PARAMS: [param: keyof TlsSettings, what: string][] = [
  ['sslrootcert', 'CA certificate'],
  ['sslcert', 'client certificate'],
  ['sslkey', 'client key'],
  ['sslmode', 'mode'],
];

/**
 * The connection string with the environment's TLS settings added where the URL has none, and
 * the TLS mode it asks for. Certificate files without a mode mean `verify-full`. Modes follow
 * node-postgres: `require`, `prefer` and `verify-ca` verify the certificate and host name like
 * `verify-full` (unless the URL says `uselibpqcompat=true`); `no-verify` encrypts without checking;
 * `disable` (or no TLS settings at all) connects in the clear.
 */
export function postgresConnection(url: string, tlsSettings: TlsSettings = {}): { url: string; tls: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { url, tls: 'unknown' };
  }
  let changed = false;
  for (const [param] of TLS_PARAMS) {
    if (u.searchParams.has(param)) continue;
    const value = tlsSettings[param]?.trim();
    if (value) {
      u.searchParams.set(param, value);
      changed = true;
    }
  }
  const files = TLS_PARAMS.filter(([param]) => param !== 'sslmode' && u.searchParams.has(param));
  if (files.length && !u.searchParams.has('sslmode') && !u.searchParams.has('ssl')) {
    u.searchParams.set('sslmode', 'verify-full');
    changed = true;
  }
  for (const [param, what] of files) {
    const path = u.searchParams.get(param)!;
    try {
      accessSync(path, constants.R_OK);
    } catch (err) {
      throw new Error(
        `cannot read the Postgres TLS ${what} ${path} (${param}): ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
  }
  const ssl = u.searchParams.get('ssl');
  const mode =
    u.searchParams.get('sslmode') ??
    (ssl === 'true' || ssl === '1' ? 'verify-full' : ssl === null || ssl === 'false' || ssl === '0' ? 'off' : ssl);
  return { url: changed ? u.toString() : url, tls: mode === 'disable' ? 'off' : mode };
}

async function openPostgres(rawUrl: string, opts: StoreOptions): Promise<Store> {
  const keyring = settleKeyring(opts, undefined);
  const where = describeUrl(rawUrl);
  // A URL without a password takes PGPASSWORD (or the file PGPASSWORD_FILE names), as libpq does.
  const fromEnv = passwordOf(rawUrl) === undefined ? opts.password || undefined : undefined;
  const secret = passwordOf(rawUrl) ?? fromEnv;
  const { url, tls } = postgresConnection(fromEnv ? withPassword(rawUrl, fromEnv) : rawUrl, opts.tls);
  const pool = new pg.Pool({
    connectionString: url,
    // No TLS settings anywhere: say so, rather than let pg read PGSSLMODE from another environment.
    ...(tls === 'off' ? { ssl: false } : {}),
    max: opts.poolSize ?? 10,
    connectionTimeoutMillis: 10_000,
    // pg closes a client idle for 10 s by default: a pool used in bursts (ingest batches, a
    // scheduling tick, a scrape) then opens a backend again at every burst, and each new backend
    // costs Postgres a fork, authentication and cold catalog caches. Keep them for five minutes.
    idleTimeoutMillis: 300_000,
  });
  // A client losing its connection must not crash the process. The pool listens on idle clients;
  // a checked-out one (a transaction between two statements, when Postgres stops) has no listener,
  // and its 'error' would throw: give each one a listener on first checkout. The statement fails
  // anyway (ingest naks its result and it comes back) and the pool drops the client on release.
  const lost = (err: Error) => opts.log?.(`store: postgres connection lost (${where}): ${hide(reason(err), secret)}`);
  pool.on('error', lost);
  const listened = new WeakSet<object>();
  pool.on('acquire', (client) => {
    if (listened.has(client)) return;
    listened.add(client);
    client.on('error', lost);
  });
  try {
    await pool.query('select 1');
  } catch (err) {
    await pool.end().catch(() => {});
    throw new Error(`cannot connect to Postgres at ${where}: ${hide(reason(err), secret)}`);
  }
  opts.log?.(`store: postgres at ${where} (TLS ${tls})`);
  const db = drizzlePg({ client: pool, schema });
  let closed = false;
  return {
    kind: 'postgres',
    where,
    tls,
    keyring,
    db,
    async migrate() {
      // Two processes starting together (`mcp-fleet up`, a rollout) must not both apply a migration:
      // drizzle's migrator takes no lock of its own.
      const client = await pool.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
        await migratePg(db, { migrationsFolder: MIGRATIONS_DIR });
      } finally {
        await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
        client.release();
      }
      opts.log?.('store: migrations applied');
    },
    openSession: () => openSessionConnection({ url, tls }),
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

async function openPglite(dataDir: string, opts: StoreOptions): Promise<Store> {
  const dir = resolve(dataDir);
  let client: PGlite;
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new Error(`cannot open the embedded database in ${dir}: ${reason(err)}`);
  }
  // The lock first: a second process on this directory is refused before it touches the key file.
  const unlock = lockDataDir(dir, opts.log);
  let keyring: Keyring | null;
  try {
    keyring = settleKeyring(opts, embeddedKeyFile(dir));
  } catch (err) {
    unlock();
    throw err;
  }
  // PGlite creates a cluster in an empty directory (initdb, then the migrations): seconds of
  // silence on a first start, so say what is happening and, once migrated, how long it took.
  let firstStart = existsSync(join(dir, 'PG_VERSION')) ? undefined : Date.now();
  if (firstStart) opts.log?.(`store: initialising the embedded database in ${dir} (first start)…`);
  const sharedBuffers = opts.sharedBuffers ?? EMBEDDED_SHARED_BUFFERS;
  try {
    // initdb and the first migrations in a process of their own: their memory leaves with it.
    if (firstStart) await firstStartElsewhere(dir, sharedBuffers, opts.firstStartMigrates !== false);
    client = await PGlite.create(dir, {
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`],
    });
  } catch (err) {
    unlock();
    throw new Error(`cannot open the embedded database in ${dir}: ${reason(err)}`);
  }
  if (!firstStart) opts.log?.(`store: embedded PGlite in ${dir}`);
  const db = drizzlePglite({ client, schema });
  return {
    kind: 'pglite',
    where: dir,
    tls: 'none',
    keyring,
    db,
    async migrate() {
      // The directory's lock and PGlite's single connection leave nothing to race the migrator.
      await migratePglite(db, { migrationsFolder: MIGRATIONS_DIR });
      opts.log?.(
        firstStart
          ? `store: database initialised in ${((Date.now() - firstStart) / 1000).toFixed(1)} s (migrations applied)`
          : 'store: migrations applied',
      );
      firstStart = undefined;
    },
    openSession: async () => null,
    async close() {
      if (!client.closed) await client.close();
      unlock();
    },
  };
}

/**
 * Initialise `dir` and apply the migrations in a short-lived node process (pglite-first-start.mjs),
 * so the WebAssembly memory they grow is returned to the system when it exits. Its own error
 * output, cut short, says why it failed.
 */
function firstStartElsewhere(dir: string, sharedBuffers: string, migrations: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [FIRST_START_SCRIPT, dir, migrations ? MIGRATIONS_DIR : '', sharedBuffers],
      { maxBuffer: 1024 * 1024 },
      (err, _stdout, stderr) => {
        if (!err) return resolve();
        const why = stderr.trim().split('\n').slice(-3).join(' ') || err.message;
        reject(new Error(`initialising failed: ${why.slice(0, 500)}`));
      },
    );
  });
}

/** `host:port/database` of a connection URL, never its user or password. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    const host = u.hostname || new URLSearchParams(u.search).get('host') || 'localhost';
    return `${host}:${u.port || '5432'}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return 'the DATABASE_URL (not a valid URL)';
  }
}

/** The URL with a password (pg takes a connection string's empty password over a `password` option). */
function withPassword(url: string, password: string): string {
  try {
    const u = new URL(url);
    u.password = encodeURIComponent(password);
    return u.toString();
  } catch {
    return url; // not a URL: the connection fails with its own error
  }
}

function passwordOf(url: string): string | undefined {
  try {
    const p = new URL(url).password;
    return p ? decodeURIComponent(p) : undefined;
  } catch {
    return undefined;
  }
}

function hide(message: string, secret: string | undefined): string {
  return secret ? message.split(secret).join('***') : message;
}

/** A readable reason; Node's dual-stack connect fails with an AggregateError whose message is empty. */
function reason(err: unknown): string {
  if (err instanceof AggregateError && !err.message) {
    const parts = err.errors.map((e) => (e instanceof Error ? e.message : String(e)));
    return [...new Set(parts)].join('; ') || 'connection failed';
  }
  if (err instanceof Error) return err.message || (err as { code?: string }).code || err.name;
  return String(err);
}
