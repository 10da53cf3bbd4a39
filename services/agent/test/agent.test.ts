// The agent end to end on the real in-process bus and the real simulated fleet: jobs in, results
// out, acks only after the result is accepted, /metrics over HTTP, spans in memory, and the
// unhappy paths (a silent server, a failing publish, an agent fault, stop with work in hand).

import { randomBytes } from 'node:crypto';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { type Bus, createMemoryBus, type Heartbeat, type MemoryBus, type Result } from '@mcp-fleet/bus';
import { SIM_BEARER_TOKEN, type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { type Recorder, startRecorder } from '@mcp-fleet/testkit';
import type { TracerProvider } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, type AgentOptions, startAgent } from '../src';
import { StaleJobLog } from '../src/stale';
import {
  LOOPBACK_FLOOR,
  makeJob,
  memoryTracing,
  parseMetrics,
  REGION,
  type Sample,
  seriesValue,
  waitFor,
} from './support';

let sim: Sim;
beforeAll(async () => {
  sim = await startSim({
    only: ['modern', 'modern-only', 'sessions-2025-03-26', 'sessions-2025-11-25', 'bearer', 'silent'],
  });
});
afterAll(async () => {
  await sim.close();
});

const url = (name: string) => sim.target(name).url;
const quiet = createLogger('test', 'silent');

/** One bus, one results consumer and the agents of a test; all closed after it. */
interface Harness {
  bus: MemoryBus;
  results: Result[];
  tracing: ReturnType<typeof memoryTracing>;
  agents: Agent[];
  logs: string[];
  start(opts?: Partial<AgentOptions>): Promise<Agent>;
}

let current: Harness | undefined;

async function harness(busOverride?: (bus: MemoryBus) => Bus): Promise<Harness> {
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
  const logs: string[] = [];
  const h: Harness = {
    bus,
    results,
    tracing,
    agents: [],
    logs,
    async start(opts = {}) {
      const agent = await startAgent({
        bus: busOverride ? busOverride(bus) : bus,
        region: REGION,
        tracerProvider: tracing.provider,
        log: createLogger('agent', 'debug', { write: (line: string) => logs.push(line) }),
        ackWaitMs: 2_000,
        probeFloor: LOOPBACK_FLOOR,
        ...opts,
      });
      h.agents.push(agent);
      return agent;
    },
  };
  current = h;
  return h;
}

afterEach(async () => {
  if (!current) return;
  await Promise.all(current.agents.map((a) => a.stop()));
  await current.bus.close();
  current = undefined;
});

async function scrape(agent: Agent): Promise<{ text: string; samples: Sample[] }> {
  if (!agent.metricsUrl) throw new Error('no metrics URL');
  const res = await fetch(agent.metricsUrl);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, samples: parseMetrics(text) };
}

const resultOf = (h: Harness, jobId: string) => h.results.find((r) => r.jobId === jobId);
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('jobs in, results out', () => {
  it('a handshake job becomes a result on the bus, and the job is acked (never redelivered)', async () => {
    const h = await harness();
    const agent = await h.start({ id: 'agent-a' });
    const job = makeJob({ url: url('sessions-2025-11-25'), revision: '2025-11-25' });
    await h.bus.publishJob(job);

    const result = await waitFor('the result', () => resultOf(h, job.jobId));
    expect(result).toMatchObject({
      jobId: job.jobId,
      kind: 'handshake',
      region: REGION,
      agent: 'agent-a',
      serverId: job.serverId,
      testId: job.testId,
      slot: job.slot,
      scheduledAt: job.scheduledAt,
      detection: null,
      run: { outcome: 'success', negotiated: '2025-11-25', mode: 'pinned' },
    });
    expect(result.traceId).toMatch(/^[0-9a-f]{32}$/);
    const { parent } = h.tracing.probe(job.jobId);
    expect(result.traceId).toBe(parent.spanContext().traceId);

    // Past the ack wait (2 s here) nothing comes back: the job was acked.
    await settle(2_500);
    expect(h.results.filter((r) => r.jobId === job.jobId)).toHaveLength(1);
    expect(h.tracing.spans().filter((s) => s.name === 'mcp.handshake')).toHaveLength(1);
    expect(await h.bus.pending()).toMatchObject({ jobs: { [REGION]: 0 } });
    expect(h.bus.stats()).toMatchObject({ resultsPublished: 1, poison: 0 });
    expect(agent.inFlight()).toBe(0);
  });

  it('a detection job becomes a result carrying the detection', async () => {
    const h = await harness();
    await h.start();
    const job = makeJob({ kind: 'detection', url: url('modern') });
    await h.bus.publishJob(job);
    const result = await waitFor('the result', () => resultOf(h, job.jobId));
    expect(result.run).toBeNull();
    expect(result.testId).toBeNull();
    expect(result.detection).toMatchObject({ outcome: 'DETECTED', newestSupported: '2026-07-28' });
    expect(result.detection?.revisions.map((r) => r.supported)).toEqual([false, true, true, true, true]);
    const { parent, children } = h.tracing.probe(job.jobId);
    expect(parent.name).toBe('mcp.detection');
    expect(children).toHaveLength(result.detection!.requests);
  });

  it('heartbeats say who, where, which version and how much is in hand', async () => {
    const h = await harness();
    const beats: Heartbeat[] = [];
    h.bus.onHeartbeat((b) => beats.push(b));
    const agent = await h.start({ id: 'agent-hb', version: '9.9.9', heartbeatMs: 100 });
    await waitFor('two heartbeats', () => beats.length >= 2);
    expect(beats[0]).toMatchObject({ agent: 'agent-hb', region: REGION, version: '9.9.9', inFlight: 0 });
    expect(Date.parse(beats[1]!.at)).toBeGreaterThanOrEqual(Date.parse(beats[0]!.startedAt));
    const before = beats.length;
    await agent.stop();
    await waitFor('the last heartbeat', () => beats.length > before);
    const count = beats.length;
    await settle(300);
    expect(beats.length).toBe(count);
  });
});

describe("heartbeats' stdio commands (issue 20)", () => {
  it('name what this agent would start: its allowlist as found at start, not a name it could not find', async () => {
    const h = await harness();
    const beats: Heartbeat[] = [];
    h.bus.onHeartbeat((b) => beats.push(b));
    await h.start({
      heartbeatMs: 100,
      stdioCommands: [process.execPath, 'no-such-program-here'],
      stdioPath: '/nonexistent',
    });
    await waitFor('a heartbeat', () => beats.length >= 1);
    expect(beats[0]!.stdioCommands).toEqual([process.execPath]);
  });

  it('stay within the bus bounds however long the allowlist: the rest still run, and the log says so', async () => {
    const h = await harness();
    const beats: Heartbeat[] = [];
    h.bus.onHeartbeat((b) => beats.push(b));
    // Absolute paths are taken as given: 70 of them, and one longer than a heartbeat may carry.
    const paths = [`/${'x'.repeat(5_000)}`, ...Array.from({ length: 70 }, (_, i) => `/opt/mcp/bin/server-${i}`)];
    await h.start({ heartbeatMs: 100, stdioCommands: paths });
    await waitFor('a heartbeat', () => beats.length >= 1);
    expect(beats[0]!.stdioCommands).toEqual(paths.slice(1, 65));
    expect(h.logs.join('\n')).toMatch(/heartbeats name only 64 of the 71 commands/);
  });

  it('name none for an agent without an allowlist (the default)', async () => {
    const h = await harness();
    const beats: Heartbeat[] = [];
    h.bus.onHeartbeat((b) => beats.push(b));
    await h.start({ heartbeatMs: 100 });
    await waitFor('a heartbeat', () => beats.length >= 1);
    expect(beats[0]!.stdioCommands).toEqual([]);
  });
});

describe('/metrics', () => {
  it('serves handshake, era move, downgrade, detection, job and process series with bounded labels', async () => {
    const h = await harness();
    const agent = await h.start({ version: '1.2.3' });
    const jobs = [
      // An era move: the test spoke 2025-11-25; modern-only turns initialize away and speaks 2026-07-28.
      makeJob({ url: url('modern-only'), currentRevision: '2025-11-25' }),
      // A downgrade: offered 2025-06-18, the server answers 2025-03-26.
      makeJob({ url: url('sessions-2025-03-26'), currentRevision: '2025-06-18' }),
      makeJob({ url: url('modern'), currentRevision: '2026-07-28' }),
      makeJob({ kind: 'detection', url: url('sessions-2025-03-26') }),
    ];
    for (const job of jobs) await h.bus.publishJob(job);
    await waitFor('four results', () => h.results.length === 4);

    const eraMove = resultOf(h, jobs[0]!.jobId)!.run!;
    expect(eraMove).toMatchObject({ previousRevision: '2025-11-25', negotiated: '2026-07-28', outcome: 'success' });
    const downgrade = resultOf(h, jobs[1]!.jobId)!.run!;
    expect(downgrade).toMatchObject({ outcome: 'downgrade', negotiated: '2025-03-26', requested: '2025-06-18' });

    const { text, samples } = await scrape(agent);
    const region = REGION;
    expect(
      seriesValue(samples, 'mcp_handshake_total', {
        requested_version: '2025-11-25',
        negotiated_version: '2026-07-28',
        outcome: 'success',
        region,
      }),
    ).toBe(1);
    expect(
      seriesValue(samples, 'mcp_handshake_total', {
        requested_version: '2025-06-18',
        negotiated_version: '2025-03-26',
        outcome: 'downgrade',
        region,
      }),
    ).toBe(1);
    expect(
      seriesValue(samples, 'mcp_handshake_total', {
        requested_version: '2026-07-28',
        negotiated_version: '2026-07-28',
        outcome: 'success',
        region,
      }),
    ).toBe(1);
    expect(
      seriesValue(samples, 'mcp_era_moves_total', { from_version: '2025-11-25', to_version: '2026-07-28', region }),
    ).toBe(1);
    // A downgrade of a test that spoke 2025-06-18 is an era move too.
    expect(
      seriesValue(samples, 'mcp_era_moves_total', { from_version: '2025-06-18', to_version: '2025-03-26', region }),
    ).toBe(1);
    expect(seriesValue(samples, 'mcp_era_moves_total')).toBe(2);
    expect(seriesValue(samples, 'mcp_downgrades_total', { region })).toBe(1);
    // Lower-case in the label like every outcome; the detection's JSON keeps DETECTED
    // (docs/protocol.md#detection).
    expect(seriesValue(samples, 'mcp_detection_total', { outcome: 'detected', region })).toBe(1);
    expect(seriesValue(samples, 'mcp_probe_duration_seconds_count', { kind: 'handshake', region })).toBe(3);
    expect(seriesValue(samples, 'mcp_probe_duration_seconds_count', { kind: 'detection', region })).toBe(1);
    expect(seriesValue(samples, 'mcp_probe_duration_seconds_bucket', { kind: 'handshake', le: '+Inf' })).toBe(3);
    expect(samples.some((s) => s.name === 'mcp_probe_duration_seconds_bucket' && s.labels.le === '0.005')).toBe(true);
    expect(samples.some((s) => s.name === 'mcp_probe_duration_seconds_bucket' && s.labels.le === '30')).toBe(true);
    expect(seriesValue(samples, 'mcp_agent_jobs_total', { region, kind: 'handshake', result: 'ok' })).toBe(3);
    expect(seriesValue(samples, 'mcp_agent_jobs_total', { region, kind: 'detection', result: 'ok' })).toBe(1);
    expect(seriesValue(samples, 'mcp_agent_in_flight', { region })).toBe(0);
    expect(seriesValue(samples, 'mcp_agent_info', { region, version: '1.2.3' })).toBe(1);
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);

    // Bounded labels only: no URL, port, job id, server name or session id anywhere in the text.
    const mcpLines = text.split('\n').filter((l) => l.startsWith('mcp_'));
    // (The port only in label values: a process metric's value may hold its digits by chance.)
    const labelValues = samples.flatMap((s) => Object.values(s.labels)).join('\n');
    for (const job of jobs) {
      expect(text).not.toContain(job.jobId);
      expect(labelValues).not.toContain(new URL(job.url!).port);
    }
    expect(text).not.toContain('orders');
    const labelNames = new Set(samples.filter((s) => s.name.startsWith('mcp_')).flatMap((s) => Object.keys(s.labels)));
    expect([...labelNames].sort()).toEqual(
      [
        // Conformance checks' failures, the openings' method-not-found and transport error types start at 0.
        'check',
        'era',
        'error_type',
        'from_version',
        'kind',
        'le',
        'level',
        'method',
        'negotiated_version',
        'outcome',
        'protocol_version',
        'region',
        'requested_version',
        'result',
        'status',
        'to_version',
        'transport',
        'version',
      ].sort(),
    );
    // One convention for label values: lower-case everywhere (outcomes, kinds, results; not a bucket's +Inf).
    const upper = samples
      .filter((s) => s.name.startsWith('mcp_'))
      .flatMap((s) => Object.entries(s.labels).filter(([k, v]) => k !== 'le' && v !== v.toLowerCase()));
    expect(upper).toEqual([]);
    expect(mcpLines.length).toBeGreaterThan(10);
  });

  it('healthz is 200 while running; readyz turns 503 when the agent stops', async () => {
    const h = await harness();
    const agent = await h.start();
    const base = agent.metricsUrl!.replace(/\/metrics$/, '');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/nope`)).status).toBe(404);

    // Hold a job so stop() has something to wait for, and look while it waits.
    const job = makeJob({ url: url('silent'), revision: '2025-06-18', timeoutMs: 800 });
    await h.bus.publishJob(job);
    await waitFor('the job in hand', () => agent.inFlight() === 1);
    const stopping = agent.stop();
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await stopping;
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it('an agent that cannot listen, or names a bad region, does not start', async () => {
    const h = await harness();
    const first = await h.start();
    const port = Number(new URL(first.metricsUrl!).port);
    await expect(h.start({ metricsPort: port })).rejects.toThrow(/EADDRINUSE/);
    await expect(h.start({ region: 'EU West' })).rejects.toThrow(/region/);
  });

  it('no HTTP server when metricsPort is null', async () => {
    const h = await harness();
    const agent = await h.start({ metricsPort: null });
    expect(agent.metricsUrl).toBeNull();
    expect(await agent.registry.getSingleMetricAsString('mcp_agent_info')).toContain('mcp_agent_info{');
  });
});

describe('credentials', () => {
  it('a planted bearer token appears in no span, metric, log line or result', async () => {
    const h = await harness();
    const agent = await h.start();
    const secret = 'planted-secret-xyz';
    const refused = makeJob({
      url: url('bearer'),
      revision: '2025-06-18',
      headers: { Authorization: `Bearer ${secret}` },
    });
    const admitted = makeJob({
      url: url('bearer'),
      revision: '2026-07-28',
      headers: { Authorization: `Bearer ${SIM_BEARER_TOKEN}` },
    });
    await h.bus.publishJob(refused);
    await h.bus.publishJob(admitted);
    await waitFor('both results', () => h.results.length === 2);
    // The bearer target echoes the Authorization header it got into its 401 body.
    expect(resultOf(h, refused.jobId)?.run?.outcome).toBe('auth_required');
    expect(resultOf(h, refused.jobId)?.run?.evidence?.bodyPreview).toContain('[redacted]');
    expect(resultOf(h, admitted.jobId)?.run).toMatchObject({ outcome: 'success', negotiated: '2026-07-28' });

    const spans = JSON.stringify(
      h.tracing.spans().map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events })),
    );
    const { text } = await scrape(agent);
    for (const haystack of [spans, text, JSON.stringify(h.results), h.logs.join('')]) {
      expect(haystack).not.toContain(secret);
      expect(haystack).not.toContain(SIM_BEARER_TOKEN);
    }
    expect(h.logs.length).toBeGreaterThan(0);
  });
});

describe('credentials a hostile target echoes back', () => {
  let hostile: Recorder;
  const URL_TOKEN = `urltoken-${randomBytes(8).toString('hex')}`;
  const URL_PASS = `urlpass-${randomBytes(8).toString('hex')}`;
  const BASIC_PASS = `basicpass-${randomBytes(8).toString('hex')}`;
  const b64 = (v: string) => Buffer.from(v).toString('base64').replace(/=+$/, '');
  beforeAll(async () => {
    // Everything it answers carries what it was sent: the URL's token as sent, and the Basic
    // password decoded and re-encoded, in its session id, protocol version, JSON-RPC id and error.
    hostile = await startRecorder((req, res) => {
      const token = new URL(req.url, 'http://x').searchParams.get('token') ?? '';
      const basic = Buffer.from(String(req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      const password = basic.slice(basic.indexOf(':') + 1);
      const echo = `${token} ${b64(password)} ${password} ${encodeURIComponent(token)}`;
      res.writeHead(400, {
        'content-type': 'application/json',
        'mcp-session-id': echo,
        'mcp-protocol-version': token,
      });
      res.end(
        JSON.stringify({ jsonrpc: '2.0', id: `${token}-${b64(password)}`, error: { code: -32600, message: echo } }),
      );
    });
  });
  afterAll(async () => {
    await hostile?.close();
  });

  it("are redacted with the probe's own rule from every span attribute and the result; the probe sends the real URL", async () => {
    const h = await harness();
    await h.start();
    const url = hostile.url(`/mcp?token=${URL_TOKEN}`).replace('http://', `http://fleet:${URL_PASS}@`);
    const jobs = [
      makeJob({ url, revision: '2025-06-18', headers: { Authorization: `Basic ${b64(`fleet:${BASIC_PASS}`)}` } }),
      makeJob({
        url,
        kind: 'detection',
        revision: null,
        headers: { Authorization: `Basic ${b64(`fleet:${BASIC_PASS}`)}` },
      }),
    ];
    for (const job of jobs) await h.bus.publishJob(job);
    await waitFor('both results', () => h.results.length === 2, 30_000);
    // The target got the whole URL (path and query) and the header.
    expect(hostile.requests.some((q) => q.url === `/mcp?token=${URL_TOKEN}`)).toBe(true);
    const spans = h.tracing.spans();
    const withSession = spans.filter((s) => s.attributes['mcp.session.id'] !== undefined);
    expect(withSession.length).toBeGreaterThan(0);
    expect(String(withSession[0]!.attributes['mcp.session.id'])).toContain('[redacted]');
    const text = JSON.stringify({
      spans: spans.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events })),
      results: h.results,
      logs: h.logs,
    });
    expect(text).toContain('[redacted]');
    for (const secret of [URL_TOKEN, URL_PASS, BASIC_PASS, b64(BASIC_PASS), b64(`fleet:${BASIC_PASS}`)])
      expect(text, secret).not.toContain(secret);
  });
});

describe('slow, failing and faulty', () => {
  it('a silent server ends as outcome timeout, and the agent keeps serving other jobs meanwhile', async () => {
    const h = await harness();
    await h.start({ concurrency: 4 });
    const silent = makeJob({ url: url('silent'), revision: '2025-06-18', timeoutMs: 500 });
    await h.bus.publishJob(silent);
    const quick = [1, 2, 3].map(() => makeJob({ url: url('modern'), currentRevision: '2026-07-28' }));
    for (const job of quick) await h.bus.publishJob(job);

    await waitFor('all four results', () => h.results.length === 4);
    const order = h.results.map((r) => r.jobId);
    // The three quick jobs finished while the silent one was still waiting.
    expect(order.indexOf(silent.jobId)).toBe(3);
    const run = resultOf(h, silent.jobId)!.run!;
    expect(run.outcome).toBe('timeout');
    expect(run.millis).toBeGreaterThanOrEqual(450);
    expect(run.millis).toBeLessThan(2_000);
    const { parent } = h.tracing.probe(silent.jobId);
    expect(parent.attributes['error.type']).toBe('timeout');
  });

  it('when publishing the result fails, the job is nak-ed, comes back, and completes exactly once', async () => {
    let failures = 0;
    const h = await harness((bus) => ({
      ...bus,
      kind: bus.kind,
      publishResult: async (result) => {
        if (failures === 0) {
          failures += 1;
          throw new Error('results stream unavailable');
        }
        return bus.publishResult(result);
      },
    }));
    const agent = await h.start();
    const job = makeJob({ url: url('modern'), currentRevision: '2026-07-28' });
    const started = Date.now();
    await h.bus.publishJob(job);
    await waitFor('the result', () => resultOf(h, job.jobId));
    // The nak asked for 1 s before the job came back.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    await settle(2_500);
    expect(h.results.filter((r) => r.jobId === job.jobId)).toHaveLength(1);
    expect(failures).toBe(1);
    // It ran twice (the first result never made it), and was acked once.
    expect(h.tracing.spans().filter((s) => s.attributes['mcp_fleet.job.id'] === job.jobId)).toHaveLength(2);
    const { samples } = await scrape(agent);
    expect(seriesValue(samples, 'mcp_agent_jobs_total', { result: 'failed_publish' })).toBe(1);
    expect(seriesValue(samples, 'mcp_agent_jobs_total', { result: 'ok' })).toBe(1);
    expect(h.logs.join('')).toContain('the result was not accepted');
    expect(await h.bus.pending()).toMatchObject({ jobs: { [REGION]: 0 } });
  });

  it('a fault inside the agent does not take it down: the job is nak-ed, counted, and runs again', async () => {
    const h = await harness();
    // Fault injection: the first span the agent asks for throws.
    let thrown = false;
    const faulty: TracerProvider = {
      getTracer: (name, version) => {
        const real = h.tracing.provider.getTracer(name, version);
        return new Proxy(real, {
          get(target, prop, receiver) {
            if (prop === 'startSpan' && !thrown) {
              return () => {
                thrown = true;
                throw new Error('injected fault');
              };
            }
            return Reflect.get(target, prop, receiver);
          },
        });
      },
    };
    const agent = await h.start({ tracerProvider: faulty });
    const job = makeJob({ url: url('modern'), currentRevision: '2026-07-28' });
    await h.bus.publishJob(job);
    await waitFor('the result', () => resultOf(h, job.jobId));
    expect(thrown).toBe(true);
    const { samples } = await scrape(agent);
    expect(seriesValue(samples, 'mcp_agent_jobs_total', { result: 'error' })).toBe(1);
    expect(seriesValue(samples, 'mcp_agent_jobs_total', { result: 'ok' })).toBe(1);
    expect(h.results).toHaveLength(1);
  });

  it('a probe longer than the ack wait keeps its delivery (working()), so it is not run twice', async () => {
    const h = await harness();
    await h.start({ ackWaitMs: 1_200 });
    const job = makeJob({ url: url('silent'), revision: '2025-06-18', timeoutMs: 3_000 });
    const connections = sim.connections('silent');
    await h.bus.publishJob(job);
    // Well past the ack wait, still inside the probe: a redelivery would have opened a second connection.
    // (Counted before the probe's own timeout: undici opens, and at once closes, a spare connection after an abort.)
    await settle(2_500);
    expect(sim.connections('silent') - connections).toBe(1);
    const result = await waitFor('the result', () => resultOf(h, job.jobId), 10_000);
    expect(result.run?.outcome).toBe('timeout');
    expect(h.tracing.spans().filter((s) => s.name === 'mcp.handshake')).toHaveLength(1);
  });

  it('never runs more jobs at once than its concurrency', async () => {
    const h = await harness();
    const agent = await h.start({ concurrency: 2 });
    const jobs = [1, 2, 3, 4, 5, 6].map(() => makeJob({ url: url('silent'), revision: '2025-06-18', timeoutMs: 300 }));
    let most = 0;
    const watch = setInterval(() => {
      most = Math.max(most, agent.inFlight());
    }, 5);
    for (const job of jobs) await h.bus.publishJob(job);
    await waitFor('six results', () => h.results.length === 6);
    clearInterval(watch);
    expect(most).toBe(2);
    expect(h.results.every((r) => r.run?.outcome === 'timeout')).toBe(true);
  });
});

describe('stop()', () => {
  it('finishes the jobs in flight, publishes their results, and takes no new ones', async () => {
    const h = await harness();
    const agent = await h.start();
    const inHand = makeJob({ url: url('silent'), revision: '2025-06-18', timeoutMs: 700 });
    await h.bus.publishJob(inHand);
    await waitFor('the job in hand', () => agent.inFlight() === 1);
    await agent.stop();
    // stop() resolved only after the job's result was accepted.
    expect(resultOf(h, inHand.jobId)?.run?.outcome).toBe('timeout');
    expect(agent.inFlight()).toBe(0);

    const after = makeJob({ url: url('modern'), currentRevision: '2026-07-28' });
    await h.bus.publishJob(after);
    await settle(300);
    expect(resultOf(h, after.jobId)).toBeUndefined();
    expect(await h.bus.pending()).toMatchObject({ jobs: { [REGION]: 1 } });
  });

  it('after the grace period, hands back what is still probing; another agent completes it exactly once', async () => {
    const h = await harness();
    const first = await h.start({ id: 'leaving', stopGraceMs: 200 });
    const job = makeJob({ url: url('silent'), revision: '2025-06-18', timeoutMs: 1_500 });
    await h.bus.publishJob(job);
    await waitFor('the job in hand', () => first.inFlight() === 1);
    const t0 = Date.now();
    await first.stop();
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(resultOf(h, job.jobId)).toBeUndefined();
    const { samples } = await scrapeRegistry(first);
    expect(seriesValue(samples, 'mcp_agent_jobs_total', { result: 'returned' })).toBe(1);

    await h.start({ id: 'staying' });
    const result = await waitFor('the result from the other agent', () => resultOf(h, job.jobId), 10_000);
    expect(result.agent).toBe('staying');
    // The first agent's abandoned probe ends too, but its result is dropped.
    await settle(1_800);
    expect(h.results.filter((r) => r.jobId === job.jobId)).toHaveLength(1);
  });
});

/** After stop() the HTTP server is gone; read the registry directly. */
async function scrapeRegistry(agent: Agent): Promise<{ samples: Sample[] }> {
  return { samples: parseMetrics(await agent.registry.metrics()) };
}

/** A listener on `host` that counts connections and answers each with a plain 200 (it should see none). */
async function countingListener(
  host: string,
): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server: TcpServer = createTcpServer((socket) => {
    connections += 1;
    socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}/mcp`,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("the agent's own floor", () => {
  it('an agent whose floor does not allow 127.0.0.0/8 refuses a job that allows it, and says its floor at start', async () => {
    const h = await harness();
    // No floor given: the default, public addresses only. The job (as the fleet's) allows loopback.
    const agent = await h.start({ probeFloor: undefined });
    const before = sim.requests('modern').length;
    const handshakeJob = makeJob({ url: url('modern'), allow: ['127.0.0.0/8'] });
    const detectionJob = makeJob({ kind: 'detection', url: url('modern'), allow: ['127.0.0.0/8'] });
    await h.bus.publishJob(handshakeJob);
    await h.bus.publishJob(detectionJob);
    const run = (await waitFor('the handshake result', () => resultOf(h, handshakeJob.jobId))).run!;
    expect(run.outcome).toBe('unreachable');
    expect(run.message).toContain(
      '127.0.0.1 is loopback, private or link-local and the probe floor (MCP_FLEET_PROBE_ALLOW) does not cover it',
    );
    const detection = (await waitFor('the detection result', () => resultOf(h, detectionJob.jobId))).detection!;
    expect(detection.outcome).toBe('NONE');
    for (const r of detection.revisions)
      expect(r.evidence?.message).toMatch(/the probe floor \(MCP_FLEET_PROBE_ALLOW\)/);
    expect(sim.requests('modern').length).toBe(before);

    const { samples } = await scrape(agent);
    expect(seriesValue(samples, 'mcp_agent_floor_refusals_total', { region: REGION })).toBeGreaterThanOrEqual(2);
    const floorLine = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.floor);
    expect(floorLine).toMatchObject({
      msg: "probe floor: allow public addresses only; deny none; schemes http, https; a job's allow/deny/schemes can narrow it, never widen it",
      floor: { allow: [], deny: [], schemes: ['http', 'https'] },
    });
  });

  it('a job cannot open a metadata address the floor does not name, even when the job names it', async () => {
    const h = await harness();
    // The floor opens loopback (the sim), not link-local; the job names 169.254.169.254 itself.
    await h.start({ probeFloor: { allow: ['127.0.0.0/8', '0.0.0.0/0'], deny: [] } });
    const allow = ['127.0.0.0/8', '169.254.169.254/32', '64:ff9b::/96', '::ffff:0:0/96'];
    const urls = [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/latest/meta-data/',
      'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/',
    ];
    const jobs = urls.map((u) => makeJob({ url: u, revision: '2025-06-18', allow }));
    for (const job of jobs) await h.bus.publishJob(job);
    await waitFor('three results', () => h.results.length === 3);
    for (const job of jobs) {
      const run = resultOf(h, job.jobId)!.run!;
      expect(run.outcome, job.url).toBe('unreachable');
      expect(run.message, job.url).toContain(
        '169.254.169.254 is loopback, private or link-local and the probe floor (MCP_FLEET_PROBE_ALLOW) does not name it',
      );
    }
    // (A dial to 169.254.169.254 would also have failed this test through the loopback guard.)
  });

  it("the floor allows and the job narrows: the job's allow, deny and schemes still refuse", async () => {
    const h = await harness();
    await h.start({ probeFloor: { allow: ['127.0.0.0/8'], deny: [] } });
    const denied = await countingListener('127.0.0.2');
    try {
      const jobs = [
        makeJob({ url: denied.url, allow: ['127.0.0.0/8'], deny: ['127.0.0.2/32'] }),
        makeJob({ url: url('modern'), allow: [] }),
        makeJob({ url: url('modern'), schemes: ['https'] }),
      ];
      for (const job of jobs) await h.bus.publishJob(job);
      await waitFor('three results', () => h.results.length === 3);
      const message = (i: number) => resultOf(h, jobs[i]!.jobId)!.run!.message;
      expect(message(0)).toContain('127.0.0.2 is in a range the policy denies');
      expect(message(1)).toContain('127.0.0.1 is loopback, private or link-local and policy.allow does not cover it');
      expect(message(2)).toContain('the scheme http: is not one the policy allows (policy.schemes: https)');
      expect(h.results.every((r) => r.run?.outcome === 'unreachable')).toBe(true);
      expect(denied.connections()).toBe(0);
    } finally {
      await denied.close();
    }
  });

  it("the effective policy is both: the floor's deny and schemes hold against a job that allows", async () => {
    const h = await harness();
    const agent = await h.start({ probeFloor: { allow: ['127.0.0.0/8'], deny: ['127.0.0.3/32'] } });
    const floorDenied = await countingListener('127.0.0.3');
    try {
      const refused = makeJob({ url: floorDenied.url, allow: ['127.0.0.0/8'], deny: [] });
      const admitted = makeJob({ url: url('modern'), currentRevision: '2026-07-28' });
      await h.bus.publishJob(refused);
      await h.bus.publishJob(admitted);
      await waitFor('both results', () => h.results.length === 2);
      expect(resultOf(h, refused.jobId)!.run).toMatchObject({ outcome: 'unreachable' });
      expect(resultOf(h, refused.jobId)!.run!.message).toContain(
        '127.0.0.3 is in a range the probe floor denies (MCP_FLEET_PROBE_DENY)',
      );
      expect(resultOf(h, admitted.jobId)!.run).toMatchObject({ outcome: 'success', negotiated: '2026-07-28' });
      expect(floorDenied.connections()).toBe(0);
      await agent.stop();

      // A floor of https only: the job's default schemes (http and https) do not bring http back.
      await h.start({ probeFloor: { allow: ['127.0.0.0/8'], deny: [], schemes: ['https'] } });
      const http = makeJob({ url: url('modern') });
      await h.bus.publishJob(http);
      const run = (await waitFor('the result', () => resultOf(h, http.jobId))).run!;
      expect(run.outcome).toBe('unreachable');
      expect(run.message).toContain(
        'the scheme http: is not one the probe floor allows (MCP_FLEET_PROBE_SCHEMES: https)',
      );
    } finally {
      await floorDenied.close();
    }
  });
});

describe('stale jobs', () => {
  it('an agent started after a backlog of old jobs drops them unprobed, runs the fresh one, and counts them', async () => {
    const h = await harness();
    const now = Date.now();
    // A test every 15 s: a slot is stale once its next slot is due, and 10 s more (as the scheduler says).
    const slotJob = (slot: number, kind: 'handshake' | 'detection' = 'handshake') =>
      makeJob({
        kind,
        url: url('modern'),
        ...(kind === 'handshake' ? { currentRevision: '2026-07-28' as const } : {}),
        slot,
        scheduledAt: new Date(slot).toISOString(),
        staleAt: slot + 15_000 + 10_000,
      });
    // Five old slots, past their staleAt (an outage's backlog), an old detection, then the current slot.
    const old = [6, 5, 4, 3, 2].map((n) => slotJob(now - n * 15_000));
    const oldDetection = slotJob(now - 2 * 15_000, 'detection');
    const fresh = slotJob(now);
    for (const job of [...old, oldDetection, fresh]) await h.bus.publishJob(job);
    const before = sim.requests('modern').length;

    const agent = await h.start();
    await waitFor('the fresh result', () => resultOf(h, fresh.jobId));
    await waitFor('the backlog to be gone', async () => (await h.bus.pending()).jobs[REGION] === 0);
    await settle(2_500); // past the ack wait: nothing comes back
    expect(h.results.map((r) => r.jobId)).toEqual([fresh.jobId]);
    expect(h.tracing.spans().filter((s) => s.name.startsWith('mcp.'))).toHaveLength(1);
    expect(sim.requests('modern').length - before).toBe(resultOf(h, fresh.jobId)!.run!.requests);

    const { samples } = await scrape(agent);
    expect(seriesValue(samples, 'mcp_agent_jobs_total', { kind: 'handshake', result: 'stale' })).toBe(5);
    expect(seriesValue(samples, 'mcp_agent_jobs_total', { kind: 'detection', result: 'stale' })).toBe(1);
    expect(seriesValue(samples, 'mcp_agent_jobs_total', { kind: 'handshake', result: 'ok' })).toBe(1);

    // Logged once: the first drop says why; the rest are a count, not a line each.
    await agent.stop();
    const lines = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const first = lines.filter((l) => String(l.msg).startsWith('dropping stale jobs unprobed'));
    expect(first).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'more stale jobs dropped unprobed')).toEqual([
      expect.objectContaining({ dropped: 5 }),
    ]);
    const staleIds = [...old, oldDetection].map((j) => j.jobId);
    expect(h.logs.filter((l) => staleIds.some((id) => l.includes(id)))).toHaveLength(1);
    expect(h.bus.stats().poison).toBe(0);
  });

  it('sums up further drops at most once per period, and tells the rest at stop', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger('agent', 'debug', { write: (line: string) => lines.push(JSON.parse(line)) });
    const staleLog = new StaleJobLog(log, 300);
    const job = makeJob({ url: 'http://127.0.0.1:9/mcp', staleAt: 1 });
    for (let i = 0; i < 4; i++) staleLog.dropped(job, Date.now());
    expect(lines.map((l) => l.msg)).toHaveLength(1);
    await waitFor('the summary', () => lines.length === 2);
    expect(lines[1]).toMatchObject({ msg: 'more stale jobs dropped unprobed', dropped: 3 });
    staleLog.dropped(job, Date.now());
    staleLog.dropped(job, Date.now());
    staleLog.flush();
    expect(lines[2]).toMatchObject({ dropped: 2 });
    staleLog.flush();
    expect(lines).toHaveLength(3);
  });
});
