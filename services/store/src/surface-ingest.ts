// Surfaces ingest: a run's snapshots are stored content-addressed (an unchanged surface costs a
// reference), and each is compared with what the server offered last in that region and era (its
// head): a new hash is diffed into classified surface changes and the head moves; the first sight
// of a surface is no change. Called inside recordRun's transaction, after its run insert: a
// redelivered result inserts no run, so it reaches none of this and writes nothing twice.
// Snapshots come off the bus, a trust boundary: each is read back (surfaceFromBody) and must hash
// to its hash in its canonical form, or the whole result is refused before anything is written.
import {
  diffSurfaces,
  type Era,
  SURFACE_MAX_CHARS,
  SURFACE_MAX_PER_RESULT,
  type Surface,
  type SurfaceChange,
  snapshotOf,
  surfaceFromBody,
} from '@mcp-fleet/probe';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from './db';
import { surfaceBlobs, surfaceChanges, surfaceHeads } from './schema';

/** A snapshot as a result carries it (probe's SurfaceSnapshot; the bus widened its strings). */
export interface SurfaceReport {
  era: string;
  revision: string;
  hash: string;
  body: string;
  truncated: boolean;
}

/** A snapshot that was read back and hashes to what it says. */
export interface VerifiedSurface {
  era: Era;
  revision: string;
  hash: string;
  body: string;
  truncated: boolean;
  surface: Surface;
}

/** What a run's row keeps of each surface: a reference into surface_blobs. */
export interface SurfaceRef {
  era: Era;
  revision: string;
  hash: string;
}

/** A change as ingest recorded it: its era and region with it, for the metric and the operator's line. */
export type RecordedSurfaceChange = SurfaceChange & { era: Era; region: string };

/**
 * A snapshot the store refuses (a forged hash, a body that is not a surface or not canonical, too
 * big). SQLSTATE class 22 (data exception), so control rejects the result as poison, never retried.
 */
export class SurfaceRefusedError extends Error {
  readonly code = '22023';
  constructor(message: string) {
    super(`surface refused: ${message}`);
    this.name = 'SurfaceRefusedError';
  }
}

const HASH = /^[0-9a-f]{64}$/;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Each snapshot checked before the transaction; throws SurfaceRefusedError naming the first bad one. */
export function verifySurfaces(reports: readonly SurfaceReport[]): VerifiedSurface[] {
  if (reports.length > SURFACE_MAX_PER_RESULT)
    throw new SurfaceRefusedError(`${reports.length} snapshots, at most ${SURFACE_MAX_PER_RESULT} (one per era)`);
  const eras = new Set<string>();
  return reports.map((r, i) => {
    const at = `surfaces[${i}]`;
    if (!HASH.test(r.hash)) throw new SurfaceRefusedError(`${at}.hash is not a sha256 in lowercase hex`);
    if (r.body.length > SURFACE_MAX_CHARS)
      throw new SurfaceRefusedError(`${at}.body: ${r.body.length} characters, more than ${SURFACE_MAX_CHARS}`);
    if (!PRINTABLE_ASCII.test(r.body)) throw new SurfaceRefusedError(`${at}.body is not printable ASCII`);
    let surface: Surface;
    try {
      surface = surfaceFromBody(r.body);
    } catch (err) {
      throw new SurfaceRefusedError(`${at}: ${(err as Error).message}`);
    }
    // Canonical and hashed as it says: else two bodies of one surface would be two blobs, and a
    // forged hash could overwrite what another surface's reference points at.
    let canonical: ReturnType<typeof snapshotOf>;
    try {
      canonical = snapshotOf(surface);
    } catch (err) {
      throw new SurfaceRefusedError(`${at}: ${(err as Error).message}`);
    }
    if (canonical.body !== r.body) throw new SurfaceRefusedError(`${at}.body is not the canonical JSON of its surface`);
    if (canonical.hash !== r.hash) throw new SurfaceRefusedError(`${at}.hash is not the sha256 of its body`);
    if (surface.era !== r.era || surface.revision !== r.revision || surface.truncated !== r.truncated)
      throw new SurfaceRefusedError(`${at}: era, revision or truncated differ from its body's`);
    if (eras.has(surface.era)) throw new SurfaceRefusedError(`${at}: a second snapshot of era ${surface.era}`);
    eras.add(surface.era);
    return { era: surface.era, revision: r.revision, hash: r.hash, body: r.body, truncated: r.truncated, surface };
  });
}

export interface FileSurfacesInput {
  serverId: string;
  testId: string;
  region: string;
  runId: number;
  /** The run's time: a head's lastSeenAt and a change's `at`. */
  at: Date;
  surfaces: readonly VerifiedSurface[];
  /** A late result (an older slot): its blobs are kept for its run's references, heads do not move. */
  stale: boolean;
}

/** Store a run's snapshots and move the heads; the changes recorded (none for a first sight or the same hash). */
export async function fileSurfaces(tx: Db, input: FileSurfacesInput): Promise<RecordedSurfaceChange[]> {
  const recorded: RecordedSurfaceChange[] = [];
  for (const s of input.surfaces) {
    await keepBlob(tx, s);
    if (input.stale) continue;
    const where = and(
      eq(surfaceHeads.serverId, input.serverId),
      eq(surfaceHeads.region, input.region),
      eq(surfaceHeads.era, s.era),
    );
    const fresh = {
      revision: s.revision,
      hash: s.hash,
      since: input.at,
      lastRunId: input.runId,
      lastSeenAt: input.at,
    };
    // First sight: the head is this surface, and no change. Two tests of one server (a conformance
    // and a surface test) may race here: the insert that loses takes the diff path below.
    const created = await tx
      .insert(surfaceHeads)
      .values({ serverId: input.serverId, region: input.region, era: s.era, ...fresh })
      .onConflictDoNothing()
      .returning({ hash: surfaceHeads.hash });
    if (created.length) continue;
    const [head] = await tx.select().from(surfaceHeads).where(where).for('update');
    if (!head) throw new Error(`surface head of ${input.serverId} in ${input.region} (${s.era}) vanished`);
    // Another test's newer run has already moved the head: this older view must not move it back.
    if (head.lastSeenAt > input.at) continue;
    if (head.hash === s.hash) {
      await tx
        .update(surfaceHeads)
        .set({ revision: s.revision, lastRunId: input.runId, lastSeenAt: input.at })
        .where(where);
      continue;
    }
    const [old] = await tx
      .select({ body: surfaceBlobs.body })
      .from(surfaceBlobs)
      .where(eq(surfaceBlobs.hash, head.hash));
    const changes = old ? diffSurfaces(surfaceFromBody(old.body), s.surface) : [];
    if (changes.length)
      await tx.insert(surfaceChanges).values(
        changes.map((c) => ({
          serverId: input.serverId,
          testId: input.testId,
          region: input.region,
          era: s.era,
          runId: input.runId,
          severity: c.severity,
          kind: c.kind,
          name: c.name,
          change: c.change,
          message: c.message,
          path: c.path ?? null,
          fromHash: head.hash,
          toHash: s.hash,
          at: input.at,
        })),
      );
    await tx.update(surfaceHeads).set(fresh).where(where);
    for (const c of changes) recorded.push({ ...c, era: s.era, region: input.region });
  }
  return recorded;
}

/**
 * The blob of a snapshot, stored once. Retention may be deleting an unreferenced blob of the same
 * content at this moment: the key-share lock holds it for this transaction (a delete then waits,
 * and finds it referenced), and a blob deleted just before is stored again.
 */
async function keepBlob(tx: Db, s: VerifiedSurface): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    await tx
      .insert(surfaceBlobs)
      // The canonical text as jsonb: read back, canonicalJson gives the same text (keys sorted).
      .values({ hash: s.hash, body: sql`${s.body}::jsonb`, bytes: s.body.length, truncated: s.truncated })
      .onConflictDoNothing({ target: surfaceBlobs.hash });
    const held = await tx
      .select({ hash: surfaceBlobs.hash })
      .from(surfaceBlobs)
      .where(eq(surfaceBlobs.hash, s.hash))
      .for('key share');
    if (held.length) return;
  }
  throw new Error(`surface blob ${s.hash} could not be kept`);
}

/** The references a run's row keeps. */
export function surfaceRefs(surfaces: readonly VerifiedSurface[]): SurfaceRef[] | null {
  return surfaces.length ? surfaces.map(({ era, revision, hash }) => ({ era, revision, hash })) : null;
}
