// A test's current revision in a region, told as it moves: migration 0012's trigger sends a NOTIFY
// on this channel when a run's transaction moves it (or makes a region's first state), so the
// scheduling control, listening on its lease session, keeps the revision every job carries
// whichever control ingested the run (docs/control-replicas.md).
import { regionName } from '@mcp-fleet/config';
import { isRevision, type Revision } from '@mcp-fleet/probe';

export const REVISION_MOVED_CHANNEL = 'mcp_fleet_revision_moved';

export interface RevisionMoved {
  testId: string;
  region: string;
  revision: Revision;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A notice's payload (`<test id>|<region>|<revision>`), or null. Trust boundary: any session on the
 * database may NOTIFY on the channel, so what is not the trigger's shape, with a known revision,
 * moves nothing.
 */
export function parseRevisionMoved(payload: string): RevisionMoved | null {
  if (payload.length > 200) return null;
  const [testId, region, revision, extra] = payload.split('|');
  if (extra !== undefined || !testId || !region || !UUID.test(testId) || !regionName.safeParse(region).success)
    return null;
  return isRevision(revision) ? { testId, region, revision } : null;
}
