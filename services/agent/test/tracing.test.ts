// Exporting for real: with no endpoint there is no SDK and results carry no trace id; with one,
// the Node SDK sends the probe spans over OTLP/HTTP to a collector (a tiny one, in-process here).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryBus, type Result } from '@mcp-fleet/bus';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, startTracing } from '../src';
import { LOOPBACK_FLOOR, makeJob, REGION, waitFor } from './support';

let sim: Sim;
beforeAll(async () => {
  sim = await startSim({ only: ['modern'] });
});
afterAll(async () => {
  await sim.close();
});

async function runOne(): Promise<Result> {
  const log = createLogger('test', 'silent');
  const bus = createMemoryBus({ log });
  const results: Result[] = [];
  bus.consumeResults(
    async (d) => {
      results.push(d.value);
      await d.ack();
    },
    { concurrency: 1 },
  );
  const agent = await startAgent({ bus, region: REGION, log, metricsPort: null, probeFloor: LOOPBACK_FLOOR });
  const job = makeJob({ url: sim.target('modern').url, currentRevision: '2026-07-28' });
  await bus.publishJob(job);
  const result = await waitFor('the result', () => results[0]);
  await agent.stop();
  await bus.close();
  return result;
}

// In this order: the SDK, once started, stays the process's global tracer provider.
describe('startTracing', () => {
  it('without an endpoint starts nothing, and results carry no trace id', async () => {
    const tracing = await startTracing({ serviceName: 'mcp-fleet-agent' });
    expect(tracing.enabled).toBe(false);
    const result = await runOne();
    expect(result.traceId).toBeNull();
    await tracing.shutdown();
  });

  it('with an endpoint exports the probe spans over OTLP/HTTP, and the result points at their trace', async () => {
    const bodies: { path: string; body: string }[] = [];
    const collector = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        bodies.push({ path: req.url ?? '', body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const { port } = collector.address() as AddressInfo;
    try {
      const tracing = await startTracing({ serviceName: 'mcp-fleet-agent', url: `http://127.0.0.1:${port}/v1/traces` });
      expect(tracing.enabled).toBe(true);
      const result = await runOne();
      expect(result.traceId).toMatch(/^[0-9a-f]{32}$/);
      await tracing.shutdown();

      expect(bodies.length).toBeGreaterThan(0);
      expect(bodies.every((b) => b.path === '/v1/traces')).toBe(true);
      const spans = bodies.flatMap((b) =>
        JSON.parse(b.body).resourceSpans.flatMap((rs: { scopeSpans: { spans: unknown[] }[] }) =>
          rs.scopeSpans.flatMap((ss) => ss.spans),
        ),
      ) as { name: string; traceId: string; parentSpanId?: string; spanId: string }[];
      const parent = spans.find((s) => s.name === 'mcp.handshake');
      expect(parent?.traceId).toBe(result.traceId);
      const children = spans.filter((s) => s.parentSpanId === parent?.spanId);
      expect(children.map((c) => c.name)).toEqual(['POST server/discover']);
      expect(bodies[0]?.body).toContain('"mcp-fleet-agent"');
    } finally {
      await new Promise((resolve) => collector.close(resolve));
    }
  });
});
