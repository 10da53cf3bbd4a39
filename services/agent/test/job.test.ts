// One job, no bus: the probe runs against real sim servers inside its span, and the result and
// spans say what happened, without a credential anywhere.
import { SIM_BEARER_TOKEN, type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { TargetPolicy } from '@mcp-fleet/probe';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runJob } from '../src/job';
import { DispatcherCache } from '../src/target-policy';
import { LOOPBACK_ALLOWED, makeJob, memoryTracing } from './support';

let sim: Sim;
const tracing = memoryTracing();
const dispatchers = new DispatcherCache(new TargetPolicy({ allow: LOOPBACK_ALLOWED, deny: [] }, { floor: true }));
const tracer = tracing.provider.getTracer('test');
const ctx = (allow: string[] = ['127.0.0.0/8']) => ({
  agent: 'agent-test',
  tracer,
  timeoutCapMs: 120_000,
  dispatcher: dispatchers.for(allow),
});

beforeAll(async () => {
  sim = await startSim({
    only: ['modern', 'modern-only', 'sessions-2025-03-26', 'sessions-2025-11-25', 'bearer', 'silent', 'legacy-sse'],
  });
});
afterAll(async () => {
  await sim.close();
  await dispatchers.destroy();
});
beforeEach(() => tracing.exporter.reset());

const url = (name: string) => sim.target(name).url;

describe('a handshake job', () => {
  it('runs the same without a recorded trace (no OTLP endpoint): same run and traffic, no trace id, no span', async () => {
    // A span that is not recorded skips its children's attributes (spans.ts): what the job reports
    // must not depend on it.
    const job = makeJob({ url: url('sessions-2025-11-25'), revision: '2025-11-25' });
    const answer = await runJob(job, { ...ctx(), tracer: trace.getTracer('not-recorded') });
    if (!answer.ok) throw new Error(answer.poison);
    expect(answer.result.run).toMatchObject({ outcome: 'success', negotiated: '2025-11-25', requests: 3 });
    expect(answer.result.traceId).toBeNull();
    expect(tracing.exporter.getFinishedSpans()).toHaveLength(0);
    const recorded = await runJob(job, ctx());
    expect(recorded.ok && recorded.traffic).toEqual(answer.traffic);
  });

  it('becomes a result with the run, and a CLIENT span with a child per HTTP request', async () => {
    const job = makeJob({ url: url('sessions-2025-11-25'), revision: '2025-11-25' });
    const answer = await runJob(job, ctx());
    if (!answer.ok) throw new Error(answer.poison);
    const { result } = answer;
    expect(result).toMatchObject({
      jobId: job.jobId,
      kind: 'handshake',
      region: 'eu-west',
      agent: 'agent-test',
      serverId: 'server-1',
      testId: 'test-1',
      slot: job.slot,
      scheduledAt: job.scheduledAt,
      detection: null,
    });
    expect(result.run).toMatchObject({ outcome: 'success', negotiated: '2025-11-25', requests: 3 });
    expect(Date.parse(result.finishedAt)).toBeGreaterThanOrEqual(Date.parse(result.startedAt));

    const { parent, children } = tracing.probe(job.jobId);
    expect(result.traceId).toBe(parent.spanContext().traceId);
    expect(parent.name).toBe('mcp.handshake');
    expect(parent.kind).toBe(SpanKind.CLIENT);
    expect(parent.parentSpanContext).toBeUndefined();
    const port = Number(new URL(job.url!).port);
    expect(parent.attributes).toMatchObject({
      'mcp.protocol.version': '2025-11-25',
      'server.address': '127.0.0.1',
      'server.port': port,
      'url.full': job.url,
      'http.response.status_code': 200,
      'jsonrpc.request.id': '1',
      'mcp_fleet.region': 'eu-west',
      'mcp_fleet.job.id': job.jobId,
      'mcp_fleet.outcome': 'success',
      'mcp_fleet.requested_version': '2025-11-25',
      'mcp_fleet.negotiated_version': '2025-11-25',
    });
    expect(parent.attributes['mcp.session.id']).toMatch(/\S+/);
    expect(parent.attributes['error.type']).toBeUndefined();
    expect(parent.status.code).toBe(SpanStatusCode.UNSET);

    expect(children.map((c) => c.name)).toEqual(['POST initialize', 'POST notifications/initialized', 'DELETE']);
    expect(children.every((c) => c.kind === SpanKind.CLIENT)).toBe(true);
    expect(children.every((c) => c.spanContext().traceId === parent.spanContext().traceId)).toBe(true);
    expect(children[0]?.attributes).toMatchObject({
      'mcp.method.name': 'initialize',
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'jsonrpc.request.id': '1',
      'server.port': port,
    });
    expect(children[0]?.attributes['mcp.session.id']).toBe(parent.attributes['mcp.session.id']);
    expect(children[1]?.attributes['mcp.method.name']).toBe('notifications/initialized');
    expect(children[2]?.attributes['mcp.method.name']).toBeUndefined();
    // Children sit inside their parent's time.
    const ms = (t: [number, number]) => t[0] * 1e3 + t[1] / 1e6;
    for (const c of children) {
      expect(ms(c.startTime)).toBeGreaterThanOrEqual(ms(parent.startTime) - 1);
      expect(ms(c.endTime)).toBeLessThanOrEqual(ms(parent.endTime) + 1);
    }
  });

  it('puts no query string on spans (the HTTP+SSE endpoint carries the session in it)', async () => {
    const job = makeJob({ url: url('legacy-sse'), revision: '2024-11-05' });
    await runJob(job, ctx());
    const { children } = tracing.probe(job.jobId);
    expect(children.map((c) => c.name)).toEqual(['GET', 'POST initialize', 'POST notifications/initialized']);
    for (const c of children) expect(String(c.attributes['url.full'])).not.toContain('?');
  });

  it('a stateless 2026-07-28 answer: one server/discover child, no session', async () => {
    const job = makeJob({ url: url('modern'), currentRevision: '2026-07-28' });
    const answer = await runJob(job, ctx());
    expect(answer.ok && answer.run?.negotiated).toBe('2026-07-28');
    const { parent, children } = tracing.probe(job.jobId);
    expect(children.map((c) => c.attributes['mcp.method.name'])).toEqual(['server/discover']);
    expect(parent.attributes['mcp.session.id']).toBeUndefined();
    expect(parent.attributes['mcp.protocol.version']).toBe('2026-07-28');
  });

  it('an era move keeps the failing child and marks it: 400 with JSON-RPC -32022, then the lookup', async () => {
    const job = makeJob({ url: url('modern-only'), currentRevision: '2025-11-25' });
    const answer = await runJob(job, ctx());
    expect(answer.ok && answer.run).toMatchObject({
      outcome: 'success',
      previousRevision: '2025-11-25',
      negotiated: '2026-07-28',
    });
    const { parent, children } = tracing.probe(job.jobId);
    expect(parent.attributes['mcp_fleet.requested_version']).toBe('2025-11-25');
    const refused = children[0]!;
    expect(refused.attributes).toMatchObject({
      'mcp.method.name': 'initialize',
      'http.response.status_code': 400,
      'rpc.response.status_code': '-32022',
      'error.type': '400',
    });
    expect(refused.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('a failing handshake sets error.type to the outcome, and no credential appears anywhere', async () => {
    const job = makeJob({
      url: url('bearer'),
      revision: '2025-06-18',
      headers: { Authorization: 'Bearer planted-secret-xyz' },
    });
    const answer = await runJob(job, ctx());
    if (!answer.ok) throw new Error(answer.poison);
    expect(answer.run?.outcome).toBe('auth_required');
    const { parent, children } = tracing.probe(job.jobId);
    expect(parent.attributes).toMatchObject({ 'error.type': 'auth_required', 'http.response.status_code': 401 });
    expect(parent.status.code).toBe(SpanStatusCode.ERROR);
    expect(children[0]?.attributes['error.type']).toBe('401');
    const everything = JSON.stringify([answer.result, tracing.spans().map(spanText)]);
    expect(everything).not.toContain('planted-secret-xyz');
    expect(everything).not.toContain(SIM_BEARER_TOKEN);
  });

  it('a job without a revision is poison', async () => {
    const answer = await runJob(makeJob({ url: url('modern'), revision: null }), ctx());
    expect(answer).toEqual({ ok: false, poison: expect.stringMatching(/revision/) });
  });
});

describe('a detection job', () => {
  it('becomes a result with the detection, under an mcp.detection span with one child per request', async () => {
    const job = makeJob({ kind: 'detection', url: url('modern') });
    const answer = await runJob(job, ctx());
    if (!answer.ok) throw new Error(answer.poison);
    expect(answer.result.run).toBeNull();
    expect(answer.result.detection).toMatchObject({ outcome: 'DETECTED', newestSupported: '2026-07-28' });
    const { parent, children } = tracing.probe(job.jobId);
    expect(parent.name).toBe('mcp.detection');
    expect(parent.attributes).toMatchObject({ 'mcp_fleet.outcome': 'DETECTED', 'mcp.protocol.version': '2026-07-28' });
    expect(children).toHaveLength(answer.result.detection!.requests);
  });
});

describe('the address policy', () => {
  it('refuses loopback when the job does not allow it: the run is unreachable, nothing was sent', async () => {
    sim.resetRequests();
    const job = makeJob({ url: url('modern'), revision: '2026-07-28', allow: [] });
    const answer = await runJob(job, ctx([]));
    expect(answer.ok && answer.run).toMatchObject({ outcome: 'unreachable' });
    expect(answer.ok && answer.run?.message).toMatch(/policy\.allow/);
    expect(sim.requests('modern')).toHaveLength(0);
  });

  it('checks what a host name resolves to (localhost is loopback)', async () => {
    const job = makeJob({ url: url('modern').replace('127.0.0.1', 'localhost'), revision: '2026-07-28', allow: [] });
    const answer = await runJob(job, ctx([]));
    expect(answer.ok && answer.run?.outcome).toBe('unreachable');
    expect(answer.ok && answer.run?.message).toMatch(/localhost resolves to/);
  });
});

describe('timeouts', () => {
  it('a silent server ends as outcome timeout within the job timeout', async () => {
    const started = Date.now();
    const answer = await runJob(makeJob({ url: url('silent'), revision: '2025-06-18', timeoutMs: 500 }), ctx());
    expect(answer.ok && answer.run?.outcome).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

function spanText(s: { name: string; attributes: object; status: object; events: object[] }) {
  return { name: s.name, attributes: s.attributes, status: s.status, events: s.events };
}
