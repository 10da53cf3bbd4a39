// Surface- and script-depth jobs, no bus: against real sim servers (the official SDK's), the
// surface of each era read into the result, a script's steps run in the negotiated revision, an
// event per read and per step on the job's span, and the result within the bus's bounds.
import { ResultSchema } from '@mcp-fleet/bus';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { type HandshakeRun, type ScriptRun, surfaceFromBody, TargetPolicy } from '@mcp-fleet/probe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runJob, scriptedRun } from '../src/job';
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
  sim = await startSim({ only: ['modern', 'modern-only', 'bearer'] });
});
afterAll(async () => {
  await sim.close();
  await dispatchers.destroy();
});
beforeEach(() => tracing.exporter.reset());

const url = (name: string) => sim.target(name).url;

describe('a surface-depth job', () => {
  it('reads the surface of each era the server speaks, one event per read', async () => {
    const job = makeJob({ url: url('modern'), depth: 'surface' });
    const answer = await runJob(job, ctx());
    if (!answer.ok) throw new Error(answer.poison);
    expect(answer.run?.outcome).toBe('success');
    expect(answer.result.surfaces.map((s) => s.era).sort()).toEqual(['legacy', 'modern']);
    for (const s of answer.result.surfaces) expect(surfaceFromBody(s.body).tools.map((t) => t.name)).toContain('echo');
    expect(ResultSchema.safeParse(answer.result).success).toBe(true);
    const { parent } = tracing.probe(job.jobId);
    expect(parent.events.filter((e) => e.name === 'mcp.surface.read')).toHaveLength(2);
  });

  it('an era the server does not speak has no snapshot (no change is made of a missing read)', async () => {
    const answer = await runJob(makeJob({ url: url('modern-only'), depth: 'surface' }), ctx());
    if (!answer.ok) throw new Error(answer.poison);
    expect(answer.result.surfaces.map((s) => s.era)).toEqual(['modern']);
    expect(answer.surfaceReads.find((r) => r.era === 'legacy')?.snapshot).toBeNull();
  });

  it('a handshake that does not pass reads nothing', async () => {
    const answer = await runJob(makeJob({ url: url('bearer'), depth: 'surface' }), ctx());
    if (!answer.ok) throw new Error(answer.poison);
    expect(answer.run?.outcome).toBe('auth_required');
    expect(answer.result.surfaces).toEqual([]);
  });
});

describe('a script-depth job', () => {
  it('runs the steps in the negotiated revision: a pass keeps the handshake run, a failed step fails it', async () => {
    const passing = makeJob({
      url: url('modern'),
      depth: 'script',
      script: {
        steps: [
          {
            method: 'tools/call',
            params: { name: 'echo', arguments: { text: 'Paris' } },
            expect: [{ path: '$.content[0].text', equals: 'Paris' }],
          },
        ],
      },
    });
    const ok = await runJob(passing, ctx());
    if (!ok.ok) throw new Error(ok.poison);
    expect(ok.result.script).toMatchObject({ pass: true, protocol: { negotiated: ok.run!.negotiated } });
    expect(ok.run!.outcome).toBe('success');
    expect(ResultSchema.safeParse(ok.result).success).toBe(true);
    expect(tracing.probe(passing.jobId).parent.events.filter((e) => e.name === 'mcp.script.step')).toHaveLength(1);

    const failing = makeJob({
      url: url('modern'),
      depth: 'script',
      script: {
        steps: [
          { method: 'tools/call', params: { name: 'echo', arguments: { text: 'Oslo' } }, expect: [{ isError: true }] },
        ],
      },
    });
    const bad = await runJob(failing, ctx());
    if (!bad.ok) throw new Error(bad.poison);
    expect(bad.result.script?.pass).toBe(false);
    expect(bad.run).toMatchObject({
      outcome: 'protocol_error',
      assertion: { name: 'mcp.script.step', expected: 'step 1 tools/call echo passes', actual: 'failed' },
    });
    expect(ResultSchema.safeParse(bad.result).success).toBe(true);
  });

  it('a script whose connection failed takes its outcome; a passing script leaves the run as it was', () => {
    const run = { outcome: 'success', message: 'ok', requests: 2, assertion: null } as unknown as HandshakeRun;
    const script = (fields: Partial<ScriptRun>): ScriptRun => ({
      protocol: { requested: '2026-07-28', negotiated: null, era: null },
      pass: false,
      outcome: 'timeout',
      message: 'the server did not answer',
      steps: [],
      requests: 1,
      millis: 5,
      ...fields,
    });
    expect(scriptedRun(run, script({ pass: true, outcome: 'success' }))).toBe(run);
    expect(scriptedRun(run, script({}))).toMatchObject({
      outcome: 'timeout',
      message: 'script: the server did not answer',
      assertion: null,
    });
  });
});
