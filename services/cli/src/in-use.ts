// What a command takes before it starts anything — the ports it will listen on, the embedded
// database directory — tried first: a port in use, an address this machine does not have, or a
// second `up` on the same directory is the operator's to fix (exit 2, naming what to set), not a
// crash after half the monitor has started. The same words explain a listen that fails later
// anyway (another process took the port in between).
import { createServer } from 'node:net';
// The lock's own file, not the store: an agent checks its ports here and has no database to load.
import { assertDataDirFree, DataDirInUseError } from '@mcp-fleet/store/data-dir-lock';

/** An address a command listens on, and the setting that moves it. */
export interface Listener {
  /** `control's API`, `the dashboard`, `agent eu-west's /metrics`. */
  what: string;
  host: string;
  port: number;
  /** What to set to move it: `MCP_FLEET_API_PORT`, `PORT`, `--metrics-port or MCP_FLEET_AGENT_PORT`. */
  setting: string;
  /** What to set to move its address: `MCP_FLEET_API_HOST`, `MCP_FLEET_WEB_HOST` (none: fixed). */
  hostSetting?: string;
}

/** Something the operator set up is already taken: a port, an embedded database directory. Exit 2. */
export class InUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InUseError';
  }
}

/**
 * Throws InUseError when the embedded database directory (unset: Postgres, nothing to check) is
 * held by a live process, or when any listener cannot listen now; takes and binds nothing.
 */
export async function assertFree(opts: {
  dataDir?: string | undefined;
  listeners: readonly Listener[];
}): Promise<void> {
  if (opts.dataDir !== undefined) {
    try {
      assertDataDirFree(opts.dataDir);
    } catch (err) {
      throw inUse(err) ?? err;
    }
  }
  await assertCanListen(opts.listeners);
}

/** The InUseError behind a failure to start, if it is one (a failed listen of `listeners`, a held directory). */
export function inUse(err: unknown, listeners: readonly Listener[] = []): InUseError | undefined {
  if (err instanceof InUseError) return err;
  if (err instanceof DataDirInUseError) {
    const who = typeof err.holder === 'number' ? `process ${err.holder}` : err.holder;
    return new InUseError(
      `the embedded database in ${err.dir} is in use by ${who} (mcp-fleet is already running on it?). ` +
        'Stop that one, or give this one its own directory with --data-dir <dir> (or DATABASE_URL for a shared Postgres).',
    );
  }
  return listenRefusal(err, listeners);
}

/** Throws InUseError naming every listener that cannot listen now (and what to set); binds nothing. */
async function assertCanListen(listeners: readonly Listener[]): Promise<void> {
  const refusals: string[] = [];
  for (const l of listeners) {
    const code = await tryListen(l.host, l.port);
    if (code) refusals.push(refusal(l, code));
  }
  if (refusals.length) throw new InUseError(refusals.join('\n'));
}

/** The InUseError a failed listen means, when it is one of `listeners`' (undefined: not ours to explain). */
function listenRefusal(err: unknown, listeners: readonly Listener[]): InUseError | undefined {
  const e = err as { code?: unknown; port?: unknown; syscall?: unknown };
  if (e?.syscall !== 'listen' || typeof e.code !== 'string') return undefined;
  const l = listeners.find((x) => x.port === e.port);
  return l ? new InUseError(refusal(l, e.code)) : undefined;
}

function refusal(l: Listener, code: string): string {
  const where = `${l.what} cannot listen on ${l.host.includes(':') ? `[${l.host}]` : l.host}:${l.port}`;
  if (code === 'EADDRINUSE')
    return `${where}: the port is in use (another mcp-fleet, or another program). Stop it, or set ${l.setting} to a free port.`;
  if (code === 'EACCES') return `${where}: ports below 1024 need privileges. Set ${l.setting} to a port above 1023.`;
  if (code === 'EADDRNOTAVAIL')
    return `${where}: this machine has no such address.${l.hostSetting ? ` Set ${l.hostSetting} to one of its addresses.` : ''}`;
  return `${where}: ${code}. Check ${[l.setting, l.hostSetting].filter(Boolean).join(' and ')}.`;
}

/** The error code binding `host:port` fails with, or undefined when it binds (released at once). */
function tryListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    // exclusive: a cluster worker must not share a primary's handle and report the port free.
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}
