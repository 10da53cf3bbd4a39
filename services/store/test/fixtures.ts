// Builders for the rows tests write: servers, handshake runs as an agent reports them.
// Other workspaces' tests import it as @mcp-fleet/store/testing (in store, not testkit: store's own
// tests use testkit, so testkit cannot depend on store).
import type { Judgement } from '@mcp-fleet/config';
import { type CheckId, type ConformanceRun, checkById, type HandshakeRun, type Revision } from '@mcp-fleet/probe';
import { createServer, createTest, type Db, type RunResult, type Server, type Test } from '../src';

let serial = 0;

/** A server with a unique name, and its tests. */
export async function serverWithTests(
  db: Db,
  tests: ('newest' | Revision)[] = ['newest'],
  extra: { regions?: string[] | null; name?: string; judgement?: Judgement } = {},
): Promise<{ server: Server; tests: Test[] }> {
  serial += 1;
  const server = await createServer(db, {
    name: extra.name ?? `server-${process.pid}-${serial}`,
    url: `https://mcp-${serial}.example.com/mcp`,
    headers: { Authorization: 'Bearer s3cret-token' },
    regions: extra.regions ?? ['eu-west', 'us-east'],
    intervalMs: 60_000,
    timeoutMs: 10_000,
    ...(extra.judgement ? { judgement: extra.judgement } : {}),
  });
  const made: Test[] = [];
  for (const t of tests) {
    made.push(
      await createTest(db, {
        serverId: server.id,
        mode: t === 'newest' ? 'newest' : 'pinned',
        pinnedRevision: t === 'newest' ? null : t,
      }),
    );
  }
  return { server, tests: made };
}

/** A run the way the probe reports it: a success at `negotiated` unless told otherwise. */
export function handshakeRun(parts: Partial<HandshakeRun> = {}): HandshakeRun {
  const negotiated = parts.negotiated === undefined ? '2025-06-18' : parts.negotiated;
  return {
    mode: 'newest',
    requested: '2025-06-18',
    negotiated,
    generation: 'sessions',
    era: 'legacy',
    outcome: 'success',
    message: 'The handshake succeeded.',
    previousRevision: null,
    requests: 2,
    millis: 12.5,
    serverInfo: { name: 'sim', version: '1.0.0' },
    assertion: null,
    lookup: { performed: false, found: null, requests: 0 },
    evidence: null,
    ...parts,
  };
}

/** A result for a test in a region, finished at `at`, with a fresh job id unless one is given. */
export function resultOf(
  test: Test,
  region: string,
  at: Date,
  run: HandshakeRun = handshakeRun(),
  jobId = `job-${process.pid}-${++serial}`,
): RunResult {
  return {
    jobId,
    testId: test.id,
    serverId: test.serverId,
    region,
    agent: `agent-${region}-1`,
    scheduledAt: new Date(at.getTime() - 2000),
    startedAt: new Date(at.getTime() - 1000),
    finishedAt: at,
    traceId: null,
    run,
  };
}

/** Minutes after a fixed base time, so tests control the order runs finished in. */
export function minute(n: number, base = Date.UTC(2026, 0, 1)): Date {
  return new Date(base + n * 60_000);
}

/** A conformance run as the probe reports it: these checks (id → status) at `era`, level from probe's table. */
export function conformanceRun(
  era: 'legacy' | 'modern',
  statuses: Record<string, 'pass' | 'fail' | 'skip'>,
  parts: Partial<ConformanceRun> = {},
): ConformanceRun {
  const checks = Object.entries(statuses).map(([id, status]) => ({
    id: id as CheckId,
    level: checkById(id)?.level ?? 'MUST',
    status,
    message: status === 'fail' ? `${id} failed` : status === 'skip' ? 'not declared' : 'held',
    millis: 1.5,
    requests: 1,
  }));
  return {
    target: 'https://mcp.example.com/mcp',
    protocol: { requested: 'auto', negotiated: era === 'modern' ? '2026-07-28' : '2025-06-18', era },
    pass: !checks.some((c) => c.status === 'fail' && c.level === 'MUST'),
    outcome: 'success',
    message: 'The handshake succeeded.',
    serverInfo: { name: 'sim', version: '1.0.0' },
    checks,
    requests: checks.length + 2,
    millis: 40,
    evidence: null,
    ...parts,
  };
}

/** A small seeded generator (mulberry32): the same stream on every run of a test. */
export function seededRandom(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
