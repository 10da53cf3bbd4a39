// Region disagreement as on-call reads it: regions negotiating different revisions for one
// newest-supported test (a rollout behind geo-DNS). Ingest opens, updates and ends them
// (disagreement-ingest.ts); these are the reads for the dashboard, the API and control's gauges.
import { compareRevisions, isRevision } from '@mcp-fleet/probe';
import { and, desc, eq, gte, inArray, isNull, type SQL } from 'drizzle-orm';
import type { Db } from './db';
import { regionDisagreements, servers } from './schema';

export interface RegionDisagreement {
  id: number;
  serverId: string;
  server: string;
  testId: string;
  /** Each region's revision while they disagreed (the latest seen). */
  revisions: Record<string, string>;
  startedAt: Date;
  /** Null while it lasts. */
  endedAt: Date | null;
  updatedAt: Date;
}

export interface DisagreementQuery {
  serverId?: string | undefined;
  /** These servers (a page of the servers table), retired ones included; omitted: every live server. */
  serverIds?: readonly string[] | undefined;
  /** Only the ones still open (default), or every one that started since `since`. */
  open?: boolean | undefined;
  since?: Date | undefined;
  limit?: number | undefined;
}

/** Disagreements, the longest-running first among open ones, else newest first. */
export async function regionDisagreementList(db: Db, q: DisagreementQuery = {}): Promise<RegionDisagreement[]> {
  if (q.serverIds?.length === 0) return [];
  const where: (SQL | undefined)[] = [
    q.serverIds ? inArray(regionDisagreements.serverId, [...q.serverIds]) : isNull(servers.retiredAt),
  ];
  if (q.serverId) where.push(eq(regionDisagreements.serverId, q.serverId));
  if (q.open ?? true) where.push(isNull(regionDisagreements.endedAt));
  if (q.since) where.push(gte(regionDisagreements.startedAt, q.since));
  const rows = await db
    .select({
      id: regionDisagreements.id,
      serverId: regionDisagreements.serverId,
      server: servers.name,
      testId: regionDisagreements.testId,
      revisions: regionDisagreements.revisions,
      startedAt: regionDisagreements.startedAt,
      endedAt: regionDisagreements.endedAt,
      updatedAt: regionDisagreements.updatedAt,
    })
    .from(regionDisagreements)
    .innerJoin(servers, eq(servers.id, regionDisagreements.serverId))
    .where(and(...where))
    .orderBy((q.open ?? true) ? regionDisagreements.startedAt : desc(regionDisagreements.startedAt))
    .limit(Math.max(1, Math.min(500, q.limit ?? 100)));
  return rows.map((r) => ({ ...r, revisions: revisionsOf(r.revisions) }));
}

/** The open disagreements of these servers (every one: no limit, unlike the listing), for control's gauges. */
export async function openDisagreements(
  db: Db,
  serverIds: readonly string[],
): Promise<{ serverId: string; testId: string; startedAt: Date }[]> {
  if (serverIds.length === 0) return [];
  return db
    .select({
      serverId: regionDisagreements.serverId,
      testId: regionDisagreements.testId,
      startedAt: regionDisagreements.startedAt,
    })
    .from(regionDisagreements)
    .where(and(inArray(regionDisagreements.serverId, [...serverIds]), isNull(regionDisagreements.endedAt)));
}

/**
 * The stored map read back: region → revision, only known revisions (ingest wrote it from agents'
 * results, a trust boundary, and it is jsonb): an unknown value is dropped, never shown.
 */
export function revisionsOf(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value && typeof value === 'object' && !Array.isArray(value))
    for (const [region, revision] of Object.entries(value))
      if (typeof revision === 'string' && isRevision(revision)) out[region] = revision;
  return out;
}

/** Regions by revision, newest revision first, then by region name. */
export function disagreementParts(revisions: Record<string, string>): { region: string; revision: string }[] {
  return Object.entries(revisions)
    .map(([region, revision]) => ({ region, revision }))
    .sort((a, b) =>
      isRevision(a.revision) && isRevision(b.revision) && a.revision !== b.revision
        ? compareRevisions(b.revision, a.revision)
        : a.region.localeCompare(b.region),
    );
}

/** "eu-west 2026-07-28, us-east 2025-11-25 for 12 min" (until `now`, or until it ended). */
export function disagreementText(
  d: Pick<RegionDisagreement, 'revisions' | 'startedAt' | 'endedAt'>,
  now: Date,
): string {
  const parts = disagreementParts(d.revisions)
    .map((p) => `${p.region} ${p.revision}`)
    .join(', ');
  return `${parts} for ${spanText((d.endedAt ?? now).getTime() - d.startedAt.getTime())}`;
}

/** A span as on-call reads it: 45 s, 12 min, 3 h 20 min, 2 d 4 h. */
export function spanText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}
