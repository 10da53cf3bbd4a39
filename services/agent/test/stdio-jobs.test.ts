// stdio jobs on a real agent (issue 20): fleet-sim's stdio servers started for real, only when the
// agent's own allowlist names the program; a job whose command is not allowed is a run that says
// so, and nothing is started (a command that would leave a marker file leaves none); the transport
// on spans and in mcp_transport_error_total.
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createMemoryBus, type Job, type MemoryBus, type Result } from '@mcp-fleet/bus';
import { stdioServer } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { afterEach, describe, expect, it } from 'vitest';
import { type Agent, type AgentOptions, StdioGate, StdioSlots, startAgent } from '../src';
import { makeJob, memoryTracing, parseMetrics, REGION, seriesValue, waitFor } from './support';

const quiet = createLogger('test', 'silent');
const NODE = process.execPath;

/** A stdio job for one of fleet-sim's stdio servers (its command spec, as control would send it). */
function stdioJob(
  kind: Parameters<typeof stdioServer>[0],
  fields: Partial<Job> = {},
  env: Record<string, string> = {},
) {
  const spec = stdioServer(kind, { env });
  const { url: _, ...job } = makeJob({ url: 'http://unused.invalid/' });
  return { ...job, command: { command: spec.command, args: [...spec.args], env: { ...spec.env } }, ...fields } as Job;
}

interface Harness {
  bus: MemoryBus;
  results: Result[];
  tracing: ReturnType<typeof memoryTracing>;
  agent: Agent;
}
let running: { bus: MemoryBus; agent: Agent } | undefined;

async function start(opts: Partial<AgentOptions>): Promise<Harness> {
  const bus = createMemoryBus({ log: quiet });
  const results: Result[] = [];
  bus.consumeResults(
    async (d) => {
      results.push(d.value);
      await d.ack();
    },
    { concurrency: 4 },
  );
  const tracing = memoryTracing();
  const agent = await startAgent({
    bus,
    region: REGION,
    tracerProvider: tracing.provider,
    log: quiet,
    processMetrics: false,
    ackWaitMs: 5_000,
    ...opts,
  });
  running = { bus, agent };
  return { bus, results, tracing, agent };
}

afterEach(async () => {
  if (!running) return;
  await running.agent.stop();
  await running.bus.close();
  running = undefined;
});

async function metrics(agent: Agent) {
  return parseMetrics(await agent.registry.metrics());
}

const resultOf = (h: Harness, jobId: string) =>
  waitFor(`the result of ${jobId}`, () => h.results.find((r) => r.jobId === jobId), 20_000);

describe('an agent and its stdio allowlist', () => {
  it('runs an allowlisted stdio server: a run, a span with network.transport=pipe, env values never on it', async () => {
    const h = await start({ stdioCommands: [NODE] });
    const secret = 'sk-live-0123456789abcdef';
    const job = stdioJob('v2', {}, { API_KEY: secret });
    await h.bus.publishJob(job);
    const result = await resultOf(h, job.jobId);
    expect(result.run?.outcome).toBe('success');
    expect(result.run?.negotiated).toBe('2026-07-28');
    expect(result.run?.stdio?.processes).toBeGreaterThan(0);

    const span = await waitFor('the probe span', () =>
      h.tracing.spans().find((s) => s.attributes['mcp_fleet.job.id'] === job.jobId),
    );
    expect(span.attributes['network.transport']).toBe('pipe');
    expect(span.attributes['mcp_fleet.command']).toContain('server.mjs v2');
    expect(span.attributes['url.full']).toBeUndefined();
    const children = h.tracing.spans().filter((s) => s.parentSpanContext?.spanId === span.spanContext().spanId);
    expect(children.length).toBeGreaterThan(0);
    for (const c of children) expect(c.attributes['network.transport']).toBe('pipe');
    expect(JSON.stringify(h.tracing.spans().map((s) => s.attributes))).not.toContain(secret);

    // Every stdio error type is a series from the start (alerts take increase() of them).
    const samples = await metrics(h.agent);
    for (const errorType of ['spawn_failed', 'exited_early', 'timeout', 'stdout_not_json'])
      expect(
        samples.some(
          (s) =>
            s.name === 'mcp_transport_error_total' &&
            s.labels.transport === 'stdio' &&
            s.labels.error_type === errorType,
        ),
      ).toBe(true);
  });

  it('counts stdio failures by error type: logs on stdout, a process that exits at once, a program that is not there', async () => {
    const missing = '/nonexistent/mcp-server';
    const h = await start({ stdioCommands: [NODE, missing] });
    const logs = stdioJob('logs-on-stdout');
    const exits = stdioJob('exits-at-once');
    const absent = stdioJob('v1');
    absent.command = { ...absent.command!, command: missing };
    for (const j of [logs, exits, absent]) await h.bus.publishJob(j);
    await Promise.all([logs, exits, absent].map((j) => resultOf(h, j.jobId)));
    const samples = await metrics(h.agent);
    const count = (error_type: string) =>
      seriesValue(samples, 'mcp_transport_error_total', { transport: 'stdio', error_type });
    expect(count('stdout_not_json')).toBeGreaterThanOrEqual(1);
    expect(count('exited_early')).toBeGreaterThanOrEqual(1);
    expect(count('spawn_failed')).toBeGreaterThanOrEqual(1);
    // HTTP's series are HTTP's: nothing of these was counted there.
    expect(seriesValue(samples, 'mcp_transport_error_total', { transport: 'http' })).toBe(0);
  });

  it('never starts a command its allowlist does not name: the run says why, no marker file appears, the job is not retried', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-fleet-marker-'));
    const marker = join(dir, 'spawned');
    try {
      const h = await start({ stdioCommands: [NODE] });
      const job = stdioJob('v2');
      job.command = { command: '/bin/sh', args: ['-c', `touch ${marker}`], env: {} };
      await h.bus.publishJob(job);
      const result = await resultOf(h, job.jobId);
      expect(result.run?.outcome).toBe('unreachable');
      expect(result.run?.message).toMatch(/not on this agent's stdio allowlist \(--stdio-commands/);
      expect(result.run?.evidence?.reachabilityFailure).toBe('policy');
      expect(result.run?.stdio?.processes).toBe(0);
      // A run, acked: not a crash, not a retry loop.
      await new Promise((r) => setTimeout(r, 300));
      expect(h.results.filter((r) => r.jobId === job.jobId)).toHaveLength(1);
      expect(seriesValue(await metrics(h.agent), 'mcp_agent_jobs_total', { result: 'ok' })).toBe(1);
      expect(existsSync(marker)).toBe(false);

      // The same command when the agent allows it does leave the marker: the test would see a spawn.
      await running!.agent.stop();
      await running!.bus.close();
      const allowed = await start({ stdioCommands: ['/bin/sh'] });
      const again = { ...job, jobId: `${job.jobId}-allowed` };
      await allowed.bus.publishJob(again);
      await resultOf(allowed, again.jobId);
      expect(existsSync(marker)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs no stdio command at all by default, and a detection job is refused alike', async () => {
    const h = await start({});
    const job = stdioJob('v2', { kind: 'detection', testId: null, revision: null });
    await h.bus.publishJob(job);
    const result = await resultOf(h, job.jobId);
    expect(result.detection?.outcome).toBe('NONE');
    expect(result.detection?.cause).toBe('policy');
    expect(result.detection?.revisions[0]?.evidence?.message).toMatch(/runs no stdio commands/);
  });
});

describe('the stdio gate', () => {
  it('finds a bare name on the agent’s own PATH, never on the job’s', () => {
    const gate = new StdioGate({ commands: ['node'], path: dirname(NODE) });
    const admitted = gate.admit({ command: 'node', args: [], env: { PATH: '/tmp/evil' } });
    expect(admitted).toEqual({
      ok: true,
      spec: { command: join(dirname(NODE), 'node'), args: [], env: { PATH: '/tmp/evil' } },
    });
    expect(new StdioGate({ commands: ['node'], path: '' }).admit({ command: 'node', args: [], env: {} }).ok).toBe(
      false,
    );
  });

  it('resolves cwd under its root only, symlinks included', () => {
    const root = mkdtempSync(join(tmpdir(), 'mcp-fleet-root-'));
    try {
      mkdirSync(join(root, 'servers', 'a'), { recursive: true });
      symlinkSync('/etc', join(root, 'escape'));
      const gate = new StdioGate({ commands: [NODE], root });
      const spec = (cwd: string) => gate.admit({ command: NODE, args: [], env: {}, cwd });
      expect(spec('servers/a')).toMatchObject({ ok: true, spec: { cwd: join(root, 'servers', 'a') } });
      expect(spec('escape')).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/outside the agent's stdio root/),
      });
      expect(spec('missing')).toMatchObject({ ok: false, reason: expect.stringMatching(/does not exist/) });
      expect(() => new StdioGate({ commands: [NODE], root: join(root, 'nowhere') })).toThrow(
        /--stdio-root.*is not a directory/,
      );
      const rootless = new StdioGate({ commands: [NODE] });
      expect(rootless.admit({ command: NODE, args: [], env: {}, cwd: 'servers/a' })).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/no stdio root/),
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('bounds processes at once apart from jobs', async () => {
    const slots = new StdioSlots(2);
    let now = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 6 }, () =>
        slots.run(async () => {
          now += 1;
          most = Math.max(most, now);
          await new Promise((r) => setTimeout(r, 20));
          now -= 1;
        }),
      ),
    );
    expect(most).toBe(2);
    expect(slots.inUse()).toBe(0);
  });
});
