// The metrics every probe feeds (mcp_method_not_found_total, mcp_transport_error_total) and the
// conformance counter, through a real agent on the in-process bus against real servers: the sim's
// SDK servers, a hostile server answering -32601 to everything with invented method names, and a
// closed port. Trust boundary under test: a server chooses its answers, never our label values.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryBus, type MemoryBus, type Result } from '@mcp-fleet/bus';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { CONFORMANCE_CHECKS, type Exchange, REVISION_NAMES } from '@mcp-fleet/probe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, startAgent } from '../src';
import { MAX_TRAFFIC_ENTRIES, MCP_METHODS, TrafficLog } from '../src/traffic';
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

const quiet = createLogger('test', 'silent');
let sim: Sim;
/** Every POST: JSON-RPC -32601 naming a random method (message and data), its id echoed. */
let hostile: Server;
let hostileUrl: string;
/** A port nothing listens on. */
let closedUrl: string;

beforeAll(async () => {
  sim = await startSim({ only: ['modern', 'replies'] });
  hostile = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST' }).end();
        return;
      }
      let id: unknown = null;
      try {
        id = (JSON.parse(body) as { id?: unknown }).id ?? null;
      } catch {}
      const invented = `x/${randomBytes(8).toString('hex')}`;
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-protocol-version': invented });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          error: { code: -32601, message: `Method not found: ${invented}`, data: { method: invented } },
        }),
      );
    });
  });
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
  hostileUrl = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}/mcp`;
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/mcp`;
  await new Promise<void>((r) => closed.close(() => r()));
});
afterAll(async () => {
  await sim.close();
  await new Promise<void>((r) => hostile.close(() => r()));
});

let bus: MemoryBus | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.stop();
  await bus?.close();
  agent = undefined;
  bus = undefined;
});

async function startWithResults(): Promise<{ agent: Agent; bus: MemoryBus; results: Result[] }> {
  bus = createMemoryBus({ log: quiet });
  const results: Result[] = [];
  bus.consumeResults(
    async (d) => {
      results.push(d.value);
      await d.ack();
    },
    { concurrency: 4 },
  );
  agent = await startAgent({
    bus,
    region: REGION,
    tracerProvider: memoryTracing().provider,
    log: quiet,
    probeFloor: LOOPBACK_FLOOR,
    processMetrics: false,
  });
  return { agent, bus, results };
}

async function samplesOf(a: Agent): Promise<{ text: string; samples: Sample[] }> {
  const text = await (await fetch(a.metricsUrl!)).text();
  return { text, samples: parseMetrics(text) };
}

const series = (samples: Sample[], name: string) => samples.filter((s) => s.name === name);

describe('mcp_method_not_found_total', () => {
  it('a hostile server answering -32601 with invented method names mints no label value', async () => {
    const { agent, bus, results } = await startWithResults();
    const jobs = [
      makeJob({ url: hostileUrl }),
      makeJob({ url: hostileUrl, currentRevision: '2025-11-25' }),
      ...REVISION_NAMES.map((revision) => makeJob({ url: hostileUrl, revision })),
      makeJob({ kind: 'detection', url: hostileUrl }),
      makeJob({ url: hostileUrl, depth: 'conformance' }),
    ];
    for (const job of jobs) await bus.publishJob(job);
    await waitFor('every result', () => results.length === jobs.length);

    const { text, samples } = await samplesOf(agent);
    const found = series(samples, 'mcp_method_not_found_total');
    expect(found.length).toBeGreaterThan(0);
    const methods = new Set(found.map((s) => s.labels.method));
    const versions = new Set(found.map((s) => s.labels.protocol_version));
    for (const m of methods) expect(MCP_METHODS.has(m!) || m === 'other', m).toBe(true);
    for (const v of versions) expect([...REVISION_NAMES, 'none', 'other']).toContain(v);
    // What our requests were: the openings' methods at the revision they offer.
    expect(
      seriesValue(samples, 'mcp_method_not_found_total', { method: 'server/discover', protocol_version: '2026-07-28' }),
    ).toBeGreaterThan(0);
    expect(methods).toContain('initialize');
    expect(text).not.toMatch(/x\/[0-9a-f]{16}/);
    // A job's count is bounded by its probe's request budget, whatever the server says.
    const total = found.reduce((n, s) => n + s.value, 0);
    expect(total).toBeLessThanOrEqual(jobs.length * MAX_TRAFFIC_ENTRIES);
  });

  it("counts the sim's -32601 wall (fleet-sim `replies`) per method, at the revision each request offered", async () => {
    const { agent, bus, results } = await startWithResults();
    const wall = new URL('/reply/400/jsonrpc-32601', sim.target('replies').url).href;
    await bus.publishJob(makeJob({ kind: 'detection', url: wall }));
    await bus.publishJob(makeJob({ url: wall, revision: '2025-06-18' }));
    await waitFor('both results', () => results.length === 2);
    const { samples } = await samplesOf(agent);
    // Detection offers 2026-07-28 by server/discover (the only revision that has it).
    expect(
      seriesValue(samples, 'mcp_method_not_found_total', { method: 'server/discover', protocol_version: '2026-07-28' }),
    ).toBeGreaterThan(0);
    // The pinned handshake offered 2025-06-18 by initialize.
    expect(
      seriesValue(samples, 'mcp_method_not_found_total', { method: 'initialize', protocol_version: '2025-06-18' }),
    ).toBeGreaterThan(0);
    for (const s of series(samples, 'mcp_method_not_found_total')) {
      expect(MCP_METHODS.has(s.labels.method!) || s.labels.method === 'other').toBe(true);
      expect([...REVISION_NAMES, 'none', 'other']).toContain(s.labels.protocol_version);
    }
  });
});

describe('mcp_transport_error_total', () => {
  it('counts a refused connection; a refusal by the job policy (no dial) is not the transport’s', async () => {
    const { agent, bus, results } = await startWithResults();
    await bus.publishJob(makeJob({ url: closedUrl, revision: '2025-11-25' }));
    await bus.publishJob(makeJob({ url: sim.target('modern').url, revision: '2026-07-28', allow: [] }));
    await waitFor('both results', () => results.length === 2);
    expect(results.map((r) => r.run?.outcome).sort()).toEqual(['unreachable', 'unreachable']);
    const { samples } = await samplesOf(agent);
    const errors = series(samples, 'mcp_transport_error_total');
    expect(
      seriesValue(samples, 'mcp_transport_error_total', { transport: 'http', error_type: 'connection_refused' }),
    ).toBeGreaterThan(0);
    expect(errors.some((s) => s.labels.error_type === 'policy' || s.labels.error_type === 'request_budget')).toBe(
      false,
    );
    expect(errors.filter((s) => s.labels.error_type !== 'connection_refused').every((s) => s.value === 0)).toBe(true);
  });
});

describe('mcp_conformance_checks_total', () => {
  it('counts each check of a conformance-depth job by id, lower-case level, status and era', async () => {
    const { agent, bus, results } = await startWithResults();
    await bus.publishJob(
      makeJob({ url: sim.target('modern').url, depth: 'conformance', currentRevision: '2026-07-28' }),
    );
    await waitFor('the result', () => results.length === 1);
    const run = results[0]!.conformance!;
    expect(run.checks.length).toBeGreaterThan(0);
    const { samples } = await samplesOf(agent);
    for (const c of run.checks)
      expect(
        seriesValue(samples, 'mcp_conformance_checks_total', {
          check: c.id,
          level: c.level.toLowerCase(),
          status: c.status,
          era: 'modern',
          region: REGION,
        }),
        c.id,
      ).toBe(1);
    const counted = series(samples, 'mcp_conformance_checks_total').reduce((n, s) => n + s.value, 0);
    expect(counted).toBe(run.checks.length);
    expect(seriesValue(samples, 'mcp_probe_duration_seconds_count', { kind: 'conformance', region: REGION })).toBe(1);
    // The run's negative probes (mcp_fleet/no_such_method, an undeclared capability's list…) got their -32601 on
    // purpose: deliberate, so not counted; a clean server answered every other request.
    const deliberate = run.checks.filter((c) =>
      ['unknown_method_not_found', 'undeclared_capability_not_found'].includes(c.id),
    );
    expect(deliberate.some((c) => c.status === 'pass')).toBe(true);
    expect(series(samples, 'mcp_method_not_found_total').reduce((n, s) => n + s.value, 0)).toBe(0);
  });

  it('starts every check’s failures at 0 in its era(s), so the first failure after a start is an increase', async () => {
    const { agent } = await startWithResults();
    const { samples } = await samplesOf(agent);
    const failing = series(samples, 'mcp_conformance_checks_total').filter((s) => s.labels.status === 'fail');
    const eras = (era: string) => (era === 'both' ? 2 : 1);
    expect(failing).toHaveLength(CONFORMANCE_CHECKS.reduce((n, c) => n + eras(c.era), 0));
    expect(failing.every((s) => s.value === 0 && (s.labels.level === 'must' || s.labels.level === 'should'))).toBe(
      true,
    );
  });
});

describe('TrafficLog', () => {
  const exchange = (fields: Partial<Exchange>): Exchange => ({
    method: 'POST',
    url: 'http://127.0.0.1:1/mcp',
    jsonRpcMethod: 'tools/list',
    startedAt: 0,
    millis: 1,
    status: 200,
    contentType: 'application/json',
    headers: {},
    text: '',
    truncated: false,
    response: { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } },
    failure: null,
    error: undefined,
    ...fields,
  });

  it('skips deliberate requests, our own refusals, and other errors; bounds methods and revisions', () => {
    const log = new TrafficLog();
    log.speaking('2025-11-25');
    log.add(exchange({}));
    log.add(exchange({ jsonRpcMethod: `mcp_fleet/${'z'.repeat(500)}` }));
    log.add(exchange({ jsonRpcMethod: 'mcp_fleet/no_such_method', deliberate: true }));
    log.add(exchange({ response: { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'bad params' } } }));
    log.add(exchange({ jsonRpcMethod: 'server/discover' }));
    log.add(exchange({ response: undefined, status: null, failure: 'timeout' }));
    log.add(exchange({ response: undefined, status: null, failure: 'policy' }));
    log.add(exchange({ response: undefined, status: null, failure: 'request_budget' }));
    log.add(exchange({ response: undefined, status: null, failure: 'connection_reset', deliberate: true }));
    log.speaking('2099-01-01');
    log.add(exchange({ jsonRpcMethod: 'ping' }));
    expect(log.summary()).toEqual({
      methodNotFound: [
        { method: 'tools/list', protocolVersion: '2025-11-25' },
        { method: 'other', protocolVersion: '2025-11-25' },
        { method: 'server/discover', protocolVersion: '2026-07-28' },
        { method: 'ping', protocolVersion: 'other' },
      ],
      transportErrors: [{ transport: 'http', errorType: 'timeout' }],
    });
  });

  it('fills a revision not known while the probe ran, and keeps at most MAX_TRAFFIC_ENTRIES of each', () => {
    const log = new TrafficLog();
    for (let i = 0; i < MAX_TRAFFIC_ENTRIES + 10; i += 1) log.add(exchange({ jsonRpcMethod: 'initialize' }));
    const summary = log.summary('2025-06-18');
    expect(summary.methodNotFound).toHaveLength(MAX_TRAFFIC_ENTRIES);
    expect(summary.methodNotFound[0]).toEqual({ method: 'initialize', protocolVersion: '2025-06-18' });
    expect(new TrafficLog().summary()).toEqual({ methodNotFound: [], transportErrors: [] });
  });
});
