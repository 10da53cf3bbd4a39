// What the API and the dashboard read of surfaces (issue 16): what a server offers now per region
// and era (surface_heads joined to the blob they point at), the change history newest first
// (surface_changes, keyset-paginated like the era moves), the breaking changes in a range (the
// overview's count) and one blob by hash (the diff view's before and after).
//
// Blob bodies come from agents' results (hostile input, validated by the bus schema at ingest, then
// stored as jsonb): the lists a reader iterates are made arrays here, so a malformed body shows as
// an empty surface instead of breaking the page. Text inside stays as sent: show it as text only.
import {
  type Era,
  SURFACE_KINDS,
  SURFACE_SEVERITIES,
  type Surface,
  type SurfaceKind,
  type SurfaceSeverity,
} from '@mcp-fleet/probe';
import { and, asc, desc, eq, getTableColumns, gte, lt, type SQL, sql } from 'drizzle-orm';
import { decodeCursor, encodeCursor } from './cursor';
import type { Db } from './db';
import { MAX_PAGE } from './reads';
import { servers, surfaceBlobs, surfaceChanges, surfaceHeads } from './schema';

/** What a server offers now in one region and era. */
export interface SurfaceNow {
  region: string;
  era: Era;
  /** The revision the connection that read it negotiated. */
  revision: string;
  hash: string;
  /** When this content was first seen there (the last change). */
  since: Date;
  lastSeenAt: Date;
  truncated: boolean;
  surface: Surface;
}

/** One recorded change, with its server's name (a list across the fleet links to it). */
export type SurfaceChangeRow = typeof surfaceChanges.$inferSelect & { serverName: string };

export interface SurfaceChangeFilter {
  serverId?: string | undefined;
  /** At or after. */
  since?: Date | undefined;
  /** Before. */
  until?: Date | undefined;
  severity?: SurfaceSeverity | undefined;
  kind?: SurfaceKind | undefined;
  region?: string | undefined;
  limit: number;
  /** A `next` this function returned (cursor.ts): the page starts after it. */
  cursor?: string | undefined;
}

/** A `cursor` that no page of surface changes gave. */
export class SurfaceCursorError extends Error {
  constructor() {
    super('cursor: not a cursor a page of surface changes gave');
    this.name = 'SurfaceCursorError';
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HASH = /^[0-9a-f]{64}$/;

/** The objects of a stored list that have the item's key as a string (anything else is dropped). */
function items<T>(v: unknown, key: string): T[] {
  if (!Array.isArray(v)) return [];
  return v.filter((x) => typeof record(x)[key] === 'string') as unknown as T[];
}
const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** A stored body as a Surface whose lists are arrays and whose capabilities are an object, whatever was stored. */
export function asSurface(body: unknown, fallback: { era: Era; revision: string; truncated: boolean }): Surface {
  const b = record(body);
  const info = record(b.serverInfo);
  return {
    era: b.era === 'legacy' || b.era === 'modern' ? b.era : fallback.era,
    revision: typeof b.revision === 'string' ? b.revision : fallback.revision,
    serverInfo: typeof info.name === 'string' ? (info as unknown as Surface['serverInfo']) : null,
    capabilities: record(b.capabilities),
    tools: items(b.tools, 'name'),
    resources: items(b.resources, 'uri'),
    resourceTemplates: items(b.resourceTemplates, 'uriTemplate'),
    prompts: items(b.prompts, 'name'),
    truncated: b.truncated === true || fallback.truncated,
  };
}

/** What a server offers now, per region and era: modern first, then by region. */
export async function surfaceNow(db: Db, serverId: string): Promise<SurfaceNow[]> {
  if (!UUID.test(serverId)) return [];
  const rows = await db
    .select({
      region: surfaceHeads.region,
      era: surfaceHeads.era,
      revision: surfaceHeads.revision,
      hash: surfaceHeads.hash,
      since: surfaceHeads.since,
      lastSeenAt: surfaceHeads.lastSeenAt,
      truncated: surfaceBlobs.truncated,
      body: surfaceBlobs.body,
    })
    .from(surfaceHeads)
    .innerJoin(surfaceBlobs, eq(surfaceBlobs.hash, surfaceHeads.hash))
    .where(eq(surfaceHeads.serverId, serverId))
    .orderBy(desc(surfaceHeads.era), asc(surfaceHeads.region));
  return rows.map(({ body, ...r }) => ({ ...r, surface: asSurface(body, r) }));
}

const changeColumns = getTableColumns(surfaceChanges);

/** Keyset condition `(at, id) < (t, i)`. */
function before(t: Date, i: number): SQL {
  return sql`(${surfaceChanges.at}, ${surfaceChanges.id}) < (${t.toISOString()}::timestamptz, ${i})`;
}

function changeConditions(f: Omit<SurfaceChangeFilter, 'limit' | 'cursor'>): SQL | undefined {
  if (f.serverId !== undefined && !UUID.test(f.serverId)) return sql`false`;
  // An unknown severity or kind matches nothing (a hostile query string gets an empty page, not an error).
  if (f.severity !== undefined && !SURFACE_SEVERITIES.includes(f.severity)) return sql`false`;
  if (f.kind !== undefined && !SURFACE_KINDS.includes(f.kind)) return sql`false`;
  return and(
    f.serverId ? eq(surfaceChanges.serverId, f.serverId) : undefined,
    f.since ? gte(surfaceChanges.at, f.since) : undefined,
    f.until ? lt(surfaceChanges.at, f.until) : undefined,
    f.severity ? eq(surfaceChanges.severity, f.severity) : undefined,
    f.kind ? eq(surfaceChanges.kind, f.kind) : undefined,
    f.region ? eq(surfaceChanges.region, f.region) : undefined,
  );
}

/** Surface changes newest first (at, then id), a page at a time; `next` is the cursor of the page after, or null. */
export async function listSurfaceChanges(
  db: Db,
  filter: SurfaceChangeFilter,
): Promise<{ changes: SurfaceChangeRow[]; next: string | null }> {
  const limit = Math.max(1, Math.min(MAX_PAGE, Math.floor(filter.limit) || 1));
  let after: SQL | undefined;
  if (filter.cursor !== undefined) {
    const c = decodeCursor(filter.cursor);
    if (!c) throw new SurfaceCursorError();
    after = before(c.at, c.id);
  }
  const rows = await db
    .select({ ...changeColumns, serverName: servers.name })
    .from(surfaceChanges)
    .innerJoin(servers, eq(servers.id, surfaceChanges.serverId))
    .where(and(changeConditions(filter), after))
    .orderBy(desc(surfaceChanges.at), desc(surfaceChanges.id))
    .limit(limit + 1);
  const changes = rows.slice(0, limit);
  const last = changes[changes.length - 1];
  return { changes, next: rows.length > limit && last ? encodeCursor(last.at, last.id) : null };
}

/** One change by id, with its server's name, or null (the diff view's change). */
export async function surfaceChange(db: Db, id: number): Promise<SurfaceChangeRow | null> {
  if (!Number.isSafeInteger(id) || id < 1) return null;
  const [row] = await db
    .select({ ...changeColumns, serverName: servers.name })
    .from(surfaceChanges)
    .innerJoin(servers, eq(servers.id, surfaceChanges.serverId))
    .where(eq(surfaceChanges.id, id))
    .limit(1);
  return row ?? null;
}

/** Breaking changes in [since, until) (the overview's count; the same rows the era-moves page lists with severity=breaking). */
export async function breakingChangeCount(
  db: Db,
  range: { since: Date; until?: Date | undefined; serverId?: string | undefined },
): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)`.mapWith(Number) })
    .from(surfaceChanges)
    .innerJoin(servers, eq(servers.id, surfaceChanges.serverId))
    .where(changeConditions({ ...range, severity: 'breaking' }));
  return row?.n ?? 0;
}

/** Breaking changes in [since, until) per server id (servers without any are absent). */
export async function breakingChangesByServer(
  db: Db,
  range: { since: Date; until?: Date | undefined },
): Promise<Map<string, number>> {
  const rows = await db
    .select({ serverId: surfaceChanges.serverId, n: sql<number>`count(*)`.mapWith(Number) })
    .from(surfaceChanges)
    .where(changeConditions({ ...range, severity: 'breaking' }))
    .groupBy(surfaceChanges.serverId);
  return new Map(rows.map((r) => [r.serverId, r.n]));
}

/** One stored surface by its hash (a change's from_hash or to_hash), or null. */
export async function surfaceBlob(db: Db, hash: string): Promise<Surface | null> {
  if (!HASH.test(hash)) return null;
  const [row] = await db
    .select({ body: surfaceBlobs.body, truncated: surfaceBlobs.truncated })
    .from(surfaceBlobs)
    .where(eq(surfaceBlobs.hash, hash))
    .limit(1);
  if (!row) return null;
  return asSurface(row.body, { era: 'modern', revision: '', truncated: row.truncated });
}
