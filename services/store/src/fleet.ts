// The fleet: servers and their tests. Retiring keeps history; nothing here deletes a row.
// Header values and a URL's credentials are sealed on the way in and unsealed on the way out
// (credentials.ts): the database only ever holds them encrypted. Callers of these functions see
// header values in plaintext, `url` in its display form (credentials masked) and the whole URL,
// to probe, as `target`.

import {
  CredentialsUnreadableError,
  currentKeyring,
  KEY_HINT,
  needsReseal,
  SECRET_KEY_ENV,
  SecretKeyError,
  sealEnv,
  sealHeaders,
  sealUrl,
  unsealEnv,
  unsealHeaders,
  unsealUrl,
  urlNeedsSeal,
} from '@mcp-fleet/auth';
import { type Judgement, type StdioCommand, storedJudgement } from '@mcp-fleet/config';
import { hasUrlCredentials, isRevision, type Revision, type Script } from '@mcp-fleet/probe';
import { and, asc, desc, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Db } from './db';
import { DuplicateNameError, pgCode, withoutParams } from './errors';
import { KeptCredentialsError, keptHeaders, keptUrl } from './kept-credentials';
import { eraMoves, servers, testStates, tests } from './schema';

/**
 * A server as callers see it: `url` as it may be shown, `target` the whole URL a probe goes to, headers
 * unsealed, and its judgement resolved (a stored null, or anything unreadable, reads as the defaults).
 */
export type Server = Omit<typeof servers.$inferSelect, 'judgement'> & { target: string; judgement: Judgement };
// `command` on a Server is unsealed (its env in plaintext), as `headers` is.
/** A server after updateServer: and the stored headers it dropped because its URL moved to another origin. */
export type UpdatedServer = Server & { headersDropped: string[] };
export type Test = typeof tests.$inferSelect;
export type TestState = typeof testStates.$inferSelect;

export interface ServerInput {
  name: string;
  /** The whole URL, credentials included (sealed when it carries any); a patch may keep masked parts (kept-credentials.ts). */
  url: string;
  /** Request headers (credentials), already resolved from the environment. */
  headers?: Record<string, string>;
  /**
   * A stdio server's command, env in plaintext (sealed here); `url` is then its command line as
   * shown (probe's displayCommand). null or omitted = an HTTP server.
   */
  command?: StdioCommand | null;
  /** null or omitted = every region of the fleet. */
  regions?: string[] | null;
  intervalMs: number;
  timeoutMs: number;
  /** null or omitted = no scheduled detection. */
  detectionIntervalMs?: number | null;
  /** Where the server is defined (default `api`); applying the fleet file retires only its own. */
  source?: 'file' | 'api';
  /** How it is judged across regions, resolved (config's resolveJudgement); omitted = the defaults (stored as null). */
  judgement?: Judgement;
}

/** `headers` undefined keeps the stored ones, dropped if the URL moves to another origin (kept-credentials.ts). */
export type ServerPatch = Partial<ServerInput>;

export type TestDepth = Test['depth'];

export interface TestInput {
  serverId: string;
  mode: 'newest' | 'pinned';
  /** Required for `pinned`, absent for `newest`. */
  pinnedRevision?: Revision | null;
  /** Default handshake. */
  depth?: TestDepth;
  /** The test's own interval; null or omitted = its depth's default (config's effectiveIntervalMs). */
  intervalMs?: number | null;
  /** A script-depth test's steps (validated by config's ScriptSchema before it gets here); null otherwise. */
  script?: Script | null;
}

/** What may change on a live test: its interval (null: its depth's default). */
export interface TestPatch {
  intervalMs?: number | null;
}

/** An active test with what the scheduler needs to make its jobs. */
export interface ActiveTest {
  testId: string;
  mode: 'newest' | 'pinned';
  pinnedRevision: string | null;
  depth: TestDepth;
  /** The test's own interval, null = its depth's default (`intervalMs` is its server's): config's effectiveIntervalMs decides. */
  testIntervalMs: number | null;
  /** A script-depth test's steps; null for every other depth. */
  script: Script | null;
  serverId: string;
  serverName: string;
  /** As it may be shown (credentials masked). */
  url: string;
  /** The whole URL, for the jobs; `url` when it cannot be unsealed (see credentialsError). */
  target: string;
  /** Plaintext, for the jobs; empty when they cannot be unsealed (see credentialsError). */
  headers: Record<string, string>;
  /** A stdio server's command, env unsealed, for the jobs; null for an HTTP server (or when it cannot be unsealed). */
  command: StdioCommand | null;
  /** Why the server's stored credentials cannot be unsealed (wrong key, altered), else null: do not probe it. */
  credentialsError: string | null;
  regions: string[] | null;
  intervalMs: number;
  timeoutMs: number;
  detectionIntervalMs: number | null;
  /** The revision the test speaks per region (regions with none yet are absent). */
  currentRevisions: Record<string, string>;
  /** Its server's judgement, resolved (the scheduler's recheck window is its recheckMs). */
  judgement: Judgement;
}

type Row = typeof servers.$inferSelect;

/** A row as callers see it: its URL and headers unsealed. Throws SecretKeyError / CredentialsUnreadableError. */
function unsealed(row: Row): Server {
  return {
    ...row,
    target: unsealUrl(row.url, row.urlSealed, row.name),
    headers: unsealHeaders(row.headers, row.url, row.name),
    command: unsealedCommand(row.command, row.name),
    judgement: storedJudgement(row.judgement),
  };
}

/** A stored command with its env sealed for the database (null stays null). */
function sealedCommand(command: StdioCommand | null | undefined): StdioCommand | null {
  if (!command) return null;
  return { ...command, env: sealEnv(command.env, command.command) };
}

/** A stored command with its env unsealed. Throws SecretKeyError / CredentialsUnreadableError. */
function unsealedCommand(stored: StdioCommand | null, server: string): StdioCommand | null {
  if (!stored) return null;
  return { ...stored, env: unsealEnv(stored.env ?? {}, stored.command, server) };
}

/** Active servers, credentials unsealed (throws when one cannot be: see sealStoredCredentials). */
export async function listActiveServers(db: Db): Promise<Server[]> {
  const rows = await db.select().from(servers).where(isNull(servers.retiredAt)).orderBy(asc(servers.name));
  return rows.map(unsealed);
}

/** Every active server's id (control's gauges read the fleet a slice of ids at a time). */
export async function liveServerIds(db: Db): Promise<string[]> {
  const rows = await db.select({ id: servers.id }).from(servers).where(isNull(servers.retiredAt));
  return rows.map((r) => r.id);
}

/** The active server with this name (a retired one may share it). */
export async function getServerByName(db: Db, name: string): Promise<Server | null> {
  const [row] = await db
    .select()
    .from(servers)
    .where(and(eq(servers.name, name), isNull(servers.retiredAt)));
  return row ? unsealed(row) : null;
}

/** A server by id, retired or not, credentials unsealed. */
export async function getServer(db: Db, id: string): Promise<Server | null> {
  const [row] = await db.select().from(servers).where(eq(servers.id, id));
  return row ? unsealed(row) : null;
}

/** When the first of the servers with these names was created, retired ones included; null when none was. */
export async function firstCreatedAt(db: Db, names: string[]): Promise<Date | null> {
  if (names.length === 0) return null;
  const [row] = await db
    .select({ at: sql<string | Date | null>`min(${servers.createdAt})` })
    .from(servers)
    .where(inArray(servers.name, names));
  return row?.at ? new Date(row.at) : null;
}

export async function createServer(db: Db, input: ServerInput): Promise<Server> {
  const headers = input.headers ?? {};
  // Outside the try: a missing key is the operator's to fix, not a database error; a masked part
  // has nothing stored to stand for.
  keptUrl(null, input.url);
  const url = sealUrl(input.url);
  const sealed = sealHeaders(headers, input.url);
  const command = sealedCommand(input.command);
  try {
    const [row] = await db
      .insert(servers)
      .values({
        name: input.name,
        ...url,
        headers: sealed,
        command,
        regions: input.regions ?? null,
        intervalMs: input.intervalMs,
        timeoutMs: input.timeoutMs,
        detectionIntervalMs: input.detectionIntervalMs ?? null,
        source: input.source ?? 'api',
        judgement: input.judgement ?? null,
      })
      .returning();
    return {
      ...row!,
      target: input.url,
      headers,
      command: input.command ?? null,
      judgement: storedJudgement(row!.judgement),
    };
  } catch (err) {
    throw serverError(err, input.name);
  }
}

/**
 * Change an active server; null when there is no active server with this id. Credentials follow
 * the one rule of kept-credentials.ts: a URL on another origin drops the stored headers unless the
 * patch gives them again (`headersDropped` names them), and masked URL parts are kept only on the
 * same origin (else KeptCredentialsError).
 */
export async function updateServer(db: Db, id: string, patch: ServerPatch): Promise<UpdatedServer | null> {
  const set: Partial<typeof servers.$inferInsert> = { updatedAt: new Date() };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.regions !== undefined) set.regions = patch.regions;
  if (patch.intervalMs !== undefined) set.intervalMs = patch.intervalMs;
  if (patch.timeoutMs !== undefined) set.timeoutMs = patch.timeoutMs;
  if (patch.detectionIntervalMs !== undefined) set.detectionIntervalMs = patch.detectionIntervalMs;
  if (patch.source !== undefined) set.source = patch.source;
  if (patch.judgement !== undefined) set.judgement = patch.judgement;
  if (patch.command !== undefined) set.command = sealedCommand(patch.command);
  const write = async (tx: Db): Promise<UpdatedServer | null> => {
    let headersDropped: string[] = [];
    if (patch.headers !== undefined || patch.url !== undefined) {
      const [row] = await tx
        .select()
        .from(servers)
        .where(and(eq(servers.id, id), isNull(servers.retiredAt)))
        .for('update');
      if (!row) return null;
      // The stored URL is unsealed only when the patch keeps a masked part of it.
      const stored = {
        url: row.url,
        get target() {
          return unsealUrl(row.url, row.urlSealed, row.name);
        },
      };
      const url = patch.url === undefined ? row.url : keptUrl(stored, patch.url);
      if (patch.url !== undefined) Object.assign(set, sealUrl(url));
      // Seals are bound to the origin: new headers are sealed for the URL they will go to.
      const { dropped } = keptHeaders(row, url, patch.headers);
      if (patch.headers !== undefined) set.headers = sealHeaders(patch.headers, url);
      else if (dropped.length) set.headers = {};
      headersDropped = dropped;
    }
    const [row] = await tx
      .update(servers)
      .set(set)
      .where(and(eq(servers.id, id), isNull(servers.retiredAt)))
      .returning();
    if (!row) return null;
    return { ...unsealed(row), headersDropped };
  };
  try {
    return await db.transaction(write);
  } catch (err) {
    if (
      err instanceof SecretKeyError ||
      err instanceof CredentialsUnreadableError ||
      err instanceof KeptCredentialsError
    )
      throw err;
    throw serverError(err, patch.name ?? id);
  }
}

/** What sealStoredCredentials did. */
export interface SealReport {
  /** Servers whose credentials were (re-)sealed under the current key: plaintext rows from before encryption, or older keys. */
  resealed: string[];
  /** Servers whose credentials no key at hand unseals. */
  unreadable: { id: string; name: string; retired: boolean; reason: string }[];
}

/**
 * Bring every stored credential under the current key (control runs it at start): plaintext
 * values from before encryption — header values, and URLs with credentials, which get their
 * display form — and values sealed under a previous key are sealed again. Without a key it throws
 * SecretKeyError if any server (retired ones included) has credentials: they could neither be
 * stored safely nor unsealed.
 */
export async function sealStoredCredentials(db: Db): Promise<SealReport> {
  const keyring = currentKeyring();
  return db.transaction(async (tx) => {
    const candidates = await tx
      .select()
      .from(servers)
      // A URL can carry credentials only with `@` or `?`: the probe's rule (hasUrlCredentials) decides.
      // A stdio server's env values are sealed like header values (issue 20), rotated with them.
      .where(
        sql`${servers.headers} <> '{}'::jsonb or ${servers.urlSealed} is not null or ${servers.url} ~ '[@?]' or coalesce(${servers.command}->'env', '{}'::jsonb) <> '{}'::jsonb`,
      )
      .orderBy(asc(servers.name))
      .for('update');
    const rows = candidates.filter(
      (r) =>
        Object.keys(r.headers).length > 0 ||
        r.urlSealed !== null ||
        hasUrlCredentials(r.url) ||
        Object.keys(r.command?.env ?? {}).length > 0,
    );
    const report: SealReport = { resealed: [], unreadable: [] };
    if (rows.length === 0) return report;
    if (!keyring) {
      const names = rows.slice(0, 5).map((r) => JSON.stringify(r.name));
      throw new SecretKeyError(
        `${rows.length} stored server(s) have credentials (${names.join(', ')}${rows.length > 5 ? ', …' : ''}) ` +
          `and ${SECRET_KEY_ENV} is not set: set it (${KEY_HINT}), the key they were sealed with if they were. ` +
          'Credentials are never stored or used unsealed, so control does not start without it.',
      );
    }
    for (const row of rows) {
      let plain: Record<string, string>;
      let target: string;
      let env: Record<string, string> = {};
      try {
        target = unsealUrl(row.url, row.urlSealed, row.name, keyring);
        plain = unsealHeaders(row.headers, row.url, row.name, keyring);
        if (row.command) env = unsealEnv(row.command.env ?? {}, row.command.command, row.name, keyring);
      } catch (err) {
        report.unreadable.push({ id: row.id, name: row.name, retired: row.retiredAt !== null, reason: message(err) });
        continue;
      }
      const set: Partial<typeof servers.$inferInsert> = {};
      if (urlNeedsSeal(row.url, row.urlSealed, keyring)) Object.assign(set, sealUrl(target, keyring));
      if (needsReseal(row.headers, keyring)) set.headers = sealHeaders(plain, target, keyring);
      if (row.command && needsReseal(row.command.env ?? {}, keyring))
        set.command = { ...row.command, env: sealEnv(env, row.command.command, keyring) };
      if (Object.keys(set).length === 0) continue;
      await tx.update(servers).set(set).where(eq(servers.id, row.id));
      report.resealed.push(row.name);
    }
    return report;
  });
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
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

/**
 * The server of this name retired last, if any: a fleet that names it again revives it (same id,
 * so its runs, era moves and dashboard links stay one history) rather than starting a stranger.
 */
export async function lastRetiredServer(db: Db, name: string): Promise<{ id: string; retiredAt: Date } | null> {
  const [row] = await db
    .select({ id: servers.id, retiredAt: servers.retiredAt })
    .from(servers)
    .where(and(eq(servers.name, name), isNotNull(servers.retiredAt)))
    .orderBy(desc(servers.retiredAt), desc(servers.id))
    .limit(1);
  return row?.retiredAt ? { id: row.id, retiredAt: row.retiredAt } : null;
}

/**
 * Bring a retired server back under its id with the fields given (credentials sealed anew, as
 * updateServer does); null when it is not retired. Its tests stay retired: reviveTest each one wanted.
 */
export function reviveServer(db: Db, id: string, input: ServerInput): Promise<UpdatedServer | null> {
  return db.transaction(async (tx) => {
    const done = await tx
      .update(servers)
      .set({ retiredAt: null, updatedAt: new Date() })
      .where(and(eq(servers.id, id), isNotNull(servers.retiredAt)))
      .returning({ id: servers.id })
      .catch((err: unknown) => {
        throw serverError(err, input.name);
      });
    if (done.length === 0) return null;
    return updateServer(tx, id, input);
  });
}

/** The test of a server with this mode, pin and depth retired last, if any (the same test, by its key). */
export async function lastRetiredTest(
  db: Db,
  serverId: string,
  mode: 'newest' | 'pinned',
  pinnedRevision: string | null,
  depth: TestDepth = 'handshake',
  /** A script test is the same test only with the same script (jsonb equality: key order aside). */
  script: Script | null = null,
): Promise<Test | null> {
  const [row] = await db
    .select()
    .from(tests)
    .where(
      and(
        eq(tests.serverId, serverId),
        eq(tests.mode, mode),
        eq(tests.depth, depth),
        pinnedRevision === null ? isNull(tests.pinnedRevision) : eq(tests.pinnedRevision, pinnedRevision),
        depth === 'script' && script ? sql`${tests.script} = ${JSON.stringify(script)}::jsonb` : undefined,
        isNotNull(tests.retiredAt),
      ),
    )
    .orderBy(desc(tests.retiredAt), desc(tests.createdAt))
    .limit(1);
  return row ?? null;
}

/** Bring a retired test back (its states and runs are its history); false when it was not retired. */
export async function reviveTest(db: Db, id: string): Promise<boolean> {
  const done = await db
    .update(tests)
    .set({ retiredAt: null })
    .where(and(eq(tests.id, id), isNotNull(tests.retiredAt)))
    .returning({ id: tests.id });
  return done.length > 0;
}

/**
 * A fingerprint of what listActiveTests reads from the fleet (servers, tests): their row counts and
 * newest row version (xmin, the transaction that wrote it). Any insert, update or delete changes it,
 * whoever made it (this control, another, a hand in psql), and reading it is one scan of each table,
 * not a join of every test with its server, state and sealed credentials: control asks it every
 * 30 s and reads the schedule only when it moved. (Test states are left out: they move with every
 * run, and the schedule keeps its revisions from ingest.)
 */
export async function fleetFingerprint(db: Db): Promise<string> {
  const { rows } = (await db.execute(sql`select
    (select count(*) || ':' || coalesce(max(xmin::text::bigint), 0) from ${servers}) || '/' ||
    (select count(*) || ':' || coalesce(max(xmin::text::bigint), 0) from ${tests}) as f`)) as unknown as {
    rows: { f: string }[];
  };
  return rows[0]?.f ?? '';
}

export async function listActiveTests(db: Db, serverId?: string): Promise<ActiveTest[]> {
  const rows = await db
    .select({
      testId: tests.id,
      mode: tests.mode,
      pinnedRevision: tests.pinnedRevision,
      depth: tests.depth,
      testIntervalMs: tests.intervalMs,
      script: sql<Script | null>`${tests.script}`,
      serverId: servers.id,
      serverName: servers.name,
      url: servers.url,
      urlSealed: servers.urlSealed,
      headers: servers.headers,
      storedCommand: servers.command,
      regions: servers.regions,
      intervalMs: servers.intervalMs,
      timeoutMs: servers.timeoutMs,
      detectionIntervalMs: servers.detectionIntervalMs,
      judgement: servers.judgement,
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
  return rows.map(({ urlSealed, storedCommand, ...r }) => {
    let headers: Record<string, string> = {};
    let target = r.url;
    let command: StdioCommand | null = null;
    let credentialsError: string | null = null;
    try {
      target = unsealUrl(r.url, urlSealed, r.serverName);
      headers = unsealHeaders(r.headers, r.url, r.serverName);
      command = unsealedCommand(storedCommand, r.serverName);
    } catch (err) {
      // One server whose credentials cannot be unsealed must not stop the others being probed.
      credentialsError = message(err);
    }
    return {
      ...r,
      target,
      headers,
      command,
      credentialsError,
      currentRevisions: r.currentRevisions ?? {},
      judgement: storedJudgement(r.judgement),
    };
  });
}

export async function createTest(db: Db, input: TestInput): Promise<Test> {
  const pinned = input.pinnedRevision ?? null;
  if (input.mode === 'pinned' && !isRevision(pinned)) {
    throw new Error(`a pinned test needs a known revision, not ${JSON.stringify(pinned)}`);
  }
  if (input.mode === 'newest' && pinned !== null) throw new Error('a newest-supported test pins no revision');
  if ((input.depth === 'script') !== Boolean(input.script))
    throw new Error('a script test, and only a script test, has steps');
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
      .values({
        serverId: input.serverId,
        mode: input.mode,
        pinnedRevision: pinned,
        depth: input.depth ?? 'handshake',
        intervalMs: input.intervalMs ?? null,
        script: input.depth === 'script' ? (input.script ?? null) : null,
      })
      .returning();
    return row!;
  });
}

/** Change a live test (reviving one by its key keeps its history, with the interval the fleet gives now); null when it is not live. */
export async function updateTest(db: Db, id: string, patch: TestPatch): Promise<Test | null> {
  if (patch.intervalMs === undefined) {
    const [row] = await db
      .select()
      .from(tests)
      .where(and(eq(tests.id, id), isNull(tests.retiredAt)));
    return row ?? null;
  }
  const [row] = await db
    .update(tests)
    .set({ intervalMs: patch.intervalMs })
    .where(and(eq(tests.id, id), isNull(tests.retiredAt)))
    .returning();
  return row ?? null;
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

/**
 * Whether any test of the server, retired ones included, ever spoke this revision in any region:
 * a state that speaks it now or spoke it last, or an era move from or to it. Decides whether a
 * pin that fails is one the server "no longer" speaks or one it "does not".
 */
export async function serverHasSpoken(db: Db, serverId: string, revision: string): Promise<boolean> {
  const [state] = await db
    .select({ testId: testStates.testId })
    .from(testStates)
    .innerJoin(tests, eq(tests.id, testStates.testId))
    .where(and(eq(tests.serverId, serverId), eq(testStates.currentRevision, revision)))
    .limit(1);
  if (state) return true;
  const [move] = await db
    .select({ id: eraMoves.id })
    .from(eraMoves)
    .where(
      and(
        eq(eraMoves.serverId, serverId),
        sql`(${eraMoves.fromRevision} = ${revision} or ${eraMoves.toRevision} = ${revision})`,
      ),
    )
    .limit(1);
  return move !== undefined;
}

/** The test's state in each region it has run in. */
export function getTestStates(db: Db, testId: string): Promise<TestState[]> {
  return db.select().from(testStates).where(eq(testStates.testId, testId)).orderBy(asc(testStates.region));
}

function serverError(err: unknown, name: string): Error {
  if (pgCode(err) === '23505') return new DuplicateNameError(name);
  return withoutParams(err);
}
