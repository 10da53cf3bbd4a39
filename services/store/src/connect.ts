// Opening the database: Postgres through a pg pool when a URL is given, otherwise embedded PGlite
// in a directory. Both get the same drizzle schema and the same migrations from /migrations.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import type { Db } from './db';
import * as schema from './schema';

export interface StoreOptions {
  /** `postgres://…`; unset = embedded PGlite under `dataDir`. */
  databaseUrl?: string | undefined;
  /** PGlite's directory, created if missing. Default `./.mcp-fleet/pgdata`. */
  dataDir?: string | undefined;
  /**
   * PGlite's shared_buffers (e.g. `16MB`). Its buffer pool lives in the process's own memory;
   * unset = Postgres's default, 128MB. Postgres servers keep their own configuration.
   */
  sharedBuffers?: string | undefined;
  /** Postgres pool size (default 10). */
  poolSize?: number | undefined;
  log?: ((msg: string) => void) | undefined;
}

export interface Store {
  kind: 'postgres' | 'pglite';
  /** Where the data lives, safe to print: `127.0.0.1:5432/mcpfleet` or the PGlite directory. */
  where: string;
  db: Db;
  /** Apply the migrations in /migrations that this database has not seen yet. */
  migrate(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_DATA_DIR = './.mcp-fleet/pgdata';

/**
 * The repository's /migrations, found from this file so any working directory will do. A path
 * join rather than `new URL(…, import.meta.url)`, which bundlers (the dashboard's) take for an asset.
 */
export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'migrations');

/** Any number, as long as every mcp-fleet process migrating the same database uses it. */
const MIGRATION_LOCK = 0x6d6366_6c74; // "mcflt"

export async function openStore(opts: StoreOptions = {}): Promise<Store> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts) : openPglite(opts.dataDir ?? DEFAULT_DATA_DIR, opts);
}

async function openPostgres(url: string, opts: StoreOptions): Promise<Store> {
  const where = describeUrl(url);
  const secret = passwordOf(url);
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10, connectionTimeoutMillis: 10_000 });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', (err) => opts.log?.(`store: postgres connection lost (${where}): ${hide(reason(err), secret)}`));
  try {
    await pool.query('select 1');
  } catch (err) {
    await pool.end().catch(() => {});
    throw new Error(`cannot connect to Postgres at ${where}: ${hide(reason(err), secret)}`);
  }
  opts.log?.(`store: postgres at ${where}`);
  const db = drizzlePg({ client: pool, schema });
  let closed = false;
  return {
    kind: 'postgres',
    where,
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
  const unlock = lockDataDir(dir, opts.log);
  try {
    const startParams = opts.sharedBuffers
      ? [...PGlite.defaultStartParams, '-c', `shared_buffers=${opts.sharedBuffers}`]
      : undefined;
    client = await PGlite.create(dir, startParams ? { startParams } : {});
  } catch (err) {
    unlock();
    throw new Error(`cannot open the embedded database in ${dir}: ${reason(err)}`);
  }
  opts.log?.(`store: embedded PGlite in ${dir}`);
  const db = drizzlePglite({ client, schema });
  return {
    kind: 'pglite',
    where: dir,
    db,
    async migrate() {
      // The directory's lock and PGlite's single connection leave nothing to race the migrator.
      await migratePglite(db, { migrationsFolder: MIGRATIONS_DIR });
      opts.log?.('store: migrations applied');
    },
    async close() {
      if (!client.closed) await client.close();
      unlock();
    },
  };
}

const lockedHere = new Set<string>();

/**
 * PGlite takes no lock of its own, and two processes on one directory corrupt it: a lock file
 * beside the directory (whose contents are Postgres's own) names the process holding it.
 * A lock whose process is gone, or from another host (a recreated container), is taken over.
 */
function lockDataDir(dir: string, log: StoreOptions['log']): () => void {
  const lockPath = `${dir}.lock`;
  const refuse = (holder: string) =>
    new Error(
      `the embedded database in ${dir} is in use by ${holder}; one process at a time may open it ` +
        `(set DATABASE_URL to share a Postgres database, or delete ${lockPath} if that process is gone)`,
    );
  if (lockedHere.has(dir)) throw refuse('this process');
  const me = { pid: process.pid, host: hostname() };
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lockPath, JSON.stringify(me), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) {
        throw new Error(`cannot lock the embedded database in ${dir}: ${reason(err)}`);
      }
      const holder = readLock(lockPath);
      if (holder && holder.host === me.host && holder.pid !== me.pid && alive(holder.pid)) {
        throw refuse(`process ${holder.pid}`);
      }
      // An empty lock may be another process between creating and writing it.
      if (!holder && ageMs(lockPath) < 10_000) throw refuse('another process');
      log?.(`store: taking over a stale lock on ${dir}`);
      rmSync(lockPath, { force: true });
    }
  }
  lockedHere.add(dir);
  const release = () => {
    if (!lockedHere.delete(dir)) return;
    if (readLock(lockPath)?.pid === me.pid) rmSync(lockPath, { force: true });
    process.off('exit', release);
  };
  // A crash leaves the file behind (taken over next time); a normal exit removes it.
  process.on('exit', release);
  return release;
}

function readLock(path: string): { pid: number; host: string } | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; host?: unknown };
    return typeof v.pid === 'number' && typeof v.host === 'string' ? { pid: v.pid, host: v.host } : undefined;
  } catch {
    return undefined;
  }
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
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
