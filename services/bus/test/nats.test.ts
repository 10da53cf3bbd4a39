// The NATS bus against the contract on the real server (127.0.0.1:4222), in a namespace of its
// own that is deleted afterwards, plus what only NATS has: the declared streams and consumers.
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect, type NatsConnection, nanos } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Bus, connectNatsBus, type NatsBus, type NatsBusOptions, natsNames, subjects } from '../src';
import { busContract } from './contract';
import { capturedLogger, freshRegion, job, result, sleep, waitFor } from './fixtures';

const SERVERS = process.env.NATS_TEST_URL ?? '127.0.0.1:4222';
const namespace = `t${randomBytes(4).toString('hex')}`;
let raw: NatsConnection;
const optionsOf = new WeakMap<Bus, NatsBusOptions>();

async function open(opts: Omit<NatsBusOptions, 'servers'>): Promise<NatsBus> {
  const options = { servers: SERVERS, namespace, ...opts };
  const bus = await connectNatsBus(options);
  optionsOf.set(bus, options);
  return bus;
}

beforeAll(async () => {
  raw = await connect({ servers: SERVERS });
});
afterAll(async () => {
  const jsm = await jetstreamManager(raw);
  for (const stream of [`${namespace.toUpperCase()}_JOBS`, `${namespace.toUpperCase()}_RESULTS`]) {
    await jsm.streams.delete(stream).catch(() => false);
  }
  await raw.close();
});

busContract('nats', {
  open,
  peer: async (bus) => open(optionsOf.get(bus)!),
  // Straight into the stream (heartbeats: core NATS), around the bus's validation.
  raw: async (_bus, subject, data) => {
    if (subject.includes('.heartbeats.')) raw.publish(subject, data);
    else await jetstream(raw).publish(subject, data);
  },
  subjects: subjects(namespace),
});

describe('nats bus declarations', () => {
  it('declares work-queue streams with the dedupe window and one filtered durable per region', async () => {
    const { log } = capturedLogger();
    const bus = await open({ log, duplicateWindowMs: 120_000, ackWaitMs: 7_000, maxDeliver: 4 });
    const region = freshRegion();
    await bus.ensure([region]);
    await bus.ensure([region]); // idempotent
    const jsm = await jetstreamManager(raw);
    for (const [stream, subject] of [
      [bus.names.jobsStream, `${namespace}.jobs.>`],
      [bus.names.resultsStream, `${namespace}.results.>`],
    ] as const) {
      const { config } = await jsm.streams.info(stream);
      expect(config).toMatchObject({ retention: 'workqueue', storage: 'file', subjects: [subject] });
      expect(config.duplicate_window).toBe(nanos(120_000));
    }
    // Jobs go stale: an hour at most, 100 000 per region (subject), the oldest discarded. Results never.
    expect((await jsm.streams.info(bus.names.jobsStream)).config).toMatchObject({
      max_age: nanos(3_600_000),
      max_msgs_per_subject: 100_000,
      discard: 'old',
    });
    expect((await jsm.streams.info(bus.names.resultsStream)).config).toMatchObject({
      max_age: 0,
      max_msgs_per_subject: -1,
    });
    const jobs = await jsm.consumers.info(bus.names.jobsStream, `jobs-${region}`);
    expect(jobs.config).toMatchObject({
      durable_name: `jobs-${region}`,
      filter_subject: `${namespace}.jobs.${region}`,
      ack_policy: 'explicit',
      max_deliver: 4,
      ack_wait: nanos(7_000),
    });
    const ingest = await jsm.consumers.info(bus.names.resultsStream, 'ingest');
    expect(ingest.config).toMatchObject({ durable_name: 'ingest', ack_policy: 'explicit' });
    await bus.close();
  });

  it("brings an older version's jobs stream up to the limits in place, keeping its jobs", async () => {
    const { log } = capturedLogger();
    const ns = `${namespace}lim`;
    const names = natsNames(ns);
    const jsm = await jetstreamManager(raw);
    // As a version without limits made it, with a job waiting.
    await jsm.streams.add({
      name: names.jobsStream,
      subjects: [names.allJobs],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      duplicate_window: nanos(600_000),
    });
    const waiting = job('eu-west');
    await jetstream(raw).publish(names.jobs('eu-west'), JSON.stringify(waiting), { msgID: waiting.jobId });
    const bus = await open({ log, namespace: ns });
    try {
      await bus.ensure(['eu-west']);
      const info = await jsm.streams.info(names.jobsStream);
      expect(info.config).toMatchObject({ max_age: nanos(3_600_000), max_msgs_per_subject: 100_000, discard: 'old' });
      expect(info.state.messages).toBe(1);
      const seen: string[] = [];
      const sub = bus.consumeJobs(
        'eu-west',
        async (d) => {
          seen.push(d.value.jobId);
          await d.ack();
        },
        { concurrency: 1 },
      );
      await waitFor(() => seen.length === 1, 10_000, 'the waiting job');
      await sub.stop();
      expect(seen).toEqual([waiting.jobId]);
    } finally {
      await bus.close();
      for (const stream of [names.jobsStream, names.resultsStream]) await jsm.streams.delete(stream).catch(() => false);
    }
  });

  it('puts the job id in Nats-Msg-Id of a job, and no message id on a result', async () => {
    const { log } = capturedLogger();
    const bus = await open({ log });
    const region = freshRegion();
    const sent = job(region);
    await bus.publishJob(sent);
    await bus.publishResult(result(region));
    const jsm = await jetstreamManager(raw);
    const stored = await jsm.streams.getMessage(bus.names.jobsStream, { last_by_subj: bus.names.jobs(region) });
    expect(stored?.header.get('Nats-Msg-Id')).toBe(sent.jobId);
    // JetStream dedupes by message id across the whole results stream, whoever set it.
    const reported = await jsm.streams.getMessage(bus.names.resultsStream, { last_by_subj: bus.names.results(region) });
    expect(reported?.header?.get('Nats-Msg-Id') ?? '').toBe('');
    await bus.close();
  });

  it("a Nats-Msg-Id naming another region's job, set first on a foreign publisher's own subject, shadows nothing", async () => {
    const { log } = capturedLogger();
    const bus = await open({ log });
    const [own, other] = [freshRegion(), freshRegion()];
    await bus.ensure([own, other]);
    const real = result(other, { jobId: `hs.test-1.${other}.1700000000000` });
    const seen: string[] = [];
    const sub = bus.consumeResults(
      async (d) => {
        if (d.value.region === own || d.value.region === other) seen.push(`${d.value.region} ${d.value.jobId}`);
        await d.ack();
      },
      { concurrency: 2 },
    );
    // NATS permissions bind the subject, never the headers: the agent may set any message id.
    const decoy = result(own);
    const ack = await jetstream(raw).publish(bus.names.results(own), JSON.stringify(decoy), { msgID: real.jobId });
    expect(ack.duplicate).toBe(false);
    await bus.publishResult(real);
    await waitFor(() => seen.length === 2, 10_000, 'both results');
    await sub.stop();
    expect(seen.sort()).toEqual([`${other} ${real.jobId}`, `${own} ${decoy.jobId}`].sort());
    await bus.close();
  });

  it('deletes a message that reached max deliveries from the work queue, once, whichever agent sees it', async () => {
    const a = capturedLogger();
    const b = capturedLogger();
    const bus = await open({ log: a.log, maxDeliver: 2 });
    const peer = await open({ log: b.log, maxDeliver: 2 });
    const region = freshRegion();
    await bus.ensure([region]);
    const nakAll = async (d: { nak(ms?: number): Promise<void> }) => d.nak(0);
    const subs = [
      bus.consumeJobs(region, nakAll, { concurrency: 1 }),
      peer.consumeJobs(region, nakAll, { concurrency: 1 }),
    ];
    await bus.publishJob(job(region));
    await waitFor(() => bus.stats().dropped + peer.stats().dropped === 1, 10_000, 'the drop');
    await sleep(500);
    expect(bus.stats().dropped + peer.stats().dropped).toBe(1);
    const jsm = await jetstreamManager(raw);
    const state = (await jsm.streams.info(bus.names.jobsStream, { subjects_filter: bus.names.jobs(region) })).state;
    expect(state.subjects?.[bus.names.jobs(region)] ?? 0).toBe(0);
    await Promise.all(subs.map((s) => s.stop()));
    await Promise.all([bus.close(), peer.close()]);
  });

  it('lifts the delivery limit an older version gave the ingest durable, whatever this process chose', async () => {
    const { log } = capturedLogger();
    const ns = `${namespace}old`;
    const jsm = await jetstreamManager(raw);
    const first = await open({ log, namespace: ns });
    try {
      await first.ensure(['eu-west']);
      // As a version from before unlimited ingest deliveries left it.
      await jsm.consumers.update(first.names.resultsStream, 'ingest', { max_deliver: 10 });
      expect((await jsm.consumers.info(first.names.resultsStream, 'ingest')).config.max_deliver).toBe(10);
      await first.close();
      for (const how of ['ensure', 'consumeResults'] as const) {
        await jsm.consumers.update(first.names.resultsStream, 'ingest', { max_deliver: 10 });
        const bus = await open({ log, namespace: ns }); // default settings: no choice of its own
        if (how === 'ensure') await bus.ensure(['eu-west']);
        else {
          const sub = bus.consumeResults(async (d) => d.ack(), { concurrency: 1 });
          await waitFor(
            async () => (await jsm.consumers.info(bus.names.resultsStream, 'ingest')).config.max_deliver === -1,
            10_000,
            'the ingest durable to lose its limit',
          );
          await sub.stop();
        }
        expect((await jsm.consumers.info(bus.names.resultsStream, 'ingest')).config.max_deliver, how).toBe(-1);
        await bus.close();
      }
    } finally {
      for (const stream of [first.names.jobsStream, first.names.resultsStream])
        await jsm.streams.delete(stream).catch(() => false);
    }
  });

  it("an agent's bus (declare: false) creates nothing: it waits for control's durable, saying so once, then pulls", async () => {
    const ns = `${namespace}ag`;
    const agentLog = capturedLogger();
    const agent = await open({ log: agentLog.log, namespace: ns, declare: false });
    const jsm = await jetstreamManager(raw);
    const region = freshRegion();
    const seen: string[] = [];
    const sub = agent.consumeJobs(
      region,
      async (d) => {
        seen.push(d.value.jobId);
        await d.ack();
      },
      { concurrency: 1, ackWaitMs: 7_000 },
    );
    try {
      await expect(agent.ensure([region])).rejects.toThrow('this bus only uses what control declares');
      await expect(agent.publishResult(result(region))).rejects.toThrow(
        `no stream takes ${ns}.results.${region} yet: waiting for control to declare it`,
      );
      await waitFor(() => agentLog.text().includes('waiting for control to declare it'), 10_000, 'the waiting line');
      await sleep(1_500); // a few retries
      expect(agentLog.lines().filter((l) => l.msg === 'pulling failed; retrying')).toHaveLength(1);
      for (const stream of [agent.names.jobsStream, agent.names.resultsStream])
        await expect(jsm.streams.info(stream)).rejects.toThrow(/stream not found/);
      // Control declares (with its own ack wait): the agent finds the durable and takes the job,
      // saying once that the ack wait it asked for is not the durable's.
      const control = await open({ log: capturedLogger().log, namespace: ns });
      await control.ensure([region]);
      const sent = job(region);
      await control.publishJob(sent);
      await waitFor(() => seen.includes(sent.jobId), 20_000, 'the job');
      expect((await jsm.consumers.info(agent.names.jobsStream, `jobs-${region}`)).config.ack_wait).toBe(nanos(60_000));
      expect(agentLog.lines().filter((l) => l.msg?.toString().includes("ack wait is control's"))).toHaveLength(1);
      await control.close();
    } finally {
      await sub.stop();
      await agent.close();
      for (const stream of [agent.names.jobsStream, agent.names.resultsStream])
        await jsm.streams.delete(stream).catch(() => false);
    }
  });

  it('declares again what was deleted under it, and keeps consuming', async () => {
    const { log } = capturedLogger();
    const bus = await open({ log });
    const region = freshRegion();
    await bus.ensure([region]);
    const seen: string[] = [];
    const sub = bus.consumeJobs(
      region,
      async (d) => {
        seen.push(d.value.jobId);
        await d.ack();
      },
      { concurrency: 1 },
    );
    const first = job(region);
    await bus.publishJob(first);
    await waitFor(() => seen.includes(first.jobId));
    const jsm = await jetstreamManager(raw);
    await jsm.streams.delete(bus.names.jobsStream);
    const second = job(region);
    expect(await bus.publishJob(second)).toEqual({ duplicate: false });
    await waitFor(() => seen.includes(second.jobId), 20_000, 'the job after the stream came back');
    await sub.stop();
    await bus.close();
  });
});
