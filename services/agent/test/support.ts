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

export function makeJob(fields: Partial<Job> & Pick<Job, 'url'>): Job {
  const kind = fields.kind ?? 'handshake';
  return {
    jobId: `job-${randomUUID()}`,
    kind,
    region: REGION,
    serverId: 'server-1',
    serverName: 'orders',
    testId: kind === 'handshake' ? 'test-1' : null,
    headers: {},
    revision: kind === 'handshake' ? 'newest' : null,
    currentRevision: null,
    timeoutMs: 5_000,
    slot: Date.now() - (Date.now() % 60_000),
    scheduledAt: new Date().toISOString(),
    allow: LOOPBACK_ALLOWED,
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

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A small parser of the Prometheus text format: one sample per line, comments skipped. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`unparsable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of one series (0 when absent): every given label must match. */
export function seriesValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

export async function waitFor<T>(what: string, fn: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
