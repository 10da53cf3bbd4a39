// An agent against the hostile fleet, in a child process of its own so its RSS can be measured:
// rounds of handshake and detection jobs on every `hostile-…` target (a 1 GiB body, a gzip bomb,
// endless and flooding streams, slowloris, resets, bad TLS, …) at concurrency 16, with healthy
// targets' jobs arriving every 250 ms. Every job must get a result, the healthy ones must keep
// succeeding promptly throughout, and the agent's memory must stay bounded.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { HOSTILE_TARGET_NAMES, REDIRECT_DENIED_HOST, type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { OUTCOME_NAMES } from '@mcp-fleet/probe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('./hostile-memory.script.ts', import.meta.url));
const ROUNDS = Number(process.env.HOSTILE_MEMORY_ROUNDS ?? 20);
const CONCURRENCY = 16;
const TIMEOUT_MS = 2_000;
/** The bound: a probe that buffered the 1 GiB body or inflated the bomb would pass it many times over. */
const RSS_LIMIT_BYTES = 400 * 1024 * 1024;
/** A healthy job waits at most this long for its result, hostile rounds or not. */
const HEALTHY_LATENCY_LIMIT_MS = 3_000;
/**
 * A hostile job's probe ends within its timeout and this margin (the agent's own guard is 5 s), plus
 * however late the child's timers fired: a timeout cannot end a probe before its timer runs, and a
 * loaded machine delays timers (once 1.5 s in CI, with other test files on the same two cores).
 */
const PROBE_MARGIN_MS = 1_000;

interface Line {
  type: 'rss' | 'baseline' | 'result' | 'done';
  t: number;
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  group: 'hostile' | 'healthy';
  target: string;
  kind: 'newest' | 'pinned' | 'detection';
  outcome: string;
  latencyMs: number;
  probeMs: number;
  hostileJobs: number;
  healthyJobs: number;
  unanswered: unknown[];
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
}

let sim: Sim;
let deniedListener: Server;
let deniedConnections = 0;

beforeAll(async () => {
  sim = await startSim({ only: [...HOSTILE_TARGET_NAMES, 'modern', 'sessions-2025-11-25'] });
  // Where hostile-redirect-denied points: a probe that followed it would show up here.
  deniedListener = createServer((socket) => {
    deniedConnections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    deniedListener.once('error', reject);
    deniedListener.listen(0, REDIRECT_DENIED_HOST, resolve);
  });
});

afterAll(async () => {
  if (deniedListener) await new Promise<void>((resolve) => deniedListener.close(() => resolve()));
  await sim?.close();
});

function runChild(): Promise<{ lines: Line[]; code: number | null; stderr: string; wallMs: number }> {
  const input = {
    hostile: HOSTILE_TARGET_NAMES.map((name) => {
      const url = sim.target(name).url;
      // hostile-redirect-denied redirects to 127.0.0.2 on the port it is told: the listener's.
      const port = (deniedListener.address() as { port: number }).port;
      return { name, url: name === 'hostile-redirect-denied' ? url.replace(/\/mcp$/, `/to/${port}/mcp`) : url };
    }),
    healthy: [
      { name: 'modern', url: sim.target('modern').url, revision: '2026-07-28' },
      { name: 'sessions-2025-11-25', url: sim.target('sessions-2025-11-25').url, revision: '2025-11-25' },
    ],
    rounds: ROUNDS,
    concurrency: CONCURRENCY,
    timeoutMs: TIMEOUT_MS,
    deny: [`${REDIRECT_DENIED_HOST}/32`],
  };
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', SCRIPT], {
      env: { ...process.env, MCP_FLEET_HOSTILE_MEMORY: JSON.stringify(input) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 280_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      const lines = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line);
      resolve({ lines, code, stderr, wallMs: Date.now() - started });
    });
  });
}

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

describe('an agent against the hostile fleet', () => {
  it('answers every job, keeps serving healthy targets, and stays within its memory bound', async () => {
    const { lines, code, stderr, wallMs } = await runChild();
    expect(code, stderr).toBe(0);
    const baseline = lines.find((l) => l.type === 'baseline');
    const done = lines.find((l) => l.type === 'done');
    expect(baseline, stderr).toBeDefined();
    expect(done, stderr).toBeDefined();
    const samples = lines.filter((l) => l.type === 'rss');
    const results = lines.filter((l) => l.type === 'result');
    const hostile = results.filter((r) => r.group === 'hostile');
    const healthy = results.filter((r) => r.group === 'healthy');
    const peak = samples.reduce((max, s) => (s.rss > max.rss ? s : max), baseline!);
    const peakHeap = Math.max(...samples.map((s) => s.heapUsed));
    const peakArrayBuffers = Math.max(...samples.map((s) => s.arrayBuffers));

    // Outcomes per target and job kind, e.g. hostile-slowloris newest → timeout ×20.
    const table = new Map<string, Map<string, number>>();
    for (const r of hostile) {
      const key = `${r.target} ${r.kind}`;
      const counts = table.get(key) ?? new Map<string, number>();
      counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
      table.set(key, counts);
    }
    const healthyLatency = healthy.map((r) => r.latencyMs);
    console.log(
      [
        `hostile memory: ${ROUNDS} rounds × ${HOSTILE_TARGET_NAMES.length} hostile targets × 3 jobs = ${done!.hostileJobs} hostile jobs, ${done!.healthyJobs} healthy jobs, concurrency ${CONCURRENCY}, timeout ${TIMEOUT_MS} ms`,
        `  RSS baseline ${mb(baseline!.rss)} MB, peak ${mb(peak.rss)} MB (at ${Math.round(peak.t / 1000)} s), end ${mb(done!.rss)} MB (after gc); bound ${mb(RSS_LIMIT_BYTES)} MB`,
        `  heapUsed baseline ${mb(baseline!.heapUsed)} MB, peak ${mb(peakHeap)} MB, end ${mb(done!.heapUsed)} MB; arrayBuffers peak ${mb(peakArrayBuffers)} MB`,
        `  healthy results: ${healthy.length}, outcomes ${JSON.stringify(Object.fromEntries(count(healthy.map((r) => r.outcome))))}, latency p50 ${percentile(healthyLatency, 50)} ms, p99 ${percentile(healthyLatency, 99)} ms, max ${Math.max(...healthyLatency)} ms`,
        `  slowest hostile probe ${Math.max(...hostile.map((r) => r.probeMs))} ms; event-loop delay p99 ${done!.loopDelayP99Ms} ms, max ${done!.loopDelayMaxMs} ms; wall time ${Math.round(wallMs / 1000)} s; connections to ${REDIRECT_DENIED_HOST}: ${deniedConnections}`,
        ...[...table].map(([key, counts]) => `  ${key}: ${[...counts].map(([o, n]) => `${o} ×${n}`).join(', ')}`),
      ].join('\n'),
    );

    // Every job got its result.
    expect(done!.unanswered).toEqual([]);
    expect(hostile).toHaveLength(done!.hostileJobs);
    expect(done!.hostileJobs).toBe(ROUNDS * HOSTILE_TARGET_NAMES.length * 3);
    expect(healthy).toHaveLength(done!.healthyJobs);
    // Every hostile job ended in a classified outcome, within its timeout and a margin.
    const probeLimit = TIMEOUT_MS + PROBE_MARGIN_MS + done!.loopDelayMaxMs;
    for (const r of hostile) {
      if (r.kind === 'detection') expect(['DETECTED', 'NONE', 'RATE_LIMITED'], r.target).toContain(r.outcome);
      else expect(OUTCOME_NAMES, `${r.target} ${r.kind}`).toContain(r.outcome);
      expect(r.probeMs, `${r.target} ${r.kind}`).toBeLessThanOrEqual(probeLimit);
    }
    // The healthy targets kept succeeding, promptly, from the first hostile round to the last.
    expect(healthy.length).toBeGreaterThan(10);
    expect(healthy.every((r) => r.outcome === 'success')).toBe(true);
    expect(Math.max(...healthyLatency)).toBeLessThanOrEqual(HEALTHY_LATENCY_LIMIT_MS);
    const lastHostile = Math.max(...hostile.map((r) => r.t));
    expect(healthy.some((r) => r.t > lastHostile * 0.9)).toBe(true);
    // Memory stayed bounded, and nothing dialled the denied address.
    expect(peak.rss).toBeLessThan(RSS_LIMIT_BYTES);
    expect(deniedConnections).toBe(0);
  }, 300_000);
});

function count(values: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
}
