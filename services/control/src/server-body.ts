// A server as POST /api/servers and PATCH /api/servers/:id take it: what GET /api/servers/:id
// answers is accepted back (a round trip: read, change a field, write). So the durations come as
// text (`interval: 30s`) or as GET shows them (`intervalMs: 30000`), tests as `{revision}` or as
// GET shows them (`{id, mode, pinnedRevision, states}`), and the fields only the server sets (id,
// byRegion, health, retiredAt, source, the latest detection's result) are read-only: accepted and left as they are.
// A body is hostile input (the API's trust boundary): every field is checked, and nothing a GET
// did not show is let through.

import {
  detectionSchedule,
  duration,
  headerMap,
  type Judgement,
  judgementEntry,
  judgementFields,
  judgementToEntry,
  MAX_DURATION_MS,
  MIN_INTERVAL_MS,
  newTargetUrl,
  parseDuration,
  regionName,
  resolveJudgement,
  revisionChoice,
  ScriptSchema,
  ScriptStepsSchema,
  type StdioCommand,
  serverName,
  stdioFields,
  TEST_DEPTHS,
  targetUrl,
  testInterval,
} from '@mcp-fleet/config';
import { isRevision, type Script, URL_MASK } from '@mcp-fleet/probe';
import { z } from 'zod';
import { HttpError } from './http';

const headersSchema = headerMap.refine((h) => Object.keys(h).length <= 50, 'at most 50 headers');
const millis = z.number().int().min(1).max(MAX_DURATION_MS);

/** A test's depth as a body gives it (default handshake). */
export const depthField = z.enum(TEST_DEPTHS, { error: 'handshake, conformance, surface or script' });
/** A test's own interval in milliseconds, as GET shows it (null: its depth's default). */
const testMillis = millis.min(MIN_INTERVAL_MS).nullable();

/** A test as a write gives it (`interval` text, null or omitted for its depth's default). */
export const testWrite = z.strictObject({
  revision: revisionChoice,
  depth: depthField.default('handshake'),
  interval: testInterval.nullable().optional(),
  intervalMs: testMillis.optional(),
  /** A script test's steps, as the fleet file writes them (config's ScriptSchema). */
  steps: ScriptStepsSchema.optional(),
  allowWrites: z.boolean().optional(),
  /** Or as GET shows them: `{steps, allowWrites}`. */
  script: ScriptSchema.nullable().optional(),
});

/** A script test, and only a script test, has steps: the script a write gives (or null), else why not. */
export function scriptOfWrite(t: z.output<typeof testWrite>): { script: Script | null } | { problem: string } {
  if (t.steps && t.script) return { problem: 'give `steps` or `script`, not both' };
  const script: Script | null = t.steps
    ? { steps: t.steps as Script['steps'], ...(t.allowWrites ? { allowWrites: true } : {}) }
    : ((t.script as Script | null | undefined) ?? null);
  if (t.depth === 'script' && !script)
    return { problem: 'a script test needs `steps` (the MCP requests it sends, each with what to expect)' };
  if (t.depth !== 'script' && (script || t.allowWrites !== undefined))
    return { problem: 'only a test of depth `script` has steps or allowWrites' };
  return { script };
}

/** A test's interval from a body: text or milliseconds, alike if both; null = its depth's default. */
export function testIntervalOf(t: { interval?: string | null | undefined; intervalMs?: number | null | undefined }) {
  if (t.interval === undefined && t.intervalMs === undefined) return undefined;
  return one('interval', t.interval ?? undefined, t.intervalMs ?? undefined) ?? null;
}

/** A test as a write gives it. */
const testFromWrite = testWrite.transform((t, ctx) => {
  const given = scriptOfWrite(t);
  if ('problem' in given) {
    ctx.addIssue({ code: 'custom', path: ['steps'], message: given.problem });
    return z.NEVER;
  }
  return { revision: t.revision, depth: t.depth, intervalMs: testIntervalOf(t) ?? null, script: given.script };
});

/** A test as GET shows it (its id and states are the server's own). */
const testFromRead = z
  .looseObject({
    mode: z.enum(['newest', 'pinned']),
    pinnedRevision: z.string().nullable(),
    depth: depthField.default('handshake'),
    intervalMs: testMillis.default(null),
    script: ScriptSchema.nullable().default(null),
  })
  .refine((t) => (t.mode === 'newest' ? t.pinnedRevision === null : isRevision(t.pinnedRevision)), {
    message: 'a pinned test names a known revision, a newest one none',
  })
  .refine((t) => (t.depth === 'script') === (t.script !== null), {
    message: 'a script test, and only a script test, has a script',
  })
  .transform((t) => ({
    revision: t.mode === 'newest' ? 'newest' : (t.pinnedRevision as string),
    depth: t.depth,
    intervalMs: t.intervalMs,
    script: t.script as Script | null,
  }));

/**
 * A test as a write gives it, or as GET shows it. Chosen by shape (a `revision` is a write), not
 * by a union, so a bad value's own message reaches the caller ("newest or one of …"), not zod's
 * "Invalid input" for a union none of whose branches matched.
 */
const testSchema = z.unknown().transform((value, ctx) => {
  const schema = value !== null && typeof value === 'object' && 'revision' in value ? testFromWrite : testFromRead;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: 'custom', path: issue.path });
  return z.NEVER;
});

/** `detection` is the schedule (`{interval}`, or null for none) on a write, the latest result on GET. */
const detectionField = z.union([
  detectionSchedule,
  z.null(),
  z.looseObject({ outcome: z.string() }).transform(() => 'result' as const),
]);

/** Fields GET shows that only the server sets: a body may carry them back, and they change nothing. */
const readOnly = {
  id: z.string().optional(),
  byRegion: z.unknown().optional(),
  health: z.unknown().optional(),
  retiredAt: z.unknown().optional(),
  source: z.enum(['file', 'api']).optional(),
  /** The name of the credential its headers came from (`credentialId` says which). */
  credentialName: z.unknown().optional(),
};

/**
 * The named credential whose headers the server sends (issue 18; store's credentials.ts): they
 * are copied into the server's own sealed headers, for the credential's origin only. Given with
 * `headers` it is a 400 (on PATCH, unless they are only GET's masks carried back); PATCH null: the
 * server keeps its headers and no longer names a credential.
 */
const credentialId = z.string().uuid().nullable().optional();

const timing = {
  interval: duration.optional(),
  intervalMs: millis.optional(),
  timeout: duration.optional(),
  timeoutMs: millis.optional(),
  detection: detectionField.optional(),
  detectionIntervalMs: millis.min(MIN_INTERVAL_MS).nullable().optional(),
};

/**
 * How the server is judged across regions, as the fleet file writes it (config's judgementFields:
 * the same bounds, so `quorum: 0`, `slo: 100` or `flapWindow: 1y` is refused here as in the file),
 * at the top level, or as GET shows it: `judgement: {quorum, failAfter, …}`, every key in the file's form.
 */
const judgement = { ...judgementFields, judgement: judgementEntry.optional() };

export const CreateServer = z.strictObject({
  name: serverName,
  /** Or `command` (+ `args`, `env`, `cwd`): a stdio server, exactly one of the two (commandOf). */
  url: newTargetUrl.optional(),
  // The API's boundary for a stdio entry: config's schemas, the ones the fleet file is read with.
  ...stdioFields,
  headers: z.record(z.string(), z.string()).optional(),
  credentialId,
  regions: z.array(regionName).min(1).nullable().default(null),
  tests: z.array(testSchema).default([{ revision: 'newest', depth: 'handshake', intervalMs: null, script: null }]),
  ...timing,
  ...judgement,
  ...readOnly,
});

export const PatchServer = z.strictObject({
  name: serverName.optional(),
  /** Masked parts (as GET shows them) keep the stored ones, on the same origin only (store's kept-credentials). */
  url: targetUrl.optional(),
  /** A stdio server's command fields (env values `••••••` keep the stored ones); an HTTP server takes none. */
  ...stdioFields,
  /** Omitted: the stored headers stay, unless the URL moves to another origin, which drops them. */
  headers: z.record(z.string(), z.string()).optional(),
  credentialId,
  regions: z.array(regionName).min(1).nullable().optional(),
  /** Tests change through their own routes; a body may carry them back unchanged. */
  tests: z.array(testSchema).optional(),
  ...timing,
  ...judgement,
  ...readOnly,
});

type JudgementBody = Pick<z.output<typeof CreateServer>, keyof typeof judgement>;

/**
 * The judgement a body gives over `base` (POST: DEFAULT_JUDGEMENT; PATCH: the stored one), or
 * undefined when it gives none (keep or default). A key given both at the top level and under
 * `judgement` must say the same, as `interval` and `intervalMs` must.
 */
export function judgementOf(body: JudgementBody, base?: Judgement): Judgement | undefined {
  const nested = body.judgement;
  // Only the judgement keys: the body carries the server's other fields too.
  const given: Record<string, unknown> = {};
  for (const k of Object.keys(judgementFields) as (keyof typeof judgementFields)[])
    if (body[k] !== undefined) given[k] = body[k];
  for (const [k, v] of Object.entries(nested ?? {}))
    if (k in given && given[k] !== v) throw new HttpError(400, `${k} and judgement.${k} disagree: give one of them`);
  const entry = { ...nested, ...given };
  if (Object.keys(entry).length === 0) return undefined;
  return resolveJudgement(base ? judgementToEntry(base) : undefined, entry);
}

type Timing = Pick<z.output<typeof CreateServer>, keyof typeof timing>;

/** One duration given as text, as milliseconds, or both alike; undefined when neither. */
function one(field: string, text: string | undefined, ms: number | undefined): number | undefined {
  const fromText = text === undefined ? undefined : parseDuration(text);
  if (fromText !== undefined && ms !== undefined && fromText !== ms)
    throw new HttpError(400, `${field} and ${field}Ms disagree: give one of them`);
  return fromText ?? ms;
}

/** The durations a body gives (undefined: not given, keep or default); detection null is "none". */
export function timingOf(body: Timing): {
  intervalMs: number | undefined;
  timeoutMs: number | undefined;
  detectionIntervalMs: number | null | undefined;
} {
  const schedule = body.detection && body.detection !== 'result' ? body.detection.interval : undefined;
  let detectionIntervalMs: number | null | undefined;
  if (body.detectionIntervalMs !== undefined) {
    // GET's `detection` (a result, or null before the first) says nothing of the schedule.
    detectionIntervalMs = one('detection.interval', schedule, body.detectionIntervalMs ?? undefined) ?? null;
  } else if (schedule !== undefined) detectionIntervalMs = parseDuration(schedule);
  else if (body.detection === null) detectionIntervalMs = null;
  return {
    intervalMs: one('interval', body.interval, body.intervalMs),
    timeoutMs: one('timeout', body.timeout, body.timeoutMs),
    detectionIntervalMs,
  };
}

/**
 * Header values as a write gives them. `••••••` is how GET shows a stored value: on a PATCH it
 * keeps that value, while the URL stays on its origin (credentials stay with their origin); on a
 * POST there is none to keep.
 */
export function headersOf(
  given: Record<string, string>,
  stored?: { headers: Record<string, string>; target: string; url?: string | undefined },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (value !== URL_MASK) {
      out[name] = value;
      continue;
    }
    if (!stored)
      throw new HttpError(400, `headers.${name}: ${URL_MASK} stands for a stored credential: give the value itself`);
    const kept = stored.headers[name];
    if (kept === undefined) throw new HttpError(400, `headers.${name}: no stored value to keep: give the value itself`);
    if (stored.url && new URL(stored.url).origin !== new URL(stored.target).origin)
      throw new HttpError(
        400,
        `headers.${name}: enter its value again (stored credentials are only sent to ${new URL(stored.target).origin})`,
      );
    out[name] = kept;
  }
  const checked = headersSchema.safeParse(out);
  if (!checked.success)
    throw new HttpError(400, checked.error.issues.map((i) => `headers.${i.path.join('.')}: ${i.message}`).join('; '));
  return checked.data;
}

/** Headers exactly as GET shows the stored ones (every stored name, each value masked): a round trip, nothing new. */
export function storedHeadersCarriedBack(given: Record<string, string>, stored: Record<string, string>): boolean {
  const names = Object.keys(given);
  return (
    names.length === Object.keys(stored).length && names.every((n) => given[n] === URL_MASK && Object.hasOwn(stored, n))
  );
}

/**
 * A stdio server's command from a body (issue 20), env values as given, or `••••••` for a stored
 * one (a GET carried back); `stored` is the server's command on a PATCH. Trust boundary: the
 * fields were checked by config's schemas (stdioFields); this only puts them together. Errors
 * name the variable, never its value.
 */
export function commandOf(
  body: {
    command?: string | undefined;
    args?: string[] | undefined;
    env?: Record<string, string> | undefined;
    cwd?: string | undefined;
  },
  stored?: StdioCommand | null,
): StdioCommand {
  const command = body.command ?? stored?.command;
  if (command === undefined) throw new HttpError(400, 'command: give the program a stdio server runs');
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(body.env ?? stored?.env ?? {})) {
    if (value !== URL_MASK || body.env === undefined) {
      env[name] = value;
      continue;
    }
    const kept = stored?.env[name];
    if (kept === undefined)
      throw new HttpError(400, `env.${name}: ${URL_MASK} stands for a stored value: give the value itself`);
    // A value moves only with its own program (its seal is bound to it): another program, enter it again.
    if (stored?.command !== command)
      throw new HttpError(400, `env.${name}: enter its value again (the command changed)`);
    env[name] = kept;
  }
  const cwd = body.cwd ?? stored?.cwd;
  return { command, args: body.args ?? stored?.args ?? [], env, ...(cwd !== undefined ? { cwd } : {}) };
}
