// The job and result messages that travel between control and the regional agents. Typed and
// validated at both ends: a message that fails validation is poison (terminated, counted, logged).

import { ScriptSchema } from '@mcp-fleet/config/script-schema';
import { stdioArgs, stdioCommand, stdioCwd, stdioEnv } from '@mcp-fleet/config/stdio-command';
import {
  BOUNDS,
  CAUSE_NAMES,
  CONFORMANCE_CHECKS,
  type ConformanceRun,
  type Detection,
  type HandshakeRun,
  OUTCOME_NAMES,
  REVISION_NAMES,
  REVISIONS,
  SCRIPT_MAX_STEPS,
  type ScriptRun,
  SURFACE_MAX_CHARS,
  SURFACE_MAX_PER_RESULT,
  type SurfaceSnapshot,
  TEST_DEPTHS,
} from '@mcp-fleet/probe';
import { z } from 'zod';
import { REGION_PATTERN, REGION_RULE } from './region';

const revision = z.enum(REVISION_NAMES as [string, ...string[]]);
const outcome = z.enum(OUTCOME_NAMES as [string, ...string[]]);
const region = z.string().max(63).regex(REGION_PATTERN, REGION_RULE);

/** A region name: it is a token of NATS subjects and consumer names. */
export const RegionSchema = region;

export { assertRegion } from './region';

/** A script-depth test's steps: config's schema, the one the fleet file and the API read. */
export { ScriptSchema };

export const JobSchema = z
  .object({
    /** Deterministic per (test or server, region, slot): the dedupe key end to end. */
    jobId: z.string().min(1).max(200),
    kind: z.enum(['handshake', 'detection']),
    region,
    serverId: z.string().min(1),
    serverName: z.string().min(1),
    /** Handshake jobs only. */
    testId: z.string().min(1).nullable(),
    /** An HTTP server's URL; absent when the job carries `command` (exactly one of the two). */
    url: z.string().url().optional(),
    /**
     * A stdio server's command (issue 20), instead of `url`: the program, its args, its whole
     * environment (values may be secrets: never logged) and a working directory relative to the
     * agent's own stdio root. An agent runs it only when its own allowlist names the program.
     * Bounded as the fleet file bounds it (config's stdio-command.ts).
     */
    command: z
      .object({
        command: stdioCommand,
        args: stdioArgs.default([]),
        env: stdioEnv.default({}),
        cwd: stdioCwd.optional(),
      })
      .optional(),
    /** Request headers (credentials) for the target. Never logged. */
    headers: z.record(z.string(), z.string()),
    /**
     * Handshake jobs: `handshake` opens a conversation; `conformance` opens it, then runs the checks of
     * the era it negotiated (docs/protocol.md#conformance-by-era). Absent (a control before depths): handshake.
     */
    depth: z.enum(TEST_DEPTHS).default('handshake'),
    /** Script-depth jobs: the steps to run (null for every other depth). */
    script: ScriptSchema.nullable().default(null),
    /** Handshake jobs: `newest` or the pinned revision. */
    revision: z.union([z.literal('newest'), revision]).nullable(),
    /** The test's current revision in this region, so agents stay stateless: a newest-supported run's move from it, a pin once spoken. */
    currentRevision: revision.nullable(),
    /**
     * A newest-supported job that looks its revision up again (newest first) before it speaks, though
     * no era signal asked (config's Judgement.recheckMs; the scheduler marks one slot per recheck
     * window). Absent (a control before rechecks): false.
     */
    recheck: z.boolean().optional(),
    timeoutMs: z.number().int().positive().max(120_000),
    /** The slot this job belongs to: slot start in ms since the epoch. */
    slot: z.number().int().nonnegative(),
    scheduledAt: z.string().datetime(),
    /**
     * When the job goes stale (ms since the epoch, the scheduler's clock): an agent that takes it
     * later drops it unprobed, as its next slot's job is due by then. Absent (a job from a control
     * before this field): never stale.
     */
    staleAt: z.number().int().nonnegative().optional(),
    /** Address ranges the fleet file allows probes to reach beyond the public internet. */
    allow: z.array(z.string()).default([]),
    /** Address ranges the fleet file denies, whatever allow says. */
    deny: z.array(z.string()).default([]),
    /** URL schemes the fleet file allows (policy.schemes); absent = http and https. */
    schemes: z.array(z.string()).optional(),
  })
  .refine((j) => (j.url === undefined) !== (j.command === undefined), {
    message: 'a job carries a url or a command, exactly one',
    path: ['url'],
  });
export type Job = z.infer<typeof JobSchema>;

// A result's strings carry the probe's bounds (probe's bounds.ts): a result over them, from a
// foreign publisher or a bug, is poison, and no valid result can outgrow NATS's 1 MiB max_payload
// (the worst case is computed from these schemas in test/bounds.test.ts).
const text = (max: number) => z.string().max(max);
const id = z.string().min(1).max(200);
const time = z.string().datetime().max(64);

const serverInfo = z
  .object({ name: text(BOUNDS.name), version: text(BOUNDS.version), title: text(BOUNDS.name).optional() })
  .nullable();
const evidenceFields = z.object({
  status: z.number().int().nullable(),
  contentType: text(BOUNDS.header).nullable(),
  bodyPreview: text(BOUNDS.preview).nullable(),
  jsonRpcErrorCode: z.number().nullable(),
  jsonRpcErrorMessage: text(BOUNDS.preview).nullable(),
  millis: z.number().nullable(),
  reachabilityFailure: text(BOUNDS.label).nullable(),
  message: text(BOUNDS.message),
});
/** A run's deciding reply; over stdio with the end of the process's stderr (detection rows and checks carry none). */
const evidence = evidenceFields.extend({ stderr: text(BOUNDS.stderr).optional() }).nullable();

/** A stdio probe's processes (probe's stdio/report.ts): two findings at most, one per kind. */
const stdioReport = z
  .object({
    processes: z.number().int().nonnegative(),
    stdoutNotJson: z.number().int().nonnegative(),
    findings: z
      .array(z.object({ id: z.enum(['stdout_only_protocol', 'exits_on_stdin_close']), message: text(BOUNDS.check) }))
      .max(2),
    stderr: text(BOUNDS.stderr).nullable(),
  })
  .optional();

export const HandshakeRunSchema = z.object({
  mode: z.enum(['newest', 'pinned']),
  requested: revision.nullable(),
  negotiated: text(BOUNDS.revision).nullable(),
  generation: text(BOUNDS.label).nullable(),
  era: z.enum(['legacy', 'modern']).nullable(),
  outcome,
  message: text(BOUNDS.message),
  previousRevision: revision.nullable(),
  requests: z.number().int().nonnegative(),
  millis: z.number().nonnegative(),
  serverInfo,
  assertion: z
    .object({
      name: text(BOUNDS.label),
      expected: text(BOUNDS.revision),
      actual: text(BOUNDS.revision),
      message: text(BOUNDS.message),
    })
    .nullable(),
  lookup: z.object({ performed: z.boolean(), found: revision.nullable(), requests: z.number().int() }),
  evidence,
  stdio: stdioReport,
});

export const DetectionSchema = z.object({
  outcome: z.enum(['DETECTED', 'NONE', 'RATE_LIMITED']),
  /**
   * The one cause of every revision's failure (probe's cause.ts), shown first by the dashboard: one
   * of a closed set, so a foreign publisher cannot put its own words there. Absent from an agent
   * older than the field: read as none.
   */
  cause: z
    .enum(CAUSE_NAMES as [string, ...string[]])
    .nullable()
    .default(null),
  retryAfterHeader: text(BOUNDS.header).nullable(),
  newestSupported: revision.nullable(),
  serverInfo,
  requests: z.number().int().nonnegative(),
  millis: z.number().nonnegative(),
  revisions: z
    .array(
      z.object({
        revision,
        generation: text(BOUNDS.label),
        supported: z.boolean(),
        note: text(BOUNDS.label),
        sentence: text(BOUNDS.message),
        serverInfo: serverInfo.optional(),
        evidence: evidenceFields.optional(),
      }),
    )
    .max(REVISIONS.length),
  stdio: stdioReport,
});

const checkId = z.enum(CONFORMANCE_CHECKS.map((c) => c.id) as [string, ...string[]]);

/** A conformance run on the wire: its checks' ids come from probe's table, every string bounded. */
export const ConformanceRunSchema = z.object({
  target: text(BOUNDS.message),
  protocol: z.object({
    requested: z.union([z.literal('auto'), z.literal('legacy'), revision]),
    negotiated: text(BOUNDS.revision).nullable(),
    era: z.enum(['legacy', 'modern']).nullable(),
  }),
  pass: z.boolean(),
  outcome,
  message: text(BOUNDS.message),
  serverInfo,
  checks: z
    .array(
      z.object({
        id: checkId,
        level: z.enum(['MUST', 'SHOULD']),
        status: z.enum(['pass', 'fail', 'skip']),
        message: text(BOUNDS.check),
        evidence: evidenceFields.extend({ message: text(BOUNDS.check) }).optional(),
        millis: z.number().nonnegative(),
        requests: z.number().int().nonnegative(),
      }),
    )
    .max(CONFORMANCE_CHECKS.length),
  requests: z.number().int().nonnegative(),
  millis: z.number().nonnegative(),
  evidence,
});

/**
 * A surface snapshot on the wire: canonical JSON that is ASCII only (probe's surface.ts), so its
 * worst case is two bytes a character inside a result (a quote or backslash is escaped).
 */
export const SurfaceSnapshotSchema = z.object({
  era: z.enum(['legacy', 'modern']),
  revision: text(BOUNDS.revision),
  hash: z
    .string()
    .length(64)
    .regex(/^[0-9a-f]{64}$/),
  body: z
    .string()
    .max(SURFACE_MAX_CHARS)
    .regex(/^[\x20-\x7e]*$/),
  truncated: z.boolean(),
});

/** A script-depth run on the wire: one line per step. */
export const ScriptRunSchema = z.object({
  protocol: z.object({
    requested: text(BOUNDS.revision),
    negotiated: text(BOUNDS.revision).nullable(),
    era: z.enum(['legacy', 'modern']).nullable(),
  }),
  pass: z.boolean(),
  outcome,
  message: text(BOUNDS.message),
  steps: z
    .array(
      z.object({
        index: z.number().int().nonnegative().max(SCRIPT_MAX_STEPS),
        method: text(100),
        name: text(BOUNDS.name).nullable(),
        status: z.enum(['pass', 'fail', 'skip']),
        message: text(BOUNDS.check),
        millis: z.number().nonnegative(),
      }),
    )
    .max(SCRIPT_MAX_STEPS),
  requests: z.number().int().nonnegative(),
  millis: z.number().nonnegative(),
});

export const ResultSchema = z
  .object({
    jobId: id,
    kind: z.enum(['handshake', 'detection']),
    region,
    /** The agent that ran the job (hostname/pid or MCP_FLEET_AGENT_ID). */
    agent: id,
    serverId: id,
    testId: id.nullable(),
    slot: z.number().int().nonnegative(),
    scheduledAt: time,
    startedAt: time,
    finishedAt: time,
    /** The OTel trace of the probe, when tracing is on. */
    traceId: z
      .string()
      .length(32)
      .regex(/^[0-9a-f]{32}$/)
      .nullable(),
    run: HandshakeRunSchema.nullable(),
    detection: DetectionSchema.nullable(),
    /** A conformance-depth handshake's checks (null: a handshake-depth job, or one whose handshake failed). */
    conformance: ConformanceRunSchema.nullable().default(null),
    /** What the server offers, one snapshot per era read (conformance and surface depths); empty otherwise. */
    surfaces: z.array(SurfaceSnapshotSchema).max(SURFACE_MAX_PER_RESULT).default([]),
    /** A script-depth run's steps (null for every other depth, or when its handshake failed). */
    script: ScriptRunSchema.nullable().default(null),
  })
  .refine((r) => (r.kind === 'handshake' ? r.run !== null : r.detection !== null), {
    message: 'a handshake result carries a run, a detection result a detection',
  });
export type Result = z.infer<typeof ResultSchema>;

const utf8 = new TextDecoder();

/** Parse a message body; the error names the first bad field. */
export function parseMessage<T>(
  schema: z.ZodType<T>,
  data: Uint8Array | string,
): { ok: true; value: T } | { ok: false; error: string } {
  const json = parseJson(data);
  return json.ok ? checkMessage(schema, json.value) : json;
}

/** A message body's JSON, or why it is not JSON. */
export function parseJson(data: Uint8Array | string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(typeof data === 'string' ? data : utf8.decode(data)) };
  } catch {
    return { ok: false, error: 'not JSON' };
  }
}

/** Check a parsed message against its schema; the error names the first bad field. */
export function checkMessage<T>(
  schema: z.ZodType<T>,
  json: unknown,
): { ok: true; value: T } | { ok: false; error: string } {
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, error: firstIssue(parsed.error) };
}

/** `field.path: message` for the first issue; values are never quoted (a job carries credentials). */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.map(String).join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`;
}

/** A message that does not pass its own schema was never published: the sender's bug, not the bus's. */
export class InvalidMessageError extends TypeError {
  override name = 'InvalidMessageError';
}

/** Validate a message before it is published and serialize it; throws naming the first bad field. */
export function encodeMessage<T>(schema: z.ZodType<T>, value: unknown, what: string): { value: T; data: string } {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new InvalidMessageError(`invalid ${what}: ${firstIssue(parsed.error)}`);
  return { value: parsed.data, data: JSON.stringify(parsed.data) };
}

/** NATS subjects under a namespace (its first token); tests use their own namespaces. */
export function subjects(namespace = 'mcpfleet') {
  return {
    jobs: (region: string) => `${namespace}.jobs.${region}`,
    results: (region: string) => `${namespace}.results.${region}`,
    heartbeats: (region: string) => `${namespace}.heartbeats.${region}`,
  } as const;
}

/** NATS subjects in the default namespace. */
export const SUBJECTS = subjects();

/** How many stdio commands a heartbeat may name, and how long each may be (a path: PATH_MAX). */
export const HEARTBEAT_STDIO_BOUNDS = { commands: 64, commandChars: 4_096 } as const;

export const HeartbeatSchema = z.object({
  agent: z.string().min(1).max(200),
  region,
  version: z.string(),
  inFlight: z.number().int().nonnegative(),
  startedAt: z.string().datetime(),
  at: z.string().datetime(),
  /**
   * The stdio commands this agent runs (issue 20: its allowlist's names and paths it found), so
   * control can refuse a stdio server no agent of its regions would start, and the editor offer only
   * those. Absent: an agent from before stdio (it runs none). Bounded here, at the bus boundary: a
   * heartbeat is anyone's message on the subject, and what it names is stored and shown; too many,
   * too long or not strings is poison, never trimmed.
   */
  stdioCommands: z
    .array(z.string().min(1).max(HEARTBEAT_STDIO_BOUNDS.commandChars))
    .max(HEARTBEAT_STDIO_BOUNDS.commands)
    .optional(),
});
export type Heartbeat = z.infer<typeof HeartbeatSchema>;

// The run and the detection a result carries are probe's HandshakeRun and Detection: the schemas
// are their wire form (strings bounded), written here because zod needs the bounds, and tied to
// probe's types by the compiler — a field added to one and not the other, or a probe value the
// schema would not admit, fails typecheck.
type Holds<T extends true> = T;
type SameFields<A, B> = [Exclude<keyof A, keyof B> | Exclude<keyof B, keyof A>] extends [never] ? true : false;
export type RunIsProbes = Holds<SameFields<z.infer<typeof HandshakeRunSchema>, HandshakeRun>> &
  Holds<HandshakeRun extends z.input<typeof HandshakeRunSchema> ? true : false>;
export type ConformanceIsProbes = Holds<SameFields<z.infer<typeof ConformanceRunSchema>, ConformanceRun>> &
  Holds<ConformanceRun extends z.input<typeof ConformanceRunSchema> ? true : false>;
export type SurfaceIsProbes = Holds<SameFields<z.infer<typeof SurfaceSnapshotSchema>, SurfaceSnapshot>> &
  Holds<SurfaceSnapshot extends z.input<typeof SurfaceSnapshotSchema> ? true : false>;
export type ScriptRunIsProbes = Holds<SameFields<z.infer<typeof ScriptRunSchema>, ScriptRun>>;
export type DetectionIsProbes = Holds<SameFields<z.infer<typeof DetectionSchema>, Detection>> &
  Holds<Detection extends z.input<typeof DetectionSchema> ? true : false>;
