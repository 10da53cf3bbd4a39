// "Upgrade available": a newest-supported test whose server's latest detection (from any region)
// found a newer revision than the test negotiates in some region. A rollout the test has not caught
// up with yet (its era signal never came, its recheck is still ahead); it reads so until the test
// moves. Two queries for any number of servers: the latest detection of each, and their newest
// tests' region states.
import { compareRevisions, isRevision, type Revision } from '@mcp-fleet/probe';
import { and, desc, eq, inArray, isNull } from 'drizzle-orm';
import type { Db } from './db';
import { detections, servers, testStates, tests } from './schema';

export interface UpgradeAvailable {
  serverId: string;
  testId: string;
  /** The newest revision the latest detection found. */
  revision: Revision;
  /** Regions where the test negotiates an older revision, with the one it negotiates there. */
  regions: { region: string; current: Revision }[];
  detectedAt: Date;
  /** The region the detection ran from (null: control's own). */
  detectedFrom: string | null;
}

/** Every newest-supported live test of these servers that has an upgrade available. */
export async function upgradesAvailable(db: Db, serverIds: readonly string[]): Promise<UpgradeAvailable[]> {
  if (serverIds.length === 0) return [];
  const ids = [...new Set(serverIds)];
  // The latest detection per server (detections_server_at), whatever region ran it.
  const latest = await db
    .selectDistinctOn([detections.serverId], {
      serverId: detections.serverId,
      newestSupported: detections.newestSupported,
      at: detections.at,
      region: detections.region,
    })
    .from(detections)
    .where(inArray(detections.serverId, ids))
    .orderBy(detections.serverId, desc(detections.at), desc(detections.id));
  // The column is text written from an agent's answer: only a known revision counts.
  const found = new Map<string, { revision: Revision; at: Date; region: string | null }>();
  for (const d of latest)
    if (isRevision(d.newestSupported))
      found.set(d.serverId, { revision: d.newestSupported, at: d.at, region: d.region });
  if (found.size === 0) return [];
  const states = await db
    .select({
      serverId: tests.serverId,
      testId: tests.id,
      region: testStates.region,
      current: testStates.currentRevision,
      serverRegions: servers.regions,
    })
    .from(testStates)
    .innerJoin(tests, eq(tests.id, testStates.testId))
    .innerJoin(servers, eq(servers.id, tests.serverId))
    .where(
      and(
        inArray(tests.serverId, [...found.keys()]),
        eq(tests.mode, 'newest'),
        isNull(tests.retiredAt),
        isNull(servers.retiredAt),
      ),
    )
    .orderBy(tests.serverId, tests.createdAt, tests.id, testStates.region);
  const byTest = new Map<string, UpgradeAvailable>();
  for (const s of states) {
    const detection = found.get(s.serverId);
    if (!detection || !isRevision(s.current)) continue;
    // A state left by a region the server is no longer probed from says nothing about now.
    if (s.serverRegions && !s.serverRegions.includes(s.region)) continue;
    if (compareRevisions(detection.revision, s.current) <= 0) continue;
    let upgrade = byTest.get(s.testId);
    if (!upgrade) {
      upgrade = {
        serverId: s.serverId,
        testId: s.testId,
        revision: detection.revision,
        regions: [],
        detectedAt: detection.at,
        detectedFrom: detection.region,
      };
      byTest.set(s.testId, upgrade);
    }
    upgrade.regions.push({ region: s.region, current: s.current });
  }
  return [...byTest.values()];
}

/** One server's tests with an upgrade available. */
export function serverUpgrades(db: Db, serverId: string): Promise<UpgradeAvailable[]> {
  return upgradesAvailable(db, [serverId]);
}

/** "upgrade available: 2026-07-28" (and where, when some region has caught up already). */
export function upgradeText(u: Pick<UpgradeAvailable, 'revision' | 'regions'>, regionsTotal?: number): string {
  const where =
    regionsTotal !== undefined && u.regions.length < regionsTotal
      ? ` (in ${u.regions.map((r) => r.region).join(', ')})`
      : '';
  return `upgrade available: ${u.revision}${where}`;
}
