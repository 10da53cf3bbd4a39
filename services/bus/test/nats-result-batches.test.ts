// Results in batches on the real NATS server (127.0.0.1:4222), in a namespace of its own: an
// agent's results share messages, ingest still gets each alone, and a results message is hostile
// input element by element (one bad result never takes its neighbours with it).
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNatsBus, type Delivery, type NatsBus, type Result } from '../src';
import { RESULT_BATCH } from '../src/result-batches';
import { capturedLogger, freshRegion, result, sleep, waitFor } from './fixtures';

const SERVERS = process.env.NATS_TEST_URL ?? '127.0.0.1:4222';
const namespace = `t${randomBytes(4).toString('hex')}`;
let raw: NatsConnection;
const buses: NatsBus[] = [];

async function open(): Promise<NatsBus> {
  const bus = await connectNatsBus({ servers: SERVERS, namespace, log: capturedLogger().log });
  buses.push(bus);
  return bus;
}

beforeAll(async () => {
  raw = await connect({ servers: SERVERS });
});
afterAll(async () => {
  for (const bus of buses) await bus.close();
  const jsm = await jetstreamManager(raw);
  for (const stream of [`${namespace.toUpperCase()}_JOBS`, `${namespace.toUpperCase()}_RESULTS`]) {
    await jsm.streams.delete(stream).catch(() => false);
  }
  await raw.close();
});

/** Messages stored on one subject of the results stream (not yet consumed). */
async function storedOn(bus: NatsBus, subject: string): Promise<number> {
  const jsm = await jetstreamManager(raw);
  const info = await jsm.streams.info(bus.names.resultsStream, { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

/** Consume the results of the given regions, handing each to `onResult` (which settles it). */
function consume(bus: NatsBus, regions: string[], onResult: (d: Delivery<Result>) => Promise<void>) {
  return bus.consumeResults(
    async (d) => {
      if (regions.includes(d.value.region)) await onResult(d);
      else await d.ack();
    },
    { concurrency: 256 },
  );
}

describe('results in batches over NATS', () => {
  it("an agent's results share messages, one region to a message, and each reaches ingest alone, once", async () => {
    const bus = await open();
    const [a, b] = [freshRegion(), freshRegion()];
    await bus.ensure([a, b]);
    const sent = [...Array.from({ length: 100 }, () => result(a)), ...Array.from({ length: 30 }, () => result(b))];
    await Promise.all(sent.map((r) => bus.publishResult(r)));
    // 100 results of a in batches of at most 64; b's 30 in messages of their own subject.
    expect(await storedOn(bus, bus.names.results(a))).toBeLessThanOrEqual(4);
    expect(await storedOn(bus, bus.names.results(a))).toBeGreaterThanOrEqual(Math.ceil(100 / RESULT_BATCH.maxResults));
    expect(await storedOn(bus, bus.names.results(b))).toBeLessThanOrEqual(2);
    expect(bus.stats().resultsPublished).toBe(130);

    const seen = new Map<string, number>();
    const sub = consume(bus, [a, b], async (d) => {
      seen.set(d.value.jobId, (seen.get(d.value.jobId) ?? 0) + 1);
      await d.ack();
    });
    await waitFor(() => seen.size === 130, 10_000, 'every result');
    await sleep(300);
    await sub.stop();
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(seen.keys())).toEqual(new Set(sent.map((r) => r.jobId)));
    expect(bus.stats().poison).toBe(0);
    // Acked: nothing of theirs is left in the work queue.
    expect(await storedOn(bus, bus.names.results(a))).toBe(0);
  });

  it('sends a result alone as one object, as agents before batching did (and reads such a message)', async () => {
    const bus = await open();
    const region = freshRegion();
    await bus.ensure([region]);
    const one = result(region);
    await bus.publishResult(one);
    const jsm = await jetstreamManager(raw);
    const stored = await jsm.streams.getMessage(bus.names.resultsStream, { last_by_subj: bus.names.results(region) });
    expect(JSON.parse(new TextDecoder().decode(stored!.data))).toMatchObject({ jobId: one.jobId });
    const seen: string[] = [];
    const sub = consume(bus, [region], async (d) => {
      seen.push(d.value.jobId);
      await d.ack();
    });
    await waitFor(() => seen.length === 1);
    await sub.stop();
    expect(seen).toEqual([one.jobId]);
  });

  it('terms a poison result alone: its neighbours reach ingest and the message is acked, not delivered again', async () => {
    const bus = await open();
    const [own, other] = [freshRegion(), freshRegion()];
    await bus.ensure([own, other]);
    const good = [result(own), result(own)];
    // Trust boundary: the subject says who sent it. A result claiming another region, a result
    // missing its run, and something that is not a result at all.
    const batch = [good[0], result(other), { ...result(own), run: null }, 42, good[1]];
    await jetstream(raw).publish(bus.names.results(own), JSON.stringify(batch));
    const seen: string[] = [];
    const sub = consume(bus, [own, other], async (d) => {
      seen.push(d.value.jobId);
      await d.ack();
    });
    await waitFor(() => seen.length === 2, 10_000, 'the two good results');
    await waitFor(async () => (await storedOn(bus, bus.names.results(own))) === 0, 5_000, 'the message acked');
    await sleep(300);
    await sub.stop();
    expect(seen.sort()).toEqual(good.map((r) => r.jobId).sort());
    expect(bus.stats().poison).toBe(3);
  });

  it('terms a batch that is empty, over the limit, or not results, without handing anything to ingest', async () => {
    const bus = await open();
    const region = freshRegion();
    await bus.ensure([region]);
    const tooMany = Array.from({ length: RESULT_BATCH.maxResults + 1 }, () => result(region));
    for (const body of [[], tooMany, 'a string', null]) {
      await jetstream(raw).publish(bus.names.results(region), JSON.stringify(body));
    }
    const seen: string[] = [];
    const sub = consume(bus, [region], async (d) => {
      seen.push(d.value.jobId);
      await d.ack();
    });
    await waitFor(() => bus.stats().poison === 4, 10_000, 'four poison messages');
    await waitFor(async () => (await storedOn(bus, bus.names.results(region))) === 0, 5_000, 'all termed');
    await sub.stop();
    expect(seen).toEqual([]);
  });

  it('a nak of one result brings its whole batch back; the others come again as repeats, and nothing is lost', async () => {
    const bus = await open();
    const region = freshRegion();
    await bus.ensure([region]);
    const sent = [result(region), result(region), result(region)];
    await jetstream(raw).publish(bus.names.results(region), JSON.stringify(sent));
    const deliveries: string[] = [];
    let refused = false;
    const sub = consume(bus, [region], async (d) => {
      deliveries.push(`${d.value.jobId} ${d.redeliveries}`);
      if (d.value.jobId === sent[1]!.jobId && !refused) {
        refused = true;
        await d.nak(50);
      } else await d.ack();
    });
    await waitFor(() => deliveries.length === 6, 10_000, 'the batch twice');
    await waitFor(async () => (await storedOn(bus, bus.names.results(region))) === 0, 5_000, 'then acked');
    await sub.stop();
    expect(deliveries.sort()).toEqual(sent.flatMap((r) => [`${r.jobId} 0`, `${r.jobId} 1`]).sort());
  });
});
