// The database: the fleet (servers, tests), what happened to it (runs, detections, era moves),
// and who watches it (agents). One schema for Postgres and embedded PGlite.
import type { Judgement, StdioCommand } from '@mcp-fleet/config';
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

/**
 * Named credentials (issue 18): request headers stored once, sealed, and referenced by id (an MCP
 * tool's `mcpCredentialId`), so a secret never passes through an agent's context. Each is bound to
 * one origin, the only one its headers are ever sent to. Read and write them through credentials.ts.
 */
export const credentials = pgTable('credentials', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique(),
  /** `scheme://host:port`: the only origin its headers are ever sent to. */
  origin: text('origin').notNull(),
  /**
   * Header name → value sealed (auth's keyring), bound to the credential's id, its origin and the
   * header's name, so a value copied to another credential, origin or header does not unseal.
   */
  headers: jsonb('headers').$type<Record<string, string>>().notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const servers = pgTable(
  'servers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    /**
     * The URL as it may be shown: when it carries credentials (a user name, password or query
     * values), each is masked (`https://••••••:••••••@host/mcp?token=••••••`) and the whole URL is
     * in `url_sealed`. Rows from before URLs were sealed hold it in the clear until control seals it.
     */
    url: text('url').notNull(),
    /** The whole URL sealed like a header value (credentials.ts), bound to its origin; null when it carries no credentials. */
    urlSealed: text('url_sealed'),
    /**
     * Request headers (credentials): names as given, each value sealed (AES-256-GCM, credentials.ts),
     * `mcpfleet:v1:<key id>:<iv>:<tag>:<ciphertext>`. Read and write them through fleet.ts, which
     * seals and unseals them; rows from before encryption hold plaintext until control re-seals them.
     */
    headers: jsonb('headers').$type<Record<string, string>>().notNull().default({}),
    /**
     * The named credential its headers were copied from (credentials.ts), shown by the API; null
     * when its headers were given directly. The copy in `headers` is what probes send.
     */
    credentialId: uuid('credential_id').references(() => credentials.id),
    /**
     * A stdio server's command (issue 20): program, args, cwd as given and each env value sealed
     * like a header value (auth's sealEnv, bound to the program and the variable); null for an
     * HTTP server. `url` then holds the command line as shown (`stdio: node server.js`), so every
     * page that shows a server's target shows it without knowing about stdio. Read it through fleet.ts.
     */
    command: jsonb('command').$type<StdioCommand>(),
    /** Regions that probe it; null = every region of the fleet. */
    regions: text('regions').array(),
    intervalMs: integer('interval_ms').notNull(),
    timeoutMs: integer('timeout_ms').notNull(),
    /** Detection interval; null = no scheduled detection. */
    detectionIntervalMs: integer('detection_interval_ms'),
    /**
     * How it is judged across regions (config's Judgement, resolved: quorum, failAfter, confirmAfter,
     * flapWindowMs, recheckMs, disagreementAfterMs, slo); null = config's DEFAULT_JUDGEMENT. Read it
     * through config's storedJudgement, which checks it.
     */
    judgement: jsonb('judgement').$type<Judgement>(),
    /** Where it was defined: applying the fleet file retires only the servers the file defined. */
    source: text('source', { enum: ['file', 'api'] })
      .notNull()
      .default('api'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    /** Retired servers keep their history but are no longer probed. */
    retiredAt: timestamp('retired_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('servers_name_active').on(t.name).where(sql`${t.retiredAt} is null`),
    // A fleet apply looks each new name up among the retired (lastRetiredServer, to revive it):
    // without this, one scan of every server per name (9 minutes to apply 60,000 servers).
    index('servers_name_retired').on(t.name, t.retiredAt.desc(), t.id.desc()).where(sql`${t.retiredAt} is not null`),
  ],
);

export const tests = pgTable(
  'tests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    serverId: uuid('server_id')
      .notNull()
      .references(() => servers.id),
    /** `newest` (Newest supported) or `pinned`. */
    mode: text('mode', { enum: ['newest', 'pinned'] }).notNull(),
    pinnedRevision: text('pinned_revision'),
    /**
     * `handshake` (open a conversation), `conformance` (open it, then run the era's checks:
     * docs/protocol.md#conformance-by-era), `surface` (read what it offers in each era) or `script`
     * (run the test's scripted steps).
     */
    depth: text('depth', { enum: ['handshake', 'conformance', 'surface', 'script'] })
      .notNull()
      .default('handshake'),
    /** This test's own interval; null = its server's (a conformance test's default is longer: config). */
    intervalMs: integer('interval_ms'),
    /** A script-depth test's steps and allowWrites (bus's ScriptSchema); null for every other depth. */
    script: jsonb('script'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    retiredAt: timestamp('retired_at', { withTimezone: true }),
  },
  (t) => [index('tests_server').on(t.serverId)],
);

/** A test's state in one region: the revision it currently speaks there and how its last run went. */
export const testStates = pgTable(
  'test_states',
  {
    testId: uuid('test_id')
      .notNull()
      .references(() => tests.id),
    region: text('region').notNull(),
    currentRevision: text('current_revision'),
    lastOutcome: text('last_outcome'),
    lastMessage: text('last_message'),
    lastAssertion: jsonb('last_assertion'),
    /** The pinned test's last run failed its assertion (or the test's last run did not pass). */
    failing: boolean('failing').notNull().default(false),
    /**
     * Failed runs in a row here (0 after a pass). The region counts as failing for the test's
     * consensus once it reaches the server's failAfter (consensus.ts); `failing` is the last run alone.
     */
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    /** Null once retention pruned that run (the state itself stays). */
    // No foreign key since runs are partitioned (0007): retention sets it null when the run goes.
    lastRunId: bigint('last_run_id', { mode: 'number' }),
    lastRunAt: timestamp('last_run_at', { withTimezone: true }),
    /** When the last run was scheduled (the scheduler's one clock): a result from an older slot is late. */
    lastScheduledAt: timestamp('last_scheduled_at', { withTimezone: true }),
  },
  (t) => [
    // The only index: every run updates its state's last_run_id, and an index on it made each of
    // those updates write new index entries (no HOT update), bloating both indexes and keeping
    // autovacuum busy at 1,000 runs/s. Pruning a day's runs (forgetRuns) scans this table instead,
    // once a day. Migration 0010 also leaves a fifth of each page free for HOT updates.
    uniqueIndex('test_states_pk').on(t.testId, t.region),
  ],
);

export const runs = pgTable(
  'runs',
  {
    // Partitioned by day on scheduled_at (migration 0007, hand SQL: drizzle-kit cannot declare
    // partitioning): the primary key must hold the partition key, so it is (id, scheduled_at).
    id: bigserial('id', { mode: 'number' }).notNull(),
    /** Idempotency: one run per job (with its slot time, the partition key), however often its result is delivered. */
    jobId: text('job_id').notNull(),
    testId: uuid('test_id').notNull(),
    serverId: uuid('server_id').notNull(),
    region: text('region').notNull(),
    agent: text('agent').notNull(),
    mode: text('mode').notNull(),
    requested: text('requested'),
    negotiated: text('negotiated'),
    previousRevision: text('previous_revision'),
    generation: text('generation'),
    era: text('era'),
    outcome: text('outcome').notNull(),
    message: text('message').notNull(),
    assertion: jsonb('assertion'),
    evidence: jsonb('evidence'),
    /** A conformance-depth run's checks (probe's CheckResult[]); null for a handshake-depth run. */
    checks: jsonb('checks'),
    /** The surfaces the run read, as references: [{ era, revision, hash }] into surface_blobs. */
    surfaces: jsonb('surfaces'),
    /** A script-depth run's steps (probe's ScriptStepResult[]); null for every other depth. */
    script: jsonb('script'),
    requests: integer('requests').notNull(),
    millis: integer('millis').notNull(),
    traceId: text('trace_id'),
    scheduledAt: timestamp('scheduled_at', { withTimezone: true }).notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true }).notNull(),
    /**
     * When control wrote the run, by the database's clock. Retention keys on it, never on the agent's
     * times above: a skewed or hostile agent could otherwise keep its runs forever or have them pruned at once.
     */
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'runs_pkey', columns: [t.id, t.scheduledAt] }),
    uniqueIndex('runs_job_id').on(t.jobId, t.scheduledAt),
    index('runs_received').on(t.receivedAt),
    // id breaks ties so a server's runs page newest first on the index alone (cursor (finished_at, id)).
    index('runs_server_finished').on(t.serverId, t.finishedAt, t.id),
    // region and outcome ride along so the fleet summary counts a time range from the index alone.
    index('runs_finished').on(t.finishedAt, t.region, t.outcome),
    index('runs_test_region_finished').on(t.testId, t.region, t.finishedAt),
    // Downgrades are rare: the dashboard's downgrade chart reads only them. Migration 0007 adds
    // INCLUDE (region, requested, negotiated, server_id) in hand SQL, so the chart reads the index alone.
    index('runs_downgrades').on(t.finishedAt).where(sql`${t.outcome} = 'downgrade'`),
  ],
);

/** A conformance test's state per check in one region: how the check went last, and since when. */
export const checkStates = pgTable(
  'check_states',
  {
    testId: uuid('test_id')
      .notNull()
      .references(() => tests.id),
    serverId: uuid('server_id').notNull(),
    region: text('region').notNull(),
    checkId: text('check_id').notNull(),
    level: text('level', { enum: ['MUST', 'SHOULD'] }).notNull(),
    /** The era the run that judged it negotiated. */
    era: text('era').notNull(),
    status: text('status', { enum: ['pass', 'fail', 'skip'] }).notNull(),
    message: text('message').notNull(),
    evidence: jsonb('evidence'),
    /** When the check entered its current status ("failing since …"). */
    since: timestamp('since', { withTimezone: true }).notNull(),
    // No foreign key since runs are partitioned (0007): retention sets it null when the run goes.
    lastRunId: bigint('last_run_id', { mode: 'number' }),
    lastRunAt: timestamp('last_run_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('check_states_pk').on(t.testId, t.region, t.checkId),
    index('check_states_server').on(t.serverId),
    index('check_states_last_run').on(t.lastRunId),
  ],
);

/** A check changed status (pass → fail, fail → pass…) in a region: the per-check history. */
export const checkChanges = pgTable(
  'check_changes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    serverId: uuid('server_id').notNull(),
    testId: uuid('test_id').notNull(),
    region: text('region').notNull(),
    checkId: text('check_id').notNull(),
    level: text('level').notNull(),
    fromStatus: text('from_status'),
    toStatus: text('to_status').notNull(),
    // No foreign key since runs are partitioned (0007): retention sets it null when the run goes.
    runId: bigint('run_id', { mode: 'number' }),
    at: timestamp('at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('check_changes_server_at').on(t.serverId, t.at),
    index('check_changes_at').on(t.at),
    index('check_changes_run').on(t.runId),
  ],
);

/** A surface (probe's Surface) stored once per content: an unchanged snapshot costs its hash, not a copy. */
export const surfaceBlobs = pgTable('surface_blobs', {
  /** sha256 of the canonical JSON (probe's surface snapshot hash). */
  hash: text('hash').primaryKey(),
  body: jsonb('body').notNull(),
  /** Characters of the canonical JSON: what the snapshot weighs. */
  bytes: integer('bytes').notNull(),
  truncated: boolean('truncated').notNull().default(false),
  firstSeenAt: timestamp('first_seen_at', { withTimezone: true }).notNull().defaultNow(),
});

/** What a server offers now in one era, as a region last read it: the snapshot the next one is diffed against. */
export const surfaceHeads = pgTable(
  'surface_heads',
  {
    serverId: uuid('server_id').notNull(),
    region: text('region').notNull(),
    era: text('era', { enum: ['legacy', 'modern'] }).notNull(),
    revision: text('revision').notNull(),
    hash: text('hash')
      .notNull()
      .references(() => surfaceBlobs.hash),
    /** When this content was first seen here (the last change). */
    since: timestamp('since', { withTimezone: true }).notNull(),
    // No foreign key since runs are partitioned (0007): retention sets it null when the run goes.
    lastRunId: bigint('last_run_id', { mode: 'number' }),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('surface_heads_pk').on(t.serverId, t.region, t.era), index('surface_heads_hash').on(t.hash)],
);

/** One classified change between two snapshots of a server's surface (same era and region): the change history. */
export const surfaceChanges = pgTable(
  'surface_changes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    serverId: uuid('server_id').notNull(),
    testId: uuid('test_id').notNull(),
    region: text('region').notNull(),
    era: text('era').notNull(),
    // No foreign key since runs are partitioned (0007): retention sets it null when the run goes.
    runId: bigint('run_id', { mode: 'number' }),
    severity: text('severity', { enum: ['breaking', 'warning', 'info'] }).notNull(),
    /** probe's SurfaceKind: tool, resource, resource_template, prompt, capability, server_info. */
    kind: text('kind').notNull(),
    name: text('name').notNull(),
    change: text('change').notNull(),
    message: text('message').notNull(),
    path: text('path'),
    fromHash: text('from_hash').notNull(),
    toHash: text('to_hash').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('surface_changes_server_at').on(t.serverId, t.at),
    index('surface_changes_at').on(t.at),
    index('surface_changes_run').on(t.runId),
    index('surface_changes_breaking').on(t.at).where(sql`${t.severity} = 'breaking'`),
  ],
);

export const detections = pgTable(
  'detections',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    jobId: text('job_id'),
    serverId: uuid('server_id').notNull(),
    region: text('region'),
    outcome: text('outcome').notNull(),
    newestSupported: text('newest_supported'),
    /** The whole detection answer, in its shape (docs/protocol.md#detection). */
    result: jsonb('result').notNull(),
    /** When control recorded it (control's clock, never an agent's): retention keys on it. */
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('detections_job_id').on(t.jobId),
    index('detections_server_at').on(t.serverId, t.at),
    index('detections_at').on(t.at),
  ],
);

/** The negotiated revision changed between runs of a test in a region ("now X, was Y"). */
export const eraMoves = pgTable(
  'era_moves',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    serverId: uuid('server_id').notNull(),
    testId: uuid('test_id').notNull(),
    region: text('region').notNull(),
    /** The run that moved it; null once retention pruned that run (the move itself stays). */
    // No foreign key since runs are partitioned (0007): retention sets it null when the run goes.
    runId: bigint('run_id', { mode: 'number' }),
    fromRevision: text('from_revision').notNull(),
    toRevision: text('to_revision').notNull(),
    /** The move went to an older revision. */
    downgrade: boolean('downgrade').notNull(),
    /** The move crossed eras (legacy ↔ modern). */
    eraChanged: boolean('era_changed').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull(),
    /**
     * `pending` until confirmed; `confirmed` once seen in confirmAfter runs of its region or in a quorum
     * of regions; `flapping` when it went back (A→B→A) inside the flap window: both moves are marked and
     * read as one flap; `superseded` when another move came before it was confirmed. Moves from before
     * confirmation existed read as confirmed. Dashboards and counters use confirmed moves and flaps.
     */
    state: text('state', { enum: ['pending', 'confirmed', 'flapping', 'superseded'] })
      .notNull()
      .default('confirmed'),
    /** Runs in its region that have seen the move (the moving run is the first). */
    seenRuns: integer('seen_runs').notNull().default(1),
    /** When it was confirmed (null unless `confirmed`). */
    confirmedAt: timestamp('confirmed_at', { withTimezone: true }),
    /** How it was confirmed: `runs` (confirmAfter runs in its region) or `regions` (a quorum of regions saw it). */
    confirmedBy: text('confirmed_by', { enum: ['runs', 'regions'] }),
    /** The move back of a flap names the move it undid (both are `flapping`). */
    flapOf: bigint('flap_of', { mode: 'number' }),
  },
  (t) => [
    index('era_moves_at').on(t.at),
    // The move a region's next run may confirm, undo or supersede.
    index('era_moves_test_region_at').on(t.testId, t.region, t.at),
    index('era_moves_server_at').on(t.serverId, t.at),
    // Pruning a run finds the move pointing at it here.
    index('era_moves_run').on(t.runId),
  ],
);

/**
 * Regions negotiating different revisions for one newest-supported test (a rollout behind geo-DNS):
 * opened when they first differ, `revisions` kept current while they do, ended when they agree
 * again. The history stays (retention keeps it like era moves).
 */
export const regionDisagreements = pgTable(
  'region_disagreements',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    serverId: uuid('server_id').notNull(),
    testId: uuid('test_id').notNull(),
    /** Each region's current revision while they disagree: { "eu-west": "2026-07-28", "us-east": "2025-11-25" }. */
    revisions: jsonb('revisions').$type<Record<string, string>>().notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    /** Null while it lasts. */
    endedAt: timestamp('ended_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    // At most one open disagreement per test.
    uniqueIndex('region_disagreements_open').on(t.testId).where(sql`${t.endedAt} is null`),
    index('region_disagreements_server_started').on(t.serverId, t.startedAt),
    index('region_disagreements_started').on(t.startedAt),
  ],
);

/**
 * One row per test and interval bucket (scheduledAt rounded down to the test's interval: it holds
 * one slot of each region, whose offsets differ): how many regions ran it and how many passed.
 * Uptime (a bucket is up when any region passed) and reachability (successes / executions) are
 * read from here (uptime.ts), as Grafana Synthetic Monitoring defines them, without scanning runs.
 * Kept longer than the longest window (30 days).
 */
export const testSlots = pgTable(
  'test_slots',
  {
    testId: uuid('test_id').notNull(),
    serverId: uuid('server_id').notNull(),
    bucket: timestamp('bucket', { withTimezone: true }).notNull(),
    executions: integer('executions').notNull(),
    successes: integer('successes').notNull(),
  },
  (t) => [
    uniqueIndex('test_slots_pk').on(t.testId, t.bucket),
    index('test_slots_server_bucket').on(t.serverId, t.bucket),
    index('test_slots_bucket').on(t.bucket),
  ],
);

export const agents = pgTable('agents', {
  id: text('id').primaryKey(),
  region: text('region').notNull(),
  version: text('version').notNull(),
  inFlight: integer('in_flight').notNull().default(0),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
  /** The latest heartbeat's time, by the agent's clock. */
  lastSeen: timestamp('last_seen', { withTimezone: true }).notNull(),
  /** When control last heard from the agent, by the database's clock: retention forgets silent agents by it. */
  receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  /** The stdio commands it runs, as its latest heartbeat named them (issue 20); empty for an agent from before stdio. */
  stdioCommands: jsonb('stdio_commands').$type<string[]>().notNull().default([]),
});

/**
 * Hourly rollups of runs per test and region (rollups.ts), written by ingest in the run's
 * transaction, so the dashboard's 7 d and 30 d ranges read hours instead of runs. `outcomes` counts
 * runs per outcome in ROLLUP_OUTCOMES order (one more slot for an outcome not listed), `latency`
 * counts runs per LATENCY_BOUNDS_MS bucket (one more for above the last bound).
 */
/**
 * Revision drift's sealed points (drift.ts): the fleet-wide picture at a past instant on the
 * 15-minute grid, once it is old enough that no move can still change it. A results cache that
 * keeps the long ranges from walking every move in them on each read; pruned with the rollups.
 */
export const driftPoints = pgTable(
  'drift_points',
  {
    /** `confirmed` or `raw` (drift.ts' views). */
    view: text('view').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull(),
    /** Distinct servers per revision (by name: the revision table may grow). */
    servers: jsonb('servers').$type<Record<string, number>>().notNull(),
    /** Distinct servers speaking any revision. */
    speaking: integer('speaking').notNull(),
  },
  (t) => [primaryKey({ name: 'drift_points_pk', columns: [t.view, t.at] })],
);

export const runRollupsHourly = pgTable(
  'run_rollups_hourly',
  {
    testId: uuid('test_id').notNull(),
    serverId: uuid('server_id').notNull(),
    region: text('region').notNull(),
    /** The hour of the runs' finished_at (UTC), its start. */
    hour: timestamp('hour', { withTimezone: true }).notNull(),
    runs: integer('runs').notNull(),
    outcomes: integer('outcomes').array().notNull(),
    latency: integer('latency').array().notNull(),
    maxMillis: integer('max_millis').notNull(),
  },
  (t) => [
    uniqueIndex('run_rollups_hourly_pk').on(t.testId, t.region, t.hour),
    index('run_rollups_hourly_server_hour').on(t.serverId, t.hour),
    index('run_rollups_hourly_hour').on(t.hour),
  ],
);
