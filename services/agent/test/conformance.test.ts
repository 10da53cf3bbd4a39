// A conformance-depth job, no bus: the handshake, then the era's checks against real sim servers
// (the official SDK's), each check a span under the job's, the run in the result within the bus's
// bounds. The runner is probe's (services/probe/src/conformance); these tests drive it unchanged.
import { ResultSchema } from '@mcp-fleet/bus';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { BOUNDS, CONFORMANCE_CHECKS, type ConformanceRun, REVISIONS, TargetPolicy } from '@mcp-fleet/probe';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fitConformance, runJob } from '../src/job';
import { DispatcherCache } from '../src/target-policy';
import { LOOPBACK_ALLOWED, makeJob, memoryTracing } from './support';

let sim: Sim;
const tracing = memoryTracing();
const dispatchers = new DispatcherCache(new TargetPolicy({ allow: LOOPBACK_ALLOWED, deny: [] }, { floor: true }));
const ctx = () => ({
  agent: 'agent-test',
  tracer: tracing.provider.getTracer('test'),
  timeoutCapMs: 120_000,
  dispatcher: dispatchers.for(LOOPBACK_ALLOWED),
});

beforeAll(async () => {
  sim = await startSim({ only: ['modern', 'sessions-2025-11-25', 'bearer'] });
});
afterAll(async () => {
  await sim.close();
  await dispatchers.destroy();
});
beforeEach(() => tracing.exporter.reset());

const url = (name: string) => sim.target(name).url;
const CHECK_IDS: ReadonlySet<string> = new Set(CONFORMANCE_CHECKS.map((c) => c.id));

describe.each([
  ['modern', '2026-07-28', 'modern'],
  ['sessions-2025-11-25', '2025-11-25', 'legacy'],
] as const)('a conformance-depth job against %s', (target, revision, era) => {
  it('runs the era checks on the negotiated revision: result.conformance, a span per check under the job span', async () => {
    const job = makeJob({ url: url(target), depth: 'conformance', currentRevision: revision });
    const answer = await runJob(job, ctx());
    if (!answer.ok) throw new Error(answer.poison);
    expect(answer.result.run).toMatchObject({ outcome: 'success', negotiated: revision });
    const run = answer.result.conformance!;
    expect(run).not.toBeNull();
    expect(answer.conformance).toBe(run);
    expect(run.protocol).toMatchObject({ requested: revision, negotiated: revision, era });
    expect(run.checks.length).toBeGreaterThan(0);
    for (const c of run.checks) expect(CHECK_IDS.has(c.id), c.id).toBe(true);
    // The sim's clean SDK servers fail no MUST check (docs/protocol.md, "Conformance by era").
    expect(run.checks.filter((c) => c.status === 'fail' && c.level === 'MUST')).toEqual([]);
    expect(run.pass).toBe(true);
    // The second-connection check goes through the job's own policy-guarded dispatcher.
    if (era === 'modern')
      expect(run.checks.find((c) => c.id === 'tools_list_stable_across_connections')?.status).toBe('pass');
    // The bus takes it as it is.
    expect(ResultSchema.safeParse(answer.result).success).toBe(true);

    // Then the surface of the era it negotiated: one snapshot, one read event on the job's span.
    expect(answer.result.surfaces).toEqual([expect.objectContaining({ era, revision: run.protocol.negotiated })]);
    const surfaceRequests = answer.surfaceReads.reduce((n, r) => n + r.requests, 0);
    expect(surfaceRequests).toBeGreaterThan(0);

    const { parent, children } = tracing.probe(job.jobId);
    expect(parent.name).toBe('mcp.handshake');
    expect(parent.events.filter((e) => e.name === 'mcp.surface.read')).toHaveLength(1);
    expect(parent.attributes).toMatchObject({
      'mcp_fleet.era': era,
      'mcp_fleet.conformance.pass': run.pass,
      'mcp_fleet.requests': answer.result.run!.requests + run.requests + surfaceRequests,
    });
    const checkSpans = children.filter((c) => c.name.startsWith('mcp.conformance.check '));
    expect(checkSpans.map((s) => s.name).sort()).toEqual(run.checks.map((c) => `mcp.conformance.check ${c.id}`).sort());
    for (const c of run.checks) {
      const s = checkSpans.find((x) => x.name === `mcp.conformance.check ${c.id}`)!;
      expect(s.kind).toBe(SpanKind.INTERNAL);
      expect(s.attributes).toMatchObject({
        'mcp_fleet.check.id': c.id,
        'mcp_fleet.check.level': c.level,
        'mcp_fleet.check.status': c.status,
        'mcp_fleet.era': era,
      });
      expect(s.status.code).toBe(
        c.status === 'fail' && c.level === 'MUST' ? SpanStatusCode.ERROR : SpanStatusCode.UNSET,
      );
    }
    // Every request, the checks' included, stays a child of the job's span (as a handshake's do).
    const requests = children.filter((c) => !c.name.startsWith('mcp.conformance.check '));
    expect(requests.length).toBe(answer.result.run!.requests + run.requests + surfaceRequests);
    // The raw negative probes are there, marked, and do not mark the trace as failing.
    const deliberate = requests.filter((c) => c.attributes['mcp_fleet.deliberate'] === true);
    expect(deliberate.length).toBeGreaterThan(0);
    expect(deliberate.every((c) => c.status.code === SpanStatusCode.UNSET)).toBe(true);
  });
});

describe('a conformance-depth job whose handshake does not pass', () => {
  it('runs no checks: conformance is null, no check span', async () => {
    const job = makeJob({ url: url('bearer'), depth: 'conformance', revision: '2025-06-18' });
    const answer = await runJob(job, ctx());
    if (!answer.ok) throw new Error(answer.poison);
    expect(answer.run?.outcome).toBe('auth_required');
    expect(answer.result.conformance).toBeNull();
    const { children } = tracing.probe(job.jobId);
    expect(children.some((c) => c.name.startsWith('mcp.conformance.check'))).toBe(false);
    expect(ResultSchema.safeParse(answer.result).success).toBe(true);
  });
});

describe('a handshake-depth job', () => {
  it('runs no checks', async () => {
    const job = makeJob({ url: url('modern'), currentRevision: '2026-07-28' });
    const answer = await runJob(job, ctx());
    if (!answer.ok) throw new Error(answer.poison);
    expect(answer.result.conformance).toBeNull();
    expect(tracing.probe(job.jobId).children.map((c) => c.name)).toEqual(['POST server/discover']);
  });
});

// Trust boundary: the run's text comes from the server (and from a runner the agent does not own);
// the bus refuses a result over its bounds, and such a job would come back forever.
describe('fitConformance', () => {
  it('brings an oversized run within the bus schema: long text cut, unknown and repeated checks dropped', () => {
    const huge = 'x'.repeat(100_000);
    const evidence = {
      status: 400,
      contentType: huge,
      bodyPreview: huge,
      jsonRpcErrorCode: -32601,
      jsonRpcErrorMessage: huge,
      millis: 1,
      reachabilityFailure: null,
      message: huge,
    };
    const check = (id: string) => ({
      id: id as ConformanceRun['checks'][number]['id'],
      level: 'MUST' as const,
      status: 'fail' as const,
      message: huge,
      evidence,
      millis: 1,
      requests: 1,
    });
    const run: ConformanceRun = {
      target: huge,
      protocol: { requested: '2026-07-28', negotiated: huge, era: 'modern' },
      pass: false,
      outcome: 'success',
      message: huge,
      serverInfo: { name: huge, version: huge, title: huge },
      checks: [
        ...CONFORMANCE_CHECKS.map((c) => check(c.id)),
        check('discover_succeeds'),
        check('mcp_fleet_invented_check'),
      ],
      requests: 40,
      millis: 10,
      evidence,
    };
    const fitted = fitConformance(run);
    expect(fitted.checks.map((c) => c.id)).toEqual(CONFORMANCE_CHECKS.map((c) => c.id));
    expect(fitted.checks.every((c) => c.message.length <= BOUNDS.check)).toBe(true);
    expect(fitted.checks.every((c) => c.evidence!.message.length <= BOUNDS.check)).toBe(true);
    const job = makeJob({ url: 'http://127.0.0.1:1/mcp', depth: 'conformance' });
    const result = {
      jobId: job.jobId,
      kind: 'handshake',
      region: job.region,
      agent: 'agent-test',
      serverId: job.serverId,
      testId: job.testId,
      slot: job.slot,
      scheduledAt: job.scheduledAt,
      startedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
      traceId: null,
      run: {
        mode: 'newest',
        requested: REVISIONS.at(-1)!.revision,
        negotiated: '2026-07-28',
        generation: 'stateless',
        era: 'modern',
        outcome: 'success',
        message: 'ok',
        previousRevision: null,
        requests: 1,
        millis: 1,
        serverInfo: null,
        assertion: null,
        lookup: { performed: false, found: null, requests: 0 },
        evidence: null,
      },
      detection: null,
    };
    expect(ResultSchema.safeParse({ ...result, conformance: run }).success).toBe(false);
    const parsed = ResultSchema.safeParse({ ...result, conformance: fitted });
    expect(parsed.success, JSON.stringify(parsed.error?.issues.slice(0, 3))).toBe(true);
  });
});
