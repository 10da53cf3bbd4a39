// Run by hostile-memory.test.ts in a child process, so that its RSS is the agent's alone (the
// simulated fleet runs in the test's process). One agent on the in-process bus works through
// rounds of jobs against every hostile target — a newest-supported handshake, a pinned one and a
// detection each — while healthy targets' jobs keep coming every 250 ms. It prints JSON lines:
// `rss` samples every 100 ms, one `result` per job, and a `done` line with the totals.
//
// Input (JSON in MCP_FLEET_HOSTILE_MEMORY): { hostile: {name,url}[], healthy: {name,url}[], rounds,
// concurrency, timeoutMs, deny }.
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createMemoryBus, type Job, type Result } from '@mcp-fleet/bus';
import { createLogger } from '@mcp-fleet/log';
import { startAgent } from '../src';

interface Input {
  hostile: { name: string; url: string }[];
  healthy: { name: string; url: string; revision: string }[];
  rounds: number;
  concurrency: number;
  timeoutMs: number;
  deny: string[];
}

const input = JSON.parse(process.env.MCP_FLEET_HOSTILE_MEMORY ?? '') as Input;
const REGION = 'eu-west';
/** The hostile targets listen on loopback: the agent's floor lets jobs reach it. */
const LOOPBACK_FLOOR = { allow: ['127.0.0.0/8'], deny: [] };
const HEALTHY_EVERY_MS = 250;
const gc = (globalThis as { gc?: () => void }).gc;
const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const memory = () => {
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
};

const quiet = createLogger('hostile-memory', 'silent');
const bus = createMemoryBus({ log: quiet });
const started = performance.now();
const since = () => Math.round(performance.now() - started);

const sampler = setInterval(() => emit({ type: 'rss', t: since(), ...memory() }), 100);
// How late this process's timers fired: a probe's timeout can end it no sooner than its timer runs,
// so on a loaded machine (CI runs other test files on the same two cores) a probe ends that much late.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

type Kind = 'newest' | 'pinned' | 'detection';
interface Pending {
  group: 'hostile' | 'healthy';
  target: string;
  kind: Kind;
  publishedAt: number;
}
const pending = new Map<string, Pending>();

function job(target: { name: string; url: string }, kind: Kind, pin = '2025-11-25'): Job {
  const detection = kind === 'detection';
  return {
    jobId: `job-${randomUUID()}`,
    kind: detection ? 'detection' : 'handshake',
    region: REGION,
    serverId: target.name,
    serverName: target.name,
    testId: detection ? null : `${target.name}-${kind}`,
    url: target.url,
    headers: {},
    revision: detection ? null : kind === 'newest' ? 'newest' : pin,
    currentRevision: null,
    recheck: false,
    timeoutMs: input.timeoutMs,
    slot: 0,
    scheduledAt: new Date().toISOString(),
    allow: ['127.0.0.0/8'],
    deny: input.deny,
  } as Job;
}

async function publish(group: Pending['group'], target: { name: string; url: string }, kind: Kind, pin?: string) {
  const j = job(target, kind, pin);
  pending.set(j.jobId, { group, target: target.name, kind, publishedAt: since() });
  await bus.publishJob(j);
}

// Every hostile job, round after round; at most `window` of them in hand at once, so the agent
// always has room for the healthy jobs (as a scheduler spreading jobs over an interval leaves it).
const hostileQueue: [{ name: string; url: string }, Kind][] = [];
for (let r = 0; r < input.rounds; r += 1)
  for (const target of input.hostile)
    for (const kind of ['newest', 'pinned', 'detection'] as const) hostileQueue.push([target, kind]);
const hostileTotal = hostileQueue.length;
const window = Math.max(1, input.concurrency - 4);
let hostileInHand = 0;
let hostileDone = 0;
let healthyPublished = 0;
let finish: () => void = () => {};
const finished = new Promise<void>((resolve) => {
  finish = resolve;
});

const feed = () => {
  while (hostileInHand < window && hostileQueue.length > 0) {
    const [target, kind] = hostileQueue.shift()!;
    hostileInHand += 1;
    void publish('hostile', target, kind);
  }
};

bus.consumeResults(
  async (delivery) => {
    const result: Result = delivery.value;
    await delivery.ack();
    const p = pending.get(result.jobId);
    if (!p) return;
    pending.delete(result.jobId);
    const outcome = result.run?.outcome ?? result.detection?.outcome ?? 'none';
    emit({
      type: 'result',
      t: since(),
      group: p.group,
      target: p.target,
      kind: p.kind,
      outcome,
      latencyMs: since() - p.publishedAt,
      probeMs: Date.parse(result.finishedAt) - Date.parse(result.startedAt),
    });
    if (p.group === 'hostile') {
      hostileInHand -= 1;
      hostileDone += 1;
      if (hostileDone === hostileTotal) finish();
      else feed();
    }
  },
  { concurrency: 8 },
);

gc?.();
const baseline = memory();
emit({ type: 'baseline', t: since(), ...baseline });

const agent = await startAgent({
  bus,
  region: REGION,
  concurrency: input.concurrency,
  metricsPort: null,
  log: quiet,
  heartbeatMs: 60_000,
  processMetrics: false,
  probeFloor: LOOPBACK_FLOOR,
});

const healthyTimer = setInterval(() => {
  const target = input.healthy[healthyPublished % input.healthy.length]!;
  healthyPublished += 1;
  void publish('healthy', target, 'pinned', target.revision);
}, HEALTHY_EVERY_MS);

feed();
await finished;
clearInterval(healthyTimer);
// The last healthy jobs still in hand get their answers too.
const drainUntil = Date.now() + 10_000;
while ([...pending.values()].some((p) => p.group === 'healthy') && Date.now() < drainUntil)
  await new Promise((resolve) => setTimeout(resolve, 50));
await agent.stop();
await bus.close();
gc?.();
await new Promise((resolve) => setTimeout(resolve, 200));
const end = memory();
clearInterval(sampler);
loopDelay.disable();
emit({
  type: 'done',
  t: since(),
  hostileJobs: hostileTotal,
  healthyJobs: healthyPublished,
  unanswered: [...pending.values()],
  loopDelayMaxMs: Math.round(loopDelay.max / 1e6),
  loopDelayP99Ms: Math.round(loopDelay.percentile(99) / 1e6),
  ...end,
});
