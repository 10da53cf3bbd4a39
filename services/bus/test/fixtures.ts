// Valid messages, a logger whose lines a test can read, and small waiting helpers.
// Other workspaces' tests import it as @mcp-fleet/bus/testing (in bus, not testkit: bus's own tests
// use testkit, so testkit cannot depend on bus).
import { randomUUID } from 'node:crypto';
import { createLogger, type Logger } from '@mcp-fleet/log';
import type { Bus, Heartbeat, Job, Result } from '../src';

export function job(region: string, overrides: Partial<Job> = {}): Job {
  return {
    jobId: `job-${randomUUID()}`,
    kind: 'handshake',
    region,
    serverId: 'srv-1',
    serverName: 'orders',
    testId: 'test-1',
    url: 'https://orders.example.com/mcp',
    headers: { Authorization: 'Bearer s3cret-token' },
    depth: 'handshake',
    revision: 'newest',
    currentRevision: '2025-06-18',
    recheck: false,
    timeoutMs: 10_000,
    slot: 1_700_000_000_000,
    scheduledAt: new Date().toISOString(),
    allow: [],
    deny: [],
    script: null,
    ...overrides,
  };
}

export function result(region: string, overrides: Partial<Result> = {}): Result {
  const now = new Date().toISOString();
  return {
    jobId: `job-${randomUUID()}`,
    kind: 'handshake',
    region,
    agent: 'agent-1',
    serverId: 'srv-1',
    testId: 'test-1',
    slot: 1_700_000_000_000,
    scheduledAt: now,
    startedAt: now,
    finishedAt: now,
    traceId: null,
    conformance: null,
    surfaces: [],
    script: null,
    run: {
      mode: 'newest',
      requested: '2025-06-18',
      negotiated: '2025-06-18',
      generation: 'sessions',
      era: 'legacy',
      outcome: 'success',
      message: 'ok',
      previousRevision: null,
      requests: 3,
      millis: 12,
      serverInfo: { name: 'orders', version: '1.0.0' },
      assertion: null,
      lookup: { performed: false, found: null, requests: 0 },
      evidence: null,
    },
    detection: null,
    ...overrides,
  };
}

export function heartbeat(region: string): Heartbeat {
  const now = new Date().toISOString();
  return { agent: 'agent-1', region, version: '0.1.0', inFlight: 0, startedAt: now, at: now };
}

/** A logger that keeps its JSON lines for the test to read. */
export function capturedLogger(): { log: Logger; lines: () => Record<string, unknown>[]; text: () => string } {
  const raw: string[] = [];
  const log = createLogger('bus', 'debug', { write: (line: string) => raw.push(line) });
  return {
    log,
    lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>),
    text: () => raw.join(''),
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

let counter = 0;
/** A region name no other test in the file uses (a durable consumer outlives a test). */
export const freshRegion = () => `r${process.pid % 1000}-${++counter}`;

/** A job published and consumed over the bus, once: JetStream works through this connection. */
export async function roundTrip(bus: Bus, region = 'eu-west'): Promise<void> {
  await bus.ensure([region]);
  const got: string[] = [];
  const sub = bus.consumeJobs(
    region,
    async (d) => {
      got.push(d.value.jobId);
      await d.ack();
    },
    { concurrency: 1 },
  );
  try {
    const sent = job(region);
    await bus.publishJob(sent);
    await waitFor(() => got.includes(sent.jobId), 10_000, 'the job to come back over the bus');
  } finally {
    await sub.stop();
  }
}
