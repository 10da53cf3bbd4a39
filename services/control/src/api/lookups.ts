// Servers and tests as the routes find them by id: an id that is no uuid or names nothing is 404,
// a retired server is readable but read-only (409).
import { judgementFileForm } from '@mcp-fleet/config';
import { type Db, getServer, latestDetection, serversOverview } from '@mcp-fleet/store';
import { z } from 'zod';
import { HttpError } from '../http';

export const uuid = z.string().uuid();

/** Any server, retired ones included: their history stays readable (links to them must not break). */
export async function serverOr404(db: Db, id: string) {
  if (!uuid.safeParse(id).success) throw new HttpError(404, `no server ${id}`);
  const server = await getServer(db, id);
  if (!server) throw new HttpError(404, `no server ${id}`);
  return server;
}

/** A server to change: a retired one is read-only (409), so history is never rewritten after the fact. */
export async function liveServer(db: Db, id: string) {
  const server = await serverOr404(db, id);
  if (server.retiredAt) throw new HttpError(409, retiredMessage(server.name, server.retiredAt));
  return server;
}

/** Why a retired server refuses a change, and what to do instead. */
function retiredMessage(name: string, retiredAt: Date): string {
  return (
    `server ${JSON.stringify(name)} was retired at ${retiredAt.toISOString()} and is read-only (its history is kept): ` +
    'apply a fleet file that names it, or add a server, to watch it again'
  );
}

/** A server as GET /api/servers/:id shows it: its overview, settings and header names (never values). */
export async function serverDetail(db: Db, id: string) {
  const [overview] = await serversOverview(db, { ids: [id] });
  const server = await getServer(db, id);
  if (!server) throw new HttpError(404, `no server ${id}`);
  return {
    ...(overview ?? { id, name: server.name, url: server.url, tests: [], byRegion: [] }),
    retiredAt: server.retiredAt,
    regions: server.regions,
    intervalMs: server.intervalMs,
    timeoutMs: server.timeoutMs,
    detectionIntervalMs: server.detectionIntervalMs,
    source: server.source,
    // Resolved, every key in the fleet file's form: a PATCH takes it back as it is.
    judgement: judgementFileForm(server.judgement),
    // Header names only, values masked: credentials never leave through the API.
    headers: Object.fromEntries(Object.keys(server.headers).map((k) => [k, '••••••'])),
    // A stdio server's command: env names only, values masked like header values (they may be secrets).
    ...(server.command
      ? {
          command: server.command.command,
          args: server.command.args,
          env: Object.fromEntries(Object.keys(server.command.env).map((k) => [k, '••••••'])),
          ...(server.command.cwd !== undefined ? { cwd: server.command.cwd } : {}),
        }
      : {}),
    detection: await latestDetection(db, id),
  };
}
