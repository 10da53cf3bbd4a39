// Test support: jobs as control would build them, spans captured in memory, /metrics parsed.
import { randomUUID } from 'node:crypto';
import type { Job } from '@mcp-fleet/bus';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

export const REGION = 'eu-west';

/** The sim listens on loopback: the fleet file must allow it, as the demo's does. */
export const LOOPBACK_ALLOWED = ['127.0.0.0/8'];

/** An agent's floor that lets jobs reach the sim (the default floor is public addresses only). */
export const LOOPBACK_FLOOR = { allow: LOOPBACK_ALLOWED, deny: [] };

export function makeJob(fields: Partial<Job> & Pick<Job, 'url'>): Job {
  const kind = fields.kind ?? 'handshake';
  return {
    jobId: `job-${randomUUID()}`,
    kind,
    depth: 'handshake',
    region: REGION,
    serverId: 'server-1',
    serverName: 'orders',
    testId: kind === 'handshake' ? 'test-1' : null,
    headers: {},
    revision: kind === 'handshake' ? 'newest' : null,
    currentRevision: null,
    recheck: false,
    timeoutMs: 5_000,
    slot: Date.now() - (Date.now() % 60_000),
    scheduledAt: new Date().toISOString(),
    allow: LOOPBACK_ALLOWED,
    deny: [],
    script: null,
    ...fields,
  };
}

export function memoryTracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return {
    provider,
    exporter,
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    /** The probe span of a job and its children. */
    probe(jobId: string): { parent: ReadableSpan; children: ReadableSpan[] } {
      const all = exporter.getFinishedSpans();
      const parent = all.find((s) => s.attributes['mcp_fleet.job.id'] === jobId);
      if (!parent) throw new Error(`no span for job ${jobId}`);
      const children = all.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
      return { parent, children };
    },
  };
}

export { parseMetrics, type Sample, seriesValue, waitFor } from '@mcp-fleet/testkit';
