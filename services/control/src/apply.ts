// Applying a fleet definition declaratively: servers and tests the file names are created or
// changed to match, file-managed ones it no longer names are retired (history stays), nothing is
// ever duplicated. Servers created through the API are not the file's to retire.
import {
  createServer,
  createTest,
  type Db,
  listActiveServers,
  listActiveTests,
  retireServer,
  retireTest,
  type Server,
  updateServer,
} from '@mcp-fleet/store';
import type { FleetDefinition, ServerDefinition } from './fleet-file';

export interface ApplySummary {
  created: string[];
  updated: string[];
  retired: string[];
  unchanged: string[];
  testsCreated: number;
  testsRetired: number;
}

export async function applyFleet(db: Db, fleet: FleetDefinition): Promise<ApplySummary> {
  return db.transaction(async (tx) => {
    const summary: ApplySummary = {
      created: [],
      updated: [],
      retired: [],
      unchanged: [],
      testsCreated: 0,
      testsRetired: 0,
    };
    const active = new Map((await listActiveServers(tx)).map((s) => [s.name, s]));
    for (const def of fleet.servers) {
      const existing = active.get(def.name);
      active.delete(def.name);
      if (!existing) {
        const server = await createServer(tx, { ...fields(def), source: 'file' });
        for (const t of def.tests) await createTest(tx, { serverId: server.id, ...t });
        summary.created.push(def.name);
        summary.testsCreated += def.tests.length;
        continue;
      }
      let changed = false;
      if (differs(existing, def)) {
        await updateServer(tx, existing.id, { ...fields(def), source: 'file' });
        changed = true;
      }
      const tests = await listActiveTests(tx, existing.id);
      const wanted = new Set(def.tests.map(testKey));
      for (const t of tests) {
        if (wanted.delete(testKey(t))) continue;
        await retireTest(tx, t.testId);
        summary.testsRetired += 1;
        changed = true;
      }
      for (const t of def.tests) {
        if (!wanted.has(testKey(t))) continue;
        await createTest(tx, { serverId: existing.id, ...t });
        summary.testsCreated += 1;
        changed = true;
      }
      (changed ? summary.updated : summary.unchanged).push(def.name);
    }
    for (const server of active.values()) {
      if (server.source !== 'file') continue;
      await retireServer(tx, server.id);
      summary.retired.push(server.name);
    }
    return summary;
  });
}

function fields(def: ServerDefinition) {
  return {
    name: def.name,
    url: def.url,
    headers: def.headers,
    regions: def.regions,
    intervalMs: def.intervalMs,
    timeoutMs: def.timeoutMs,
    detectionIntervalMs: def.detectionIntervalMs,
  };
}

function differs(s: Server, def: ServerDefinition): boolean {
  return (
    // The whole URL: `url` is its display form, credentials masked.
    s.target !== def.url ||
    !sameHeaders(s.headers, def.headers) ||
    JSON.stringify(s.regions) !== JSON.stringify(def.regions) ||
    s.intervalMs !== def.intervalMs ||
    s.timeoutMs !== def.timeoutMs ||
    s.detectionIntervalMs !== def.detectionIntervalMs ||
    s.source !== 'file'
  );
}

/** jsonb keeps keys in its own order: compare header sets, not strings. */
function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

function testKey(t: { mode: string; pinnedRevision: string | null }): string {
  return t.mode === 'newest' ? 'newest' : `pinned:${t.pinnedRevision}`;
}
