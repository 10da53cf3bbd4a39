// /api/servers: list, add (its pinned tests run once first), read, change and retire a server.
// A server may take its headers from a named credential (`credentialId`, issue 18): copied into its
// own sealed headers (what its jobs send, as before), for the credential's origin only.

import {
  DEFAULT_INTERVAL_MS,
  DEFAULT_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
  MIN_INTERVAL_MS,
  targetProblems,
  testKey,
} from '@mcp-fleet/config';
import { displayCommand, isRevision, type Revision } from '@mcp-fleet/probe';
import {
  createServer,
  createTest,
  type Db,
  DuplicateNameError,
  listActiveTests,
  retireServer,
  serverConformance,
  serverCredential,
  serversOverview,
  setServerCredential,
  stdioCommandsByRegion,
  UnknownCredentialError,
  updateServer,
} from '@mcp-fleet/store';
import { HttpError, parseBody, type Router } from '../http';
import {
  CreateServer,
  commandOf,
  headersOf,
  judgementOf,
  PatchServer,
  storedHeadersCarriedBack,
  timingOf,
} from '../server-body';
import { stdioCommandRefusal } from '../stdio-allowed';
import type { ApiContext } from './context';
import { requestHeaders } from './credentials';
import { liveServer, serverDetail, serverOr404 } from './lookups';
import { checkTarget, type OwnProbes } from './own-probes';
import { noKey } from './params';

export function serverRoutes(router: Router, ctx: ApiContext, probes: OwnProbes): void {
  const checkRegions = (regions: string[] | null | undefined) => {
    for (const r of regions ?? [])
      if (!ctx.regions().includes(r))
        throw new HttpError(400, `regions: "${r}" is not one of the fleet's regions (${ctx.regions().join(', ')})`);
  };

  // The API's boundary for a stdio command (stdio-allowed.ts: the API refuses, a fleet file warns).
  const checkStdioAllowed = async (command: string, regions: string[] | null | undefined) => {
    const refusal = stdioCommandRefusal(
      await stdioCommandsByRegion(ctx.db),
      command,
      regions?.length ? regions : ctx.regions(),
    );
    if (refusal) throw new HttpError(400, `command: ${refusal}`);
  };

  router
    .on('GET', '/api/servers', async () => ({ json: { servers: await serversOverview(ctx.db) } }))
    .on('POST', '/api/servers', async (req) => {
      const body = parseBody(CreateServer, req.body);
      checkRegions(body.regions);
      // The API's boundary for the target: a URL or a command, exactly one, each with its own keys.
      const problem = targetProblems({ ...body, ...(body.credentialId ? { headers: { credential: '' } } : {}) })[0];
      if (problem) throw new HttpError(400, `${problem.key}: ${problem.message}`);
      // A stdio server: control never starts it (agents do, under their own allowlists), so no pin runs here first.
      const command = body.command !== undefined ? commandOf(body) : null;
      if (command) checkStdioTests(body.tests);
      if (command) await checkStdioAllowed(command.command, body.regions);
      const url = command ? displayCommand(command) : body.url!;
      if (!command) checkTarget(url, ctx.policy());
      // Before any probe (a pin's first run): a credential off the URL's origin is refused here.
      const headers = body.credentialId ? await requestHeaders(ctx.db, url, body) : headersOf(body.headers ?? {});
      const given = timingOf(body);
      const intervalMs = given.intervalMs ?? DEFAULT_INTERVAL_MS;
      const timeoutMs = given.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      checkTiming(intervalMs, timeoutMs);
      // Over the defaults; none given is stored as none (null: the defaults, whatever they become).
      const judgement = judgementOf(body);
      const keys = body.tests.map((t) =>
        testKey({ mode: t.revision === 'newest' ? 'newest' : 'pinned', pinnedRevision: t.revision, ...t }),
      );
      if (new Set(keys).size !== keys.length)
        throw new HttpError(400, 'tests: a revision is listed twice at the same depth');
      for (const t of body.tests) checkTestTiming(t, timeoutMs);
      for (const t of body.tests)
        if (!command && isRevision(t.revision)) await probes.runPinFirst(url, headers, timeoutMs, t.revision);
      try {
        const server = await ctx.db.transaction(async (tx) => {
          const s = await createServer(tx, {
            name: body.name,
            url,
            command,
            headers,
            regions: body.regions,
            intervalMs,
            timeoutMs,
            detectionIntervalMs: given.detectionIntervalMs ?? null,
            source: 'api',
            ...(judgement ? { judgement } : {}),
          });
          if (body.credentialId) await setServerCredential(tx, s.id, body.credentialId);
          for (const t of body.tests)
            await createTest(tx, {
              ...(t.revision === 'newest'
                ? { serverId: s.id, mode: 'newest' }
                : { serverId: s.id, mode: 'pinned', pinnedRevision: t.revision as Revision }),
              depth: t.depth,
              intervalMs: t.intervalMs,
              script: t.script,
            });
          return s;
        });
        ctx.changed({ event: 'server_created', server: server.name });
        return { status: 201, json: { server: await detail(ctx.db, server.id) } };
      } catch (err) {
        if (err instanceof DuplicateNameError) throw new HttpError(409, err.message);
        // Deleted between reading its headers and linking it.
        if (err instanceof UnknownCredentialError) throw new HttpError(400, `credentialId: ${err.message}`);
        throw noKey(err);
      }
    })
    .on('GET', '/api/servers/:id', async (req) => ({
      json: { server: await detail(ctx.db, (await serverOr404(ctx.db, req.params.id!)).id) },
    }))
    // Its conformance tests: each check's state per region (since when), and each region's last run's checks.
    .on('GET', '/api/servers/:id/conformance', async (req) => {
      const server = await serverOr404(ctx.db, req.params.id!);
      return { json: { serverId: server.id, tests: await serverConformance(ctx.db, server.id) } };
    })
    .on('PATCH', '/api/servers/:id', async (req) => {
      const server = await liveServer(ctx.db, req.params.id!);
      // GET shows a stdio server's `url` as its command line: carried back, it changes nothing.
      const raw = req.body as Record<string, unknown> | null;
      const carried =
        server.command && raw && typeof raw === 'object' && raw.url === server.url ? { ...raw, url: undefined } : raw;
      const body = parseBody(PatchServer, carried);
      checkRegions(body.regions);
      // The API's boundary: a server stays what it is, HTTP or stdio (a new transport is a new server).
      const stdioKeys = (['command', 'args', 'env', 'cwd'] as const).filter((k) => body[k] !== undefined);
      if (!server.command && stdioKeys.length)
        throw new HttpError(400, `${stdioKeys[0]}: an HTTP server takes no command: add a stdio server instead`);
      // (GET shows a stdio server's headers as `{}`: carried back, they say nothing.)
      const givenHeaders = body.headers !== undefined && Object.keys(body.headers).length > 0;
      if (server.command && (body.url !== undefined || givenHeaders || body.credentialId))
        throw new HttpError(400, 'url: a stdio server takes command, args, env and cwd, not a URL or headers');
      const command = server.command && stdioKeys.length ? commandOf(body, server.command) : undefined;
      // A new command, or the same one sent to other regions, must be one some agent there starts; a
      // change of anything else (its interval while its agents are down, say) is not refused for it.
      const movesRegions =
        body.regions !== undefined && JSON.stringify(body.regions) !== JSON.stringify(server.regions);
      if (server.command && ((command && command.command !== server.command.command) || movesRegions))
        await checkStdioAllowed(
          command?.command ?? server.command.command,
          body.regions !== undefined ? body.regions : server.regions,
        );
      if (body.url) checkTarget(body.url, ctx.policy());
      // GET's masks carried back stand for the stored headers: nothing given, the link stays.
      const carriedBack = body.headers !== undefined && storedHeadersCarriedBack(body.headers, server.headers);
      const headers = body.credentialId
        ? await requestHeaders(ctx.db, body.url ?? server.target, {
            headers: carriedBack ? undefined : body.headers,
            credentialId: body.credentialId,
          })
        : body.headers && headersOf(body.headers, { ...server, url: body.url });
      if (body.tests) {
        // What GET showed comes back unchanged; a different set is for the tests' own routes.
        const now = (await listActiveTests(ctx.db, server.id)).map((t) => `${testKey(t)}/${t.testIntervalMs}`).sort();
        const given = body.tests
          .map(
            (t) =>
              `${testKey({ mode: t.revision === 'newest' ? 'newest' : 'pinned', pinnedRevision: t.revision, ...t })}/${t.intervalMs}`,
          )
          .sort();
        if (JSON.stringify(now) !== JSON.stringify(given))
          throw new HttpError(
            400,
            'tests: add one with POST /api/servers/:id/tests, change its interval with PATCH /api/tests/:id and retire one with DELETE /api/tests/:id (a pinned test runs once before it is saved)',
          );
      }
      const given = timingOf(body);
      const intervalMs = given.intervalMs ?? server.intervalMs;
      const timeoutMs = given.timeoutMs ?? server.timeoutMs;
      checkTiming(intervalMs, timeoutMs);
      const judgement = judgementOf(body, server.judgement);
      const updated = await ctx.db
        .transaction(async (tx) => {
          const done = await updateServer(tx, server.id, {
            name: body.name,
            url: command ? displayCommand(command) : body.url,
            ...(command ? { command } : {}),
            headers,
            regions: body.regions,
            intervalMs,
            timeoutMs,
            detectionIntervalMs: given.detectionIntervalMs,
            // Keys given change, the others keep the stored judgement.
            judgement,
          });
          // The credential named now; none once other headers are given or the URL's move dropped them.
          const link =
            body.credentialId !== undefined
              ? body.credentialId
              : (body.headers !== undefined && !carriedBack) || (done?.headersDropped.length ?? 0) > 0
                ? null
                : undefined;
          if (done && link !== undefined) await setServerCredential(tx, server.id, link);
          return done;
        })
        .catch((err) => {
          if (err instanceof DuplicateNameError) throw new HttpError(409, err.message);
          if (err instanceof UnknownCredentialError) throw new HttpError(400, `credentialId: ${err.message}`);
          throw noKey(err);
        });
      if (!updated) throw new HttpError(404, `no server ${server.id}`);
      ctx.changed();
      // A URL moved to another origin took no stored header with it: the answer names what went.
      const { headersDropped } = updated;
      return {
        json: {
          server: await detail(ctx.db, server.id),
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
      const server = await liveServer(ctx.db, req.params.id!);
      await retireServer(ctx.db, server.id);
      ctx.changed({ event: 'server_retired', server: server.name });
      return { status: 204 };
    });
}

/** A server as GET /api/servers/:id shows it, with the credential its headers came from (id and name, never a value). */
async function detail(db: Db, id: string) {
  return { ...(await serverDetail(db, id)), ...(await serverCredential(db, id)) };
}

/** A stdio server's tests open conversations (handshake, conformance); surface reads and scripts speak HTTP only. */
export function checkStdioTests(tests: readonly { depth: string }[]): void {
  for (const t of tests)
    if (t.depth === 'surface' || t.depth === 'script')
      throw new HttpError(400, `tests: a stdio server's tests are handshake or conformance, not ${t.depth}`);
}

/** A test's own interval leaves room for its run: at least its server's timeout. */
export function checkTestTiming(t: { intervalMs: number | null }, serverTimeoutMs: number): void {
  if (t.intervalMs !== null && t.intervalMs < serverTimeoutMs)
    throw new HttpError(400, `tests: interval: at least the server's timeout (${serverTimeoutMs / 1000}s)`);
}

function checkTiming(intervalMs: number, timeoutMs: number): void {
  if (intervalMs < MIN_INTERVAL_MS) throw new HttpError(400, `interval: at least ${MIN_INTERVAL_MS / 1000}s`);
  if (timeoutMs > MAX_TIMEOUT_MS || timeoutMs > intervalMs)
    throw new HttpError(400, `timeout: at most the interval and at most ${MAX_TIMEOUT_MS / 1000}s`);
}
