// Testing regions for real (issue 17): an agent's source address (every probe it runs connects from
// it, so two agents on one machine are two callers a server can tell apart), and the freshness
// recheck (a newest-supported job marked `recheck` looks its revision up again, newest first).
// Real agents on the in-process bus, real SDK servers from fleet-sim.
import { createMemoryBus, type MemoryBus, type Result } from '@mcp-fleet/bus';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { TargetPolicy } from '@mcp-fleet/probe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Agent, type AgentOptions, SourceAddressError, startAgent } from '../src';
import { DispatcherCache } from '../src/target-policy';
import { LOOPBACK_FLOOR, makeJob, memoryTracing, waitFor } from './support';

let sim: Sim;
beforeAll(async () => {
  sim = await startSim({ only: ['geo', 'drifter-modern'] });
});
afterAll(async () => {
  await sim.close();
});

const quiet = createLogger('test', 'silent');
let bus: MemoryBus;
let results: Result[];
let agents: Agent[];

beforeEach(() => {
  bus = createMemoryBus({ log: quiet });
  results = [];
  agents = [];
  bus.consumeResults(
    async (d) => {
      results.push(d.value);
      await d.ack();
    },
    { concurrency: 4 },
  );
});
afterEach(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await bus.close();
});

async function agent(region: string, opts: Partial<AgentOptions> = {}): Promise<Agent> {
  const a = await startAgent({
    bus,
    region,
    log: quiet,
    tracerProvider: memoryTracing().provider,
    metricsPort: null,
    probeFloor: LOOPBACK_FLOOR,
    processMetrics: false,
    ...opts,
  });
  agents.push(a);
  return a;
}

const resultOf = (jobId: string) => waitFor(`the result of ${jobId}`, () => results.find((r) => r.jobId === jobId));

describe("an agent's source address", () => {
  it('is where every probe connects from: the server sees 127.0.0.2, and answers it with its face for 127.0.0.2', async () => {
    sim.face('geo', 'modern');
    sim.face('geo', 'legacy', '127.0.0.2');
    sim.resetRequests();
    await agent('eu-west', { sourceAddress: '127.0.0.2' });
    await agent('us-east');
    const url = sim.target('geo').url;
    const jobs = [
      makeJob({ url, region: 'eu-west' }),
      makeJob({ url, region: 'eu-west', kind: 'detection', testId: null, revision: null }),
      makeJob({ url, region: 'eu-west', depth: 'conformance', jobId: 'eu-conformance' }),
      makeJob({ url, region: 'us-east' }),
    ];
    for (const job of jobs) await bus.publishJob(job);
    const [eu, detection, conformance, us] = await Promise.all(jobs.map((j) => resultOf(j.jobId)));

    expect(eu!.run).toMatchObject({ outcome: 'success', negotiated: '2025-11-25' });
    expect(detection!.detection).toMatchObject({ outcome: 'DETECTED', newestSupported: '2025-11-25' });
    expect(conformance!.run).toMatchObject({ outcome: 'success', negotiated: '2025-11-25' });
    expect(conformance!.conformance?.checks.length).toBeGreaterThan(0);
    expect(us!.run).toMatchObject({ outcome: 'success', negotiated: '2026-07-28' });

    const from = new Map<string, number>();
    for (const r of sim.requests('geo')) from.set(r.remoteAddress!, (from.get(r.remoteAddress!) ?? 0) + 1);
    // eu-west's handshake, detection and conformance came from 127.0.0.2; us-east's one run from the default.
    expect([...from.keys()].sort()).toEqual(['127.0.0.1', '127.0.0.2']);
    expect(from.get('127.0.0.2')).toBeGreaterThan(from.get('127.0.0.1')!);
  });

  it('is an IP address: anything else is refused with a clear error before the agent starts', async () => {
    for (const bad of ['eu-west.example', '127.0.0.0/8', '127.0.0.2:9000', '', ' 127.0.0.2'])
      await expect(agent('eu-west', { sourceAddress: bad })).rejects.toThrow(SourceAddressError);
    await expect(agent('eu-west', { sourceAddress: 'localhost' })).rejects.toThrow(
      'source address: an IP address of this host, like 192.0.2.10 or 2001:db8::10, not "localhost"',
    );
    const floor = new TargetPolicy(LOOPBACK_FLOOR, { floor: true });
    expect(() => new DispatcherCache(floor, { sourceAddress: 'nope' })).toThrow(SourceAddressError);
    expect(agents).toHaveLength(0);
  });
});

describe('a recheck job', () => {
  it('looks the revision up newest first though the current one still answers, and reports the move; without recheck it stays', async () => {
    await agent('eu-west');
    // drifter-modern speaks 2025-11-25 and 2026-07-28: its answer to 2025-11-25 never says a newer one exists.
    const url = sim.target('drifter-modern').url;
    const plain = makeJob({ url, currentRevision: '2025-11-25' });
    const recheck = makeJob({ url, currentRevision: '2025-11-25', recheck: true });
    await bus.publishJob(plain);
    await bus.publishJob(recheck);
    const [stays, moves] = await Promise.all([resultOf(plain.jobId), resultOf(recheck.jobId)]);

    expect(stays.run).toMatchObject({
      outcome: 'success',
      requested: '2025-11-25',
      negotiated: '2025-11-25',
      previousRevision: null,
      lookup: { performed: false },
    });
    expect(moves.run).toMatchObject({
      outcome: 'success',
      requested: '2026-07-28',
      negotiated: '2026-07-28',
      previousRevision: '2025-11-25',
      lookup: { performed: true, found: '2026-07-28' },
    });
  });
});
