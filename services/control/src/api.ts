// The management API (JSON) on MCP_FLEET_API_PORT, beside control's /metrics. Validation errors
// are 400 with a message, unknown ids 404; a pinned test is run once before it is saved.
import {
  detect,
  guardedDispatcher,
  handshake,
  isPassing,
  isRevision,
  type Revision,
  type TargetPolicy,
} from '@mcp-fleet/probe';
import {
  createServer,
  createTest,
  type Db,
  DuplicateNameError,
  eraMovesList,
  fleetSummary,
  getServer,
  getTest,
  getTestStates,
  KeptCredentialsError,
  latestDetection,
  listActiveTests,
  listAgents,
  retireServer,
  retireTest,
  runsOfServer,
  SecretKeyError,
  serversOverview,
  updateServer,
} from '@mcp-fleet/store';
import { z } from 'zod';
import type { ApplySummary } from './apply';
import { parseDuration } from './durations';
import {
  DEFAULT_INTERVAL_MS,
  DEFAULT_TIMEOUT_MS,
  detectionSchedule,
  duration,
  type FleetDefinition,
  FleetFileError,
  fleetFromObject,
  headerMap,
  MAX_TIMEOUT_MS,
  MIN_INTERVAL_MS,
  newTargetUrl,
  parseFleet,
  regionName,
  revisionChoice,
  serverName,
  targetUrl,
} from './fleet-file';
import { HttpError, parseBody, Router } from './http';

export interface ApiContext {
  db: Db;
  /** Apply a fleet definition (as the fleet file at start or on SIGHUP). */
  apply: (fleet: FleetDefinition) => Promise<ApplySummary>;
  regions: () => string[];
  /** The fleet's policy: what a server's URL may be. */
  policy: () => TargetPolicy;
  /** Where control's own probes may go: its floor narrowed by the fleet's policy. */
  probePolicy: () => TargetPolicy;
  /** The fleet changed: reschedule (and, for a server created or retired, tell the operator). */
  changed: (change?: { event: 'server_created' | 'server_retired'; server: string }) => void;
  metricsText: () => Promise<{ text: string; contentType: string }>;
  ready: () => boolean;
}

const headersSchema = headerMap.refine((h) => Object.keys(h).length <= 50, 'at most 50 headers');

const CreateServer = z.strictObject({
  name: serverName,
  url: newTargetUrl,
  headers: headersSchema.default({}),
  regions: z.array(regionName).min(1).nullable().default(null),
  interval: duration.optional(),
  timeout: duration.optional(),
  tests: z.array(z.strictObject({ revision: revisionChoice })).default([{ revision: 'newest' }]),
  detection: detectionSchedule.nullable().default(null),
});

const PatchServer = z.strictObject({
  /** Masked parts (as GET shows them) keep the stored ones, on the same origin only (store's kept-credentials). */
  url: targetUrl.optional(),
  /** Omitted: the stored headers stay, unless the URL moves to another origin, which drops them. */
  headers: headersSchema.optional(),
  regions: z.array(regionName).min(1).nullable().optional(),
  interval: duration.optional(),
  timeout: duration.optional(),
  detection: detectionSchedule.nullable().optional(),
});

const CreateTest = z.strictObject({ revision: revisionChoice });
const Detect = z.strictObject({
  url: newTargetUrl,
  headers: headersSchema.default({}),
  timeoutMs: z.number().int().min(100).max(20_000).optional(),
});

const uuid = z.string().uuid();
const RANGES: Record<string, number> = {
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
};

export function createApi(ctx: ApiContext): Router {
  const router = new Router();
  const serverOr404 = async (id: string) => {
    if (!uuid.safeParse(id).success) throw new HttpError(404, `no server ${id}`);
    const server = await getServer(ctx.db, id);
    if (!server || server.retiredAt) throw new HttpError(404, `no server ${id}`);
    return server;
  };
  const checkRegions = (regions: string[] | null | undefined) => {
    for (const r of regions ?? [])
      if (!ctx.regions().includes(r))
        throw new HttpError(400, `regions: "${r}" is not one of the fleet's regions (${ctx.regions().join(', ')})`);
  };
  const checkTarget = (url: string, policy = ctx.policy()) => {
    const refused = policy.refusesUrl(new URL(url));
    if (refused) throw new HttpError(400, `url: ${refused}`);
  };
  /**
   * Control's own probes (a pin's first run, /api/detect) dial through a guarded dispatcher, as
   * agents do, under control's floor narrowed by the fleet's policy: checkTarget judges address
   * literals, the dispatcher what a name resolves to.
   */
  const guarded = new WeakMap<TargetPolicy, ReturnType<typeof guardedDispatcher>>();
  const dispatcher = () => {
    const policy = ctx.probePolicy();
    let d = guarded.get(policy);
    if (!d) {
      d = guardedDispatcher(policy);
      guarded.set(policy, d);
    }
    return d;
  };
  /** Seed 001: saving a pinned test runs it once first; it is saved only if it passes. */
  const runPinFirst = async (url: string, headers: Record<string, string>, timeoutMs: number, revision: Revision) => {
    const run = await handshake(url, { revision, headers, timeoutMs, dispatcher: dispatcher() });
    if (!isPassing(run.outcome)) throw new PinRefused(revision, run);
  };

  router
    .on('GET', '/api/servers', async () => ({ json: { servers: await serversOverview(ctx.db) } }))
    .on('POST', '/api/servers', async (req) => {
      const body = parseBody(CreateServer, req.body);
      checkRegions(body.regions);
      checkTarget(body.url);
      const intervalMs = parseDuration(body.interval ?? '') ?? DEFAULT_INTERVAL_MS;
      const timeoutMs = parseDuration(body.timeout ?? '') ?? DEFAULT_TIMEOUT_MS;
      checkTiming(intervalMs, timeoutMs);
      const keys = body.tests.map((t) => t.revision);
      if (new Set(keys).size !== keys.length) throw new HttpError(400, 'tests: a revision is listed twice');
      for (const t of body.tests)
        if (isRevision(t.revision)) await runPinFirst(body.url, body.headers, timeoutMs, t.revision);
      try {
        const server = await ctx.db.transaction(async (tx) => {
          const s = await createServer(tx, {
            name: body.name,
            url: body.url,
            headers: body.headers,
            regions: body.regions,
            intervalMs,
            timeoutMs,
            detectionIntervalMs: body.detection ? (parseDuration(body.detection.interval) ?? null) : null,
            source: 'api',
          });
          for (const t of body.tests)
            await createTest(
              tx,
              t.revision === 'newest'
                ? { serverId: s.id, mode: 'newest' }
                : { serverId: s.id, mode: 'pinned', pinnedRevision: t.revision as Revision },
            );
          return s;
        });
        ctx.changed({ event: 'server_created', server: server.name });
        return { status: 201, json: { server: await serverDetail(ctx.db, server.id) } };
      } catch (err) {
        if (err instanceof DuplicateNameError) throw new HttpError(409, err.message);
        throw noKey(err);
      }
    })
    .on('GET', '/api/servers/:id', async (req) => ({
      json: { server: await serverDetail(ctx.db, (await serverOr404(req.params.id!)).id) },
    }))
    .on('PATCH', '/api/servers/:id', async (req) => {
      const server = await serverOr404(req.params.id!);
      const body = parseBody(PatchServer, req.body);
      checkRegions(body.regions);
      if (body.url) checkTarget(body.url);
      const intervalMs = body.interval ? parseDuration(body.interval)! : server.intervalMs;
      const timeoutMs = body.timeout ? parseDuration(body.timeout)! : server.timeoutMs;
      checkTiming(intervalMs, timeoutMs);
      const updated = await updateServer(ctx.db, server.id, {
        url: body.url,
        headers: body.headers,
        regions: body.regions,
        intervalMs,
        timeoutMs,
        detectionIntervalMs:
          body.detection === undefined
            ? undefined
            : body.detection
              ? (parseDuration(body.detection.interval) ?? null)
              : null,
      }).catch((err) => {
        throw noKey(err);
      });
      if (!updated) throw new HttpError(404, `no server ${server.id}`);
      ctx.changed();
      // A URL moved to another origin took no stored header with it: the answer names what went.
      const { headersDropped } = updated;
      return {
        json: {
          server: await serverDetail(ctx.db, server.id),
          headersDropped,
          ...(headersDropped.length
            ? {
                notice: `the URL moved to another origin, so the stored headers ${headersDropped.join(', ')} were dropped: give them again to send them there`,
              }
            : {}),
        },
      };
    })
    .on('DELETE', '/api/servers/:id', async (req) => {
      const server = await serverOr404(req.params.id!);
      await retireServer(ctx.db, server.id);
      ctx.changed({ event: 'server_retired', server: server.name });
      return { status: 204 };
    })
    .on('GET', '/api/servers/:id/tests', async (req) => {
      const server = await serverOr404(req.params.id!);
      return { json: { tests: (await serverDetail(ctx.db, server.id)).tests } };
    })
    .on('POST', '/api/servers/:id/tests', async (req) => {
      const server = await serverOr404(req.params.id!);
      const body = parseBody(CreateTest, req.body);
      const existing = await listActiveTests(ctx.db, server.id);
      const key = (mode: string, pin: string | null) => (mode === 'newest' ? 'newest' : pin);
      if (existing.some((t) => key(t.mode, t.pinnedRevision) === body.revision))
        throw new HttpError(409, `the server already has a ${body.revision} test`);
      if (isRevision(body.revision)) await runPinFirst(server.target, server.headers, server.timeoutMs, body.revision);
      const test = await createTest(
        ctx.db,
        body.revision === 'newest'
          ? { serverId: server.id, mode: 'newest' }
          : { serverId: server.id, mode: 'pinned', pinnedRevision: body.revision as Revision },
      );
      ctx.changed();
      return { status: 201, json: { test: { id: test.id, mode: test.mode, pinnedRevision: test.pinnedRevision } } };
    })
    .on('DELETE', '/api/tests/:id', async (req) => {
      const id = req.params.id!;
      const test = uuid.safeParse(id).success ? await getTest(ctx.db, id) : null;
      if (!test || test.retiredAt) throw new HttpError(404, `no test ${id}`);
      await retireTest(ctx.db, id);
      ctx.changed();
      return { status: 204 };
    })
    .on('GET', '/api/tests/:id', async (req) => {
      const id = req.params.id!;
      const test = uuid.safeParse(id).success ? await getTest(ctx.db, id) : null;
      if (!test) throw new HttpError(404, `no test ${id}`);
      return {
        json: {
          test: {
            id: test.id,
            serverId: test.serverId,
            mode: test.mode,
            pinnedRevision: test.pinnedRevision,
            retiredAt: test.retiredAt,
            states: await getTestStates(ctx.db, id),
          },
        },
      };
    })
    .on('GET', '/api/servers/:id/runs', async (req) => {
      const server = await serverOr404(req.params.id!);
      const limit = intParam(req.query, 'limit', 50, 1, 500);
      const before = req.query.get('before');
      const cursor = before ? decodeCursor(before) : undefined;
      const page = await runsOfServer(ctx.db, server.id, { limit, before: cursor });
      return { json: { runs: page.runs, next: page.next ? encodeCursor(page.next.finishedAt, page.next.id) : null } };
    })
    .on('GET', '/api/servers/:id/detection', async (req) => {
      const server = await serverOr404(req.params.id!);
      return { json: { detection: await latestDetection(ctx.db, server.id) } };
    })
    .on('GET', '/api/era-moves', async (req) => {
      const serverId = req.query.get('server') ?? undefined;
      if (serverId && !uuid.safeParse(serverId).success) throw new HttpError(400, 'server: a server id');
      const region = req.query.get('region') ?? undefined;
      if (region !== undefined && !regionName.safeParse(region).success)
        throw new HttpError(400, 'region: a region name');
      const before = req.query.get('before');
      const page = await eraMovesList(ctx.db, {
        since: sinceParam(req.query),
        serverId,
        region,
        limit: intParam(req.query, 'limit', 50, 1, 500),
        before: before ? ((c) => ({ at: c.finishedAt, id: c.id }))(decodeCursor(before)) : undefined,
      });
      return { json: { moves: page.moves, next: page.next ? encodeCursor(page.next.at, page.next.id) : null } };
    })
    .on('GET', '/api/fleet/summary', async (req) => ({
      json: await fleetSummary(ctx.db, { since: sinceParam(req.query) ?? new Date(Date.now() - RANGES['24h']!) }),
    }))
    .on(
      'POST',
      '/api/fleet',
      async (req) => {
        // A fleet sent here is read by its sender: `${NAME}` in a YAML body is refused, never expanded
        // against control's environment (issue 12: any page could read it), and the JSON form — what
        // `mcp-fleet apply` sends, expanded on the operator's side — is taken literally. YAML only by
        // its own media type: a JSON string body is no fleet file.
        if (req.body === undefined)
          throw new HttpError(
            415,
            'send the fleet as JSON, its object form (content-type: application/json), or the file as YAML (application/yaml)',
          );
        let fleet: FleetDefinition;
        try {
          if (req.bodyKind === 'yaml' && typeof req.body === 'string')
            fleet = parseFleet(req.body, 'the fleet file sent', 'refuse');
          else if (typeof req.body === 'string')
            throw new HttpError(415, 'a JSON body is the fleet as an object; send a fleet file as application/yaml');
          else fleet = fleetFromObject(req.body, 'the fleet sent');
        } catch (err) {
          if (err instanceof FleetFileError) throw new HttpError(400, err.message);
          throw err;
        }
        return { json: await ctx.apply(fleet).catch((err) => Promise.reject(noKey(err))) };
      },
      { accepts: ['yaml', 'json'] },
    )
    .on('GET', '/api/agents', async () => ({ json: { agents: await listAgents(ctx.db) } }))
    .on('GET', '/api/regions', async () => ({ json: { regions: ctx.regions() } }))
    .on('POST', '/api/detect', async (req) => {
      const body = parseBody(Detect, req.body);
      checkTarget(body.url, ctx.probePolicy());
      return {
        json: await detect(body.url, {
          headers: body.headers,
          timeoutMs: body.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          dispatcher: dispatcher(),
        }),
      };
    })
    .on('GET', '/metrics', async () => {
      const m = await ctx.metricsText();
      return { text: m.text, contentType: m.contentType };
    })
    .on('GET', '/healthz', async () => ({ json: { ok: true } }))
    .on('GET', '/readyz', async () => {
      if (!ctx.ready()) throw new HttpError(503, 'not ready');
      return { json: { ok: true } };
    });
  return router;
}

/** A pinned test that does not pass today cannot be saved (seed 001). */
export class PinRefused extends HttpError {
  constructor(
    revision: string,
    readonly run: Awaited<ReturnType<typeof handshake>>,
  ) {
    super(
      422,
      `the pinned test did not pass, so it was not saved: ${run.message} (outcome ${run.outcome}, revision ${revision})`,
    );
  }
}

/**
 * Credentials sent to a control without MCP_FLEET_SECRET_KEY: the operator's to fix, and the
 * message says how (503). A stored credential asked to go where it may not: the request's to fix (400).
 */
function noKey(err: unknown): unknown {
  if (err instanceof SecretKeyError) return new HttpError(503, err.message);
  if (err instanceof KeptCredentialsError) return new HttpError(400, err.message);
  return err;
}

function checkTiming(intervalMs: number, timeoutMs: number): void {
  if (intervalMs < MIN_INTERVAL_MS) throw new HttpError(400, `interval: at least ${MIN_INTERVAL_MS / 1000}s`);
  if (timeoutMs > MAX_TIMEOUT_MS || timeoutMs > intervalMs)
    throw new HttpError(400, `timeout: at most the interval and at most ${MAX_TIMEOUT_MS / 1000}s`);
}

function intParam(q: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = q.get(name);
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new HttpError(400, `${name}: a whole number from ${min} to ${max}`);
  return n;
}

/** `since` is an ISO time or a range (1h, 24h, 7d, 30d). */
function sinceParam(q: URLSearchParams): Date | undefined {
  const raw = q.get('since') ?? q.get('range');
  if (raw === null) return undefined;
  if (RANGES[raw]) return new Date(Date.now() - RANGES[raw]);
  const d = new Date(raw);
  if (!storableTime(d)) throw new HttpError(400, 'since: an ISO time or one of 1h, 24h, 7d, 30d');
  return d;
}

/** A time Postgres can compare with (years 1 to 9999; further out, its ISO form does not parse there). */
function storableTime(d: Date): boolean {
  const year = d.getUTCFullYear();
  return !Number.isNaN(d.getTime()) && year >= 1 && year <= 9999;
}

function encodeCursor(at: Date, id: number): string {
  return Buffer.from(`${at.toISOString()}|${id}`).toString('base64url');
}

function decodeCursor(text: string): { finishedAt: Date; id: number } {
  const [at = '', id = ''] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  const finishedAt = new Date(at);
  const n = Number(id);
  if (!storableTime(finishedAt) || !Number.isSafeInteger(n) || n < 0)
    throw new HttpError(400, 'before: not a cursor this API gave');
  return { finishedAt, id: n };
}

async function serverDetail(db: Db, id: string) {
  const overview = (await serversOverview(db)).find((s) => s.id === id);
  const server = await getServer(db, id);
  if (!server) throw new HttpError(404, `no server ${id}`);
  return {
    ...(overview ?? { id, name: server.name, url: server.url, tests: [], byRegion: [] }),
    regions: server.regions,
    intervalMs: server.intervalMs,
    timeoutMs: server.timeoutMs,
    detectionIntervalMs: server.detectionIntervalMs,
    source: server.source,
    // Header names only, values masked: credentials never leave through the API.
    headers: Object.fromEntries(Object.keys(server.headers).map((k) => [k, '••••••'])),
    detection: await latestDetection(db, id),
  };
}
