// The bus on a three-node JetStream cluster (a private one on loopback): streams kept in three
// copies, and the node leading the jobs stream killed (SIGKILL) under load. Every job whose
// publish was acknowledged is consumed afterwards: nothing acked is lost. Redeliveries (an ack
// that died with its node) are counted and logged, not forbidden: consumers are idempotent.

import { type NatsCluster, startNatsCluster, startNatsServer } from '@mcp-fleet/testkit';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNatsBus, type NatsBus } from '../src';
import { capturedLogger, freshRegion, job, sleep, waitFor } from './fixtures';

const JOBS = 3_000;
/** Jobs acknowledged before the leader is killed: the rest are published while the cluster recovers. */
const KILL_AFTER = 1_000;
const PUBLISHERS = 16;
/** Short, so a delivery whose ack died with the node comes back within the test. */
const ACK_WAIT_MS = 5_000;

let cluster: NatsCluster;
const buses: NatsBus[] = [];

beforeAll(async () => {
  cluster = await startNatsCluster();
}, 90_000);
afterAll(async () => {
  await Promise.all(buses.map((b) => b.close().catch(() => {})));
  await cluster?.close();
});

async function open(opts: { replicas?: number; declare?: boolean; log?: ReturnType<typeof capturedLogger>['log'] }) {
  const bus = await connectNatsBus({
    servers: cluster.url,
    ackWaitMs: ACK_WAIT_MS,
    log: opts.log ?? capturedLogger().log,
    ...(opts.replicas !== undefined ? { replicas: opts.replicas } : {}),
    ...(opts.declare !== undefined ? { declare: opts.declare } : {}),
  });
  buses.push(bus);
  return bus;
}

/** A stream's replica count as configured, and how many peers hold it (the leader and its followers). */
async function replicasOf(bus: NatsBus, stream: string) {
  const info = await (await jetstreamManager(bus.connection)).streams.info(stream);
  return {
    configured: info.config.num_replicas,
    copies: info.cluster?.leader ? 1 + (info.cluster.replicas?.length ?? 0) : 0,
    leader: info.cluster?.leader,
  };
}

describe('the bus on a three-node JetStream cluster', () => {
  it('changes an existing stream to the configured replicas, and says so', async () => {
    // Another namespace: its own streams, created with one copy as a single server would have them.
    const namespace = `rescale${process.pid % 1000}`;
    const first = await connectNatsBus({ servers: cluster.url, namespace, replicas: 1, log: capturedLogger().log });
    buses.push(first);
    await first.ensure(['eu-west']);
    expect((await replicasOf(first, first.names.jobsStream)).configured).toBe(1);

    const { log, lines } = capturedLogger();
    const second = await connectNatsBus({ servers: cluster.url, namespace, replicas: 3, log });
    buses.push(second);
    await second.ensure(['eu-west']);
    for (const stream of [second.names.jobsStream, second.names.resultsStream]) {
      expect((await replicasOf(second, stream)).configured, stream).toBe(3);
      await waitFor(async () => (await replicasOf(second, stream)).copies === 3, 30_000, `${stream} in 3 copies`);
      expect(lines()).toContainEqual(
        expect.objectContaining({ msg: 'stream replicas changed', stream, from: 1, to: 3 }),
      );
    }
    // Declared again with the same count: nothing to change, nothing logged.
    const before = lines().length;
    const third = await connectNatsBus({ servers: cluster.url, namespace, replicas: 3, log });
    buses.push(third);
    await third.ensure(['eu-west']);
    expect(
      lines()
        .slice(before)
        .filter((l) => l.msg === 'stream replicas changed'),
    ).toEqual([]);
  }, 120_000);

  it('says what is wrong when NATS cannot keep that many copies', async () => {
    // A single server: JetStream keeps one copy only.
    const single = await startNatsServer();
    try {
      const bus = await connectNatsBus({ servers: single.url, replicas: 3, log: capturedLogger().log });
      buses.push(bus);
      await expect(bus.ensure(['eu-west'])).rejects.toThrow(
        /^stream MCPFLEET_JOBS: NATS cannot keep 3 copies \(.+\); MCP_FLEET_NATS_REPLICAS may be at most/,
      );
      await bus.close();
    } finally {
      await single.close();
    }
  }, 60_000);

  it('loses no acknowledged job when the stream leader is killed under load', async () => {
    const region = freshRegion();
    const control = await open({ replicas: 3 });
    await control.ensure([region]);
    const stream = control.names.jobsStream;
    await waitFor(async () => (await replicasOf(control, stream)).copies === 3, 30_000, 'three copies of the stream');

    // An agent: its own connection (declaring nothing), acknowledging every job it runs.
    const agent = await open({ declare: false });
    const deliveries = new Map<string, number>();
    const sub = agent.consumeJobs(
      region,
      async (d) => {
        deliveries.set(d.value.jobId, (deliveries.get(d.value.jobId) ?? 0) + 1);
        await d.ack();
      },
      { concurrency: 32 },
    );

    const acked = new Set<string>();
    let ackedAfterKill = 0;
    let failedAttempts = 0;
    let killing = false;
    let killed: string | undefined;
    let next = 0;
    const publisher = async () => {
      while (next < JOBS) {
        const sent = job(region);
        next++;
        // The scheduler's way: the same job (same id, deduplicated) again until the cluster takes it.
        const deadline = Date.now() + 60_000;
        for (;;) {
          try {
            await control.publishJob(sent);
            break;
          } catch (err) {
            failedAttempts++;
            if (Date.now() > deadline) throw err;
            await sleep(200);
          }
        }
        acked.add(sent.jobId);
        if (killing) ackedAfterKill++;
        else if (acked.size === KILL_AFTER) {
          // The other publishers go on meanwhile: the leader dies mid-load.
          killing = true;
          const { leader } = await replicasOf(control, stream);
          if (!leader) throw new Error('the jobs stream has no leader');
          killed = leader;
          await cluster.node(leader).stop('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: PUBLISHERS }, publisher));

    expect(killed, 'the leader was killed mid-load').toBeDefined();
    expect(acked.size).toBe(JOBS);
    expect(ackedAfterKill).toBe(JOBS - KILL_AFTER);
    // Another node leads the stream now, from the two copies left.
    const after = await replicasOf(control, stream);
    expect(after.leader).toBeDefined();
    expect(after.leader).not.toBe(killed);

    const missing = () => [...acked].filter((id) => !deliveries.has(id));
    await waitFor(() => missing().length === 0, 120_000, 'every acknowledged job to be consumed').catch((err) => {
      throw new Error(`${(err as Error).message}: ${missing().length} of ${acked.size} acknowledged jobs never came`);
    });
    await sub.stop();

    const redelivered = [...deliveries.values()].filter((n) => n > 1).length;
    const extra = [...deliveries.values()].reduce((sum, n) => sum + n - 1, 0);
    console.info(
      `nats-cluster: ${acked.size} jobs acked (${ackedAfterKill} after killing leader ${killed}), ` +
        `${deliveries.size} consumed, ${redelivered} delivered more than once (${extra} extra deliveries), ` +
        `${failedAttempts} publish attempts failed and were retried; new leader ${after.leader}`,
    );
    expect(missing()).toEqual([]);
    // Nothing but what was published came back.
    expect([...deliveries.keys()].filter((id) => !acked.has(id))).toEqual([]);
  }, 300_000);
});
