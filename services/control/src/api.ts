// The management API (JSON) on MCP_FLEET_API_PORT, beside control's /metrics. Validation errors
// are 400 with a message, unknown ids 404, changes to a retired server 409 (it stays readable);
// a pinned test is run once before it is saved.

import {
  DEFAULT_INTERVAL_MS,
  DEFAULT_TIMEOUT_MS,
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
} from '@mcp-fleet/config';
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
  AGENT_STALE_AFTER_SECONDS,
  createServer,
  createTest,
  type Db,
  DuplicateNameError,
  decodeCursor,
  encodeCursor,
  eraMovesList,
  fleetSummary,
  getServer,
  getTest,
  getTestStates,
  isRangeName,
  KeptCredentialsError,
  latestDetection,
  listActiveTests,
  listAgents,
  RANGES,
  retireServer,
  retireTest,
  runsOfServer,
  SecretKeyError,
  serverHasSpoken,
  serversOverview,
  storableTime,
  updateServer,
} from '@mcp-fleet/store';
import { z } from 'zod';
import { type ApplyOptions, type ApplySummary, PlanChangedError } from './apply';
import { HttpError, parseBody, Router } from './http';
import { CreateServer, headersOf, PatchServer, timingOf } from './server-body';

export interface ApiContext {
  db: Db;
  /** Apply a fleet definition (as the fleet file at start or on SIGHUP), or plan it (dry run). */
  apply: (fleet: FleetDefinition, opts?: ApplyOptions) => Promise<ApplySummary>;
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

const CreateTest = z.strictObject({ revision: revisionChoice });
const Detect = z.strictObject({
  url: newTargetUrl,
  headers: headersSchema.default({}),
  timeoutMs: z.number().int().min(100).max(20_000).optional(),
});

const uuid = z.string().uuid();

export function createApi(ctx: ApiContext): Router {
  const router = new Router();
  /** Any server, retired ones included: their history stays readable (links to them must not break). */
  const serverOr404 = async (id: string) => {
    if (!uuid.safeParse(id).success) throw new HttpError(404, `no server ${id}`);
    const server = await getServer(ctx.db, id);
    if (!server) throw new HttpError(404, `no server ${id}`);
    return server;
  };
  /** A server to change: a retired one is read-only (409), so history is never rewritten after the fact. */
  const liveServer = async (id: string) => {
    const server = await serverOr404(id);
    if (server.retiredAt) throw new HttpError(409, retiredMessage(server.name, server.retiredAt));
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
  /**
   * Saving a pinned test (docs/protocol.md#saving-a-pinned-test) runs it once first; it is saved
   * only if it passes. Its failure says the server "no longer" speaks the pin only if the server's
   * history shows it once did.
   */
  const runPinFirst = async (
    url: string,
    headers: Record<string, string>,
    timeoutMs: number,
    revision: Revision,
    serverId?: string,
  ) => {
    const spoken = serverId !== undefined && (await serverHasSpoken(ctx.db, serverId, revision));
    const run = await handshake(url, {
      revision,
      headers,
      timeoutMs,
      dispatcher: dispatcher(),
      ...(spoken ? { current: revision } : {}),
    });
    if (!isPassing(run.outcome)) throw new PinRefused(revision, run);
  };

  router
    .on('GET', '/api/servers', async () => ({ json: { servers: await serversOverview(ctx.db) } }))
    .on('POST', '/api/servers', async (req) => {
      const body = parseBody(CreateServer, req.body);
      const headers = headersOf(body.headers);
      checkRegions(body.regions);
      checkTarget(body.url);
      const given = timingOf(body);
      const intervalMs = given.intervalMs ?? DEFAULT_INTERVAL_MS;
      const timeoutMs = given.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      checkTiming(intervalMs, timeoutMs);
      const keys = body.tests.map((t) => t.revision);
      if (new Set(keys).size !== keys.length) throw new HttpError(400, 'tests: a revision is listed twice');
      for (const t of body.tests)
        if (isRevision(t.revision)) await runPinFirst(body.url, headers, timeoutMs, t.revision);
      try {
        const server = await ctx.db.transaction(async (tx) => {
          const s = await createServer(tx, {
            name: body.name,
            url: body.url,
            headers,
            regions: body.regions,
            intervalMs,
            timeoutMs,
            detectionIntervalMs: given.detectionIntervalMs ?? null,
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
      const server = await liveServer(req.params.id!);
      const body = parseBody(PatchServer, req.body);
      const headers = body.headers && headersOf(body.headers, { ...server, url: body.url });
      checkRegions(body.regions);
      if (body.url) checkTarget(body.url);
      if (body.tests) {
        // What GET showed comes back unchanged; a different set is for the tests' own routes.
        const now = (await listActiveTests(ctx.db, server.id)).map((t) => t.pinnedRevision ?? 'newest').sort();
        const given = body.tests.map((t) => t.revision).sort();
        if (JSON.stringify(now) !== JSON.stringify(given))
          throw new HttpError(
            400,
            'tests: add one with POST /api/servers/:id/tests and retire one with DELETE /api/tests/:id (a pinned test runs once before it is saved)',
          );
      }
      const given = timingOf(body);
      const intervalMs = given.intervalMs ?? server.intervalMs;
      const timeoutMs = given.timeoutMs ?? server.timeoutMs;
      checkTiming(intervalMs, timeoutMs);
      const updated = await updateServer(ctx.db, server.id, {
        name: body.name,
        url: body.url,
        headers,
        regions: body.regions,
        intervalMs,
        timeoutMs,
        detectionIntervalMs: given.detectionIntervalMs,
      }).catch((err) => {
        if (err instanceof DuplicateNameError) throw new HttpError(409, err.message);
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
      const server = await liveServer(req.params.id!);
      await retireServer(ctx.db, server.id);
      ctx.changed({ event: 'server_retired', server: server.name });
      return { status: 204 };
    })
    .on('GET', '/api/servers/:id/tests', async (req) => {
      const server = await serverOr404(req.params.id!);
      return { json: { tests: (await serverDetail(ctx.db, server.id)).tests } };
    })
    .on('POST', '/api/servers/:id/tests', async (req) => {
      const server = await liveServer(req.params.id!);
      const body = parseBody(CreateTest, req.body);
      const existing = await listActiveTests(ctx.db, server.id);
      const key = (mode: string, pin: string | null) => (mode === 'newest' ? 'newest' : pin);
      if (existing.some((t) => key(t.mode, t.pinnedRevision) === body.revision))
        throw new HttpError(409, `the server already has a ${body.revision} test`);
      if (isRevision(body.revision))
        await runPinFirst(server.target, server.headers, server.timeoutMs, body.revision, server.id);
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
      await liveServer(test.serverId);
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
      const cursor = before ? cursorParam(before) : undefined;
      const page = await runsOfServer(ctx.db, server.id, {
        limit,
        before: cursor && { finishedAt: cursor.at, id: cursor.id },
      });
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
        before: before ? cursorParam(before) : undefined,
      });
      return { json: { moves: page.moves, next: page.next ? encodeCursor(page.next.at, page.next.id) : null } };
    })
    .on('GET', '/api/fleet/summary', async (req) => ({
      json: await fleetSummary(ctx.db, { since: sinceParam(req.query) ?? new Date(Date.now() - RANGES['24h'].ms) }),
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
            fleet = parseFleet(req.body, 'request body', 'refuse');
          else if (typeof req.body === 'string')
            throw new HttpError(415, 'a JSON body is the fleet as an object; send a fleet file as application/yaml');
          else fleet = fleetFromObject(req.body, 'request body');
        } catch (err) {
          if (err instanceof FleetFileError) throw new HttpError(400, err.message);
          throw err;
        }
        // ?dryRun=1: the plan, nothing written. ?plan=<id of a dry run's plan>: apply only if it is still that plan.
        const dryRun = flagParam(req.query, 'dryRun');
        const expectPlan = req.query.get('plan') ?? undefined;
        if (expectPlan !== undefined && !/^[0-9a-f]{16}$/.test(expectPlan))
          throw new HttpError(400, 'plan: the plan of a dry run (16 hex digits)');
        try {
          return { json: await ctx.apply(fleet, { dryRun, expectPlan }) };
        } catch (err) {
          if (err instanceof PlanChangedError) throw new HttpError(409, err.message);
          throw noKey(err);
        }
      },
      { accepts: ['yaml', 'json'] },
    )
    // Agents stay listed until retention forgets them (7 days): an on-call reader needs to see which are gone.
    .on('GET', '/api/agents', async () => ({
      json: { agents: await listAgents(ctx.db), staleAfterSeconds: AGENT_STALE_AFTER_SECONDS },
    }))
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

/** A pinned test that does not pass today cannot be saved (docs/protocol.md#saving-a-pinned-test). */
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

/** A yes/no query parameter: absent, 0 or false is no; present empty, 1 or true is yes. */
function flagParam(q: URLSearchParams, name: string): boolean {
  const raw = q.get(name);
  if (raw === null || raw === '0' || raw === 'false') return false;
  if (raw === '' || raw === '1' || raw === 'true') return true;
  throw new HttpError(400, `${name}: 1 or 0`);
}

/** `since` is an ISO time or a range (1h, 24h, 7d, 30d). */
function sinceParam(q: URLSearchParams): Date | undefined {
  const raw = q.get('since') ?? q.get('range');
  if (raw === null) return undefined;
  if (isRangeName(raw)) return new Date(Date.now() - RANGES[raw].ms);
  const d = new Date(raw);
  if (!storableTime(d)) throw new HttpError(400, 'since: an ISO time or one of 1h, 24h, 7d, 30d');
  return d;
}

/** The keyset of a `before` cursor this API gave. */
function cursorParam(text: string): { at: Date; id: number } {
  const cursor = decodeCursor(text);
  if (!cursor) throw new HttpError(400, 'before: not a cursor this API gave');
  return cursor;
}

/** Why a retired server refuses a change, and what to do instead. */
function retiredMessage(name: string, retiredAt: Date): string {
  return (
    `server ${JSON.stringify(name)} was retired at ${retiredAt.toISOString()} and is read-only (its history is kept): ` +
    'apply a fleet file that names it, or add a server, to watch it again'
  );
}

async function serverDetail(db: Db, id: string) {
  const [overview] = await serversOverview(db, { ids: [id] });
  const server = await getServer(db, id);
  if (!server) throw new HttpError(404, `no server ${id}`);
  return {
    ...(overview ?? { id, name: server.name, url: server.url, tests: [], byRegion: [] }),
    retiredAt: server.retiredAt,
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
