// The fleet: servers and their tests. Retiring keeps history; nothing here deletes a row.
import { isRevision, type Revision } from '@mcp-fleet/probe';
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from './db';
import { DuplicateNameError, pgCode, withoutParams } from './errors';
import { servers, testStates, tests } from './schema';

export type Server = typeof servers.$inferSelect;
export type Test = typeof tests.$inferSelect;
export type TestState = typeof testStates.$inferSelect;

export interface ServerInput {
  name: string;
  url: string;
  /** Request headers (credentials), already resolved from the environment. */
  headers?: Record<string, string>;
  /** null or omitted = every region of the fleet. */
  regions?: string[] | null;
  intervalMs: number;
  timeoutMs: number;
  /** null or omitted = no scheduled detection. */
  detectionIntervalMs?: number | null;
  /** Where the server is defined (default `api`); applying the fleet file retires only its own. */
  source?: 'file' | 'api';
}

export type ServerPatch = Partial<ServerInput>;

export interface TestInput {
  serverId: string;
  mode: 'newest' | 'pinned';
  /** Required for `pinned`, absent for `newest`. */
  pinnedRevision?: Revision | null;
}

/** An active test with what the scheduler needs to make its jobs. */
export interface ActiveTest {
  testId: string;
  mode: 'newest' | 'pinned';
  pinnedRevision: string | null;
  serverId: string;
  serverName: string;
  url: string;
  headers: Record<string, string>;
  regions: string[] | null;
  intervalMs: number;
  timeoutMs: number;
  detectionIntervalMs: number | null;
  /** The revision the test speaks per region (regions with none yet are absent). */
  currentRevisions: Record<string, string>;
}

export function listActiveServers(db: Db): Promise<Server[]> {
  return db.select().from(servers).where(isNull(servers.retiredAt)).orderBy(asc(servers.name));
}

/** The active server with this name (a retired one may share it). */
export async function getServerByName(db: Db, name: string): Promise<Server | null> {
  const [row] = await db
    .select()
    .from(servers)
    .where(and(eq(servers.name, name), isNull(servers.retiredAt)));
  return row ?? null;
}

/** A server by id, retired or not. */
export async function getServer(db: Db, id: string): Promise<Server | null> {
  const [row] = await db.select().from(servers).where(eq(servers.id, id));
  return row ?? null;
}

export async function createServer(db: Db, input: ServerInput): Promise<Server> {
  try {
    const [row] = await db
      .insert(servers)
      .values({
        name: input.name,
        url: input.url,
        headers: input.headers ?? {},
        regions: input.regions ?? null,
        intervalMs: input.intervalMs,
        timeoutMs: input.timeoutMs,
        detectionIntervalMs: input.detectionIntervalMs ?? null,
        source: input.source ?? 'api',
      })
      .returning();
    return row!;
  } catch (err) {
    throw serverError(err, input.name);
  }
}

/** Change an active server; null when there is no active server with this id. */
export async function updateServer(db: Db, id: string, patch: ServerPatch): Promise<Server | null> {
  const set: Partial<typeof servers.$inferInsert> = { updatedAt: new Date() };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.url !== undefined) set.url = patch.url;
  if (patch.headers !== undefined) set.headers = patch.headers;
  if (patch.regions !== undefined) set.regions = patch.regions;
  if (patch.intervalMs !== undefined) set.intervalMs = patch.intervalMs;
  if (patch.timeoutMs !== undefined) set.timeoutMs = patch.timeoutMs;
  if (patch.detectionIntervalMs !== undefined) set.detectionIntervalMs = patch.detectionIntervalMs;
  if (patch.source !== undefined) set.source = patch.source;
  try {
    const [row] = await db
      .update(servers)
      .set(set)
      .where(and(eq(servers.id, id), isNull(servers.retiredAt)))
      .returning();
    return row ?? null;
  } catch (err) {
    throw serverError(err, patch.name ?? id);
  }
}

/** Retire a server and its tests together; false when it was not active. */
export function retireServer(db: Db, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const now = new Date();
    const done = await tx
      .update(servers)
      .set({ retiredAt: now, updatedAt: now })
      .where(and(eq(servers.id, id), isNull(servers.retiredAt)))
      .returning({ id: servers.id });
    if (done.length === 0) return false;
    await tx
      .update(tests)
      .set({ retiredAt: now })
      .where(and(eq(tests.serverId, id), isNull(tests.retiredAt)));
    return true;
  });
}

export async function listActiveTests(db: Db, serverId?: string): Promise<ActiveTest[]> {
  const rows = await db
    .select({
      testId: tests.id,
      mode: tests.mode,
      pinnedRevision: tests.pinnedRevision,
      serverId: servers.id,
      serverName: servers.name,
      url: servers.url,
      headers: servers.headers,
      regions: servers.regions,
      intervalMs: servers.intervalMs,
      timeoutMs: servers.timeoutMs,
      detectionIntervalMs: servers.detectionIntervalMs,
      // One index probe per test (test_states_pk), so the scheduler needs no query per job.
      currentRevisions: sql<Record<string, string> | null>`(
        select json_object_agg(${testStates.region}, ${testStates.currentRevision})
        from ${testStates}
        where ${testStates.testId} = ${tests.id} and ${testStates.currentRevision} is not null
      )`,
    })
    .from(tests)
    .innerJoin(servers, eq(servers.id, tests.serverId))
    .where(and(isNull(tests.retiredAt), isNull(servers.retiredAt), serverId ? eq(tests.serverId, serverId) : undefined))
    .orderBy(asc(servers.name), asc(tests.createdAt), asc(tests.id));
  return rows.map((r) => ({ ...r, currentRevisions: r.currentRevisions ?? {} }));
}

export async function createTest(db: Db, input: TestInput): Promise<Test> {
  const pinned = input.pinnedRevision ?? null;
  if (input.mode === 'pinned' && !isRevision(pinned)) {
    throw new Error(`a pinned test needs a known revision, not ${JSON.stringify(pinned)}`);
  }
  if (input.mode === 'newest' && pinned !== null) throw new Error('a newest-supported test pins no revision');
  return db.transaction(async (tx) => {
    // Lock the server row so it cannot be retired while the test is added to it.
    const [server] = await tx
      .select({ id: servers.id })
      .from(servers)
      .where(and(eq(servers.id, input.serverId), isNull(servers.retiredAt)))
      .for('update');
    if (!server) throw new Error(`no active server ${input.serverId}`);
    const [row] = await tx
      .insert(tests)
      .values({ serverId: input.serverId, mode: input.mode, pinnedRevision: pinned })
      .returning();
    return row!;
  });
}

/** Retire a test; false when it was not active. */
export async function retireTest(db: Db, id: string): Promise<boolean> {
  const done = await db
    .update(tests)
    .set({ retiredAt: new Date() })
    .where(and(eq(tests.id, id), isNull(tests.retiredAt)))
    .returning({ id: tests.id });
  return done.length > 0;
}

/** A test by id, retired or not. */
export async function getTest(db: Db, id: string): Promise<Test | null> {
  const [row] = await db.select().from(tests).where(eq(tests.id, id));
  return row ?? null;
}

/** The test's state in each region it has run in. */
export function getTestStates(db: Db, testId: string): Promise<TestState[]> {
  return db.select().from(testStates).where(eq(testStates.testId, testId)).orderBy(asc(testStates.region));
}

function serverError(err: unknown, name: string): Error {
  if (pgCode(err) === '23505') return new DuplicateNameError(name);
  return withoutParams(err);
}
