// One process at a time on an embedded database directory. PGlite takes no lock of its own, and
// two processes on one directory corrupt it: a lock file beside the directory (whose contents are
// Postgres's own) names the process holding it. A lock whose process is gone, or from another host
// (a recreated container), is taken over. The same reading answers "is it free?" before a command
// starts anything (`mcp-fleet up` run twice), so the refusal comes before any port or process.
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';

/** The embedded database directory is held by another process (or this one). */
export class DataDirInUseError extends Error {
  constructor(
    /** The directory, absolute. */
    readonly dir: string,
    /** Who holds it: a pid, or `this process` / `another process` when no pid can be said. */
    readonly holder: number | 'this process' | 'another process',
    readonly lockPath: string,
  ) {
    const who = typeof holder === 'number' ? `process ${holder}` : holder;
    super(
      `the embedded database in ${dir} is in use by ${who}; one process at a time may open it ` +
        `(set DATABASE_URL to share a Postgres database, or delete ${lockPath} if that process is gone)`,
    );
    this.name = 'DataDirInUseError';
  }
}

const lockedHere = new Set<string>();
/** An empty lock this young may be another process between creating and writing it. */
const FRESH_EMPTY_LOCK_MS = 10_000;

export function lockPathOf(dir: string): string {
  return `${resolve(dir)}.lock`;
}

/** Throws DataDirInUseError when a live process holds `dir`; takes nothing. */
export function assertDataDirFree(dataDir: string): void {
  const dir = resolve(dataDir);
  const holder = liveHolder(dir);
  if (holder !== undefined) throw new DataDirInUseError(dir, holder, lockPathOf(dir));
}

/** Takes `dir` for this process (DataDirInUseError if held); the answer releases it. */
export function lockDataDir(dataDir: string, log?: (msg: string) => void): () => void {
  const dir = resolve(dataDir);
  const lockPath = lockPathOf(dir);
  const me = { pid: process.pid, host: hostname() };
  for (let attempt = 0; ; attempt++) {
    const holder = liveHolder(dir);
    if (holder !== undefined) throw new DataDirInUseError(dir, holder, lockPath);
    try {
      writeFileSync(lockPath, JSON.stringify(me), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) {
        throw new Error(`cannot lock the embedded database in ${dir}: ${(err as Error).message}`);
      }
      // Not held by a live process (checked above): a stale lock.
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

/** Who holds `dir` now, if anyone alive does. */
function liveHolder(dir: string): DataDirInUseError['holder'] | undefined {
  if (lockedHere.has(dir)) return 'this process';
  const lockPath = lockPathOf(dir);
  let raw: string;
  try {
    raw = readFileSync(lockPath, 'utf8');
  } catch {
    return undefined; // no lock
  }
  const holder = parseLock(raw);
  if (!holder) return ageMs(lockPath) < FRESH_EMPTY_LOCK_MS ? 'another process' : undefined;
  return holder.host === hostname() && holder.pid !== process.pid && alive(holder.pid) ? holder.pid : undefined;
}

function readLock(path: string): { pid: number; host: string } | undefined {
  try {
    return parseLock(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

function parseLock(raw: string): { pid: number; host: string } | undefined {
  try {
    const v = JSON.parse(raw) as { pid?: unknown; host?: unknown };
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
