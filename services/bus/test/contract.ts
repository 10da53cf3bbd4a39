// The queue's contract, run against every implementation: the in-process queue must behave like
// NATS JetStream, so one-machine mode and tests mean what production means.
import { afterEach, describe, expect, it } from 'vitest';
import type { Bus, ConsumeOptions, Delivery, Job, QueueOptions } from '../src';
import { capturedLogger, freshRegion, heartbeat, job, result, sleep, waitFor } from './fixtures';

export interface Harness {
  /** A bus with these queue options, logging into `log`. */
  open(opts: QueueOptions): Promise<Bus>;
  /** Another agent's connection to the same queues (the same bus in memory). */
  peer(bus: Bus): Promise<Bus>;
  /** Publish bytes on a subject without the bus's validation, as a foreign publisher could. */
  raw(bus: Bus, subject: string, data: string): Promise<void>;
  subjects: { jobs(region: string): string; results(region: string): string; heartbeats(region: string): string };
}

export function busContract(name: string, harness: Harness) {
  describe(`${name} bus contract`, () => {
    const opened: Bus[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((bus) => bus.close()));
    });
    async function open(opts: QueueOptions = {}) {
      const captured = capturedLogger();
      const bus = await harness.open({ nakBackoffMs: [200], ...opts, log: captured.log });
      opened.push(bus);
      return { bus, ...captured };
    }
    async function peer(bus: Bus) {
      const other = await harness.peer(bus);
      if (other !== bus) opened.push(other);
      return other;
    }
    /** Everything a handler saw, in order. */
    function recorder() {
      const seen: Delivery<Job>[] = [];
      return { seen, ids: () => seen.map((d) => d.value.jobId) };
    }

    /** A consumer of a region's jobs that records and acks every one. */
    function ackEvery(bus: Bus, region: string, opts: ConsumeOptions) {
      const got = recorder();
      const sub = bus.consumeJobs(
        region,
        async (d) => {
          got.seen.push(d);
          await d.ack();
        },
        opts,
      );
      return { got, sub };
    }

    it('publishes a job and delivers it, validated, to its region', async () => {
      const { bus } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      const sent = job(region);
      expect(await bus.publishJob(sent)).toEqual({ duplicate: false });
      const { got, sub } = ackEvery(bus, region, { concurrency: 1 });
      await waitFor(() => got.seen.length === 1, 10_000, 'the job');
      expect(got.seen[0]?.value).toEqual(sent);
      expect(got.seen[0]?.redeliveries).toBe(0);
      await sub.stop();
      expect(bus.stats().jobsPublished).toBe(1);
      expect((await bus.pending()).jobs[region]).toBe(0);
    });

    it('drops a job id seen within the dedupe window and delivers it once', async () => {
      const { bus } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      const sent = job(region);
      expect(await bus.publishJob(sent)).toEqual({ duplicate: false });
      expect(await bus.publishJob({ ...sent, timeoutMs: 5_000 })).toEqual({ duplicate: true });
      const { got, sub } = ackEvery(bus, region, { concurrency: 2 });
      await waitFor(() => got.seen.length === 1);
      await sleep(500);
      await sub.stop();
      expect(got.ids()).toEqual([sent.jobId]);
      expect(got.seen[0]?.value.timeoutMs).toBe(10_000);
      expect(bus.stats()).toMatchObject({ jobsPublished: 1, jobsDeduplicated: 1 });
    });

    it('shares a region between agents: every job is handled once, by one of them', async () => {
      const { bus } = await open();
      const other = await peer(bus);
      const region = freshRegion();
      await bus.ensure([region]);
      const handledBy = new Map<string, string[]>();
      const handler = (agent: string) => async (d: Delivery<Job>) => {
        handledBy.set(d.value.jobId, [...(handledBy.get(d.value.jobId) ?? []), agent]);
        await sleep(30);
        await d.ack();
      };
      const a = bus.consumeJobs(region, handler('a'), { concurrency: 2 });
      const b = other.consumeJobs(region, handler('b'), { concurrency: 2 });
      const sent = Array.from({ length: 30 }, () => job(region));
      for (const j of sent) await bus.publishJob(j);
      await waitFor(() => handledBy.size === 30, 15_000, 'all 30 jobs');
      await sleep(300);
      await Promise.all([a.stop(), b.stop()]);
      const agents = [...handledBy.values()];
      expect(agents.every((list) => list.length === 1)).toBe(true);
      expect(agents.filter(([agent]) => agent === 'a').length).toBeGreaterThan(0);
      expect(agents.filter(([agent]) => agent === 'b').length).toBeGreaterThan(0);
    });

    it('redelivers a nak, counting the redelivery (a bare nak takes the backoff)', async () => {
      const { bus } = await open({ nakBackoffMs: [400] });
      const region = freshRegion();
      await bus.ensure([region]);
      const got = recorder();
      const at: number[] = [];
      const sub = bus.consumeJobs(
        region,
        async (d) => {
          got.seen.push(d);
          at.push(Date.now());
          if (d.redeliveries === 0) await d.nak();
          else await d.ack();
        },
        { concurrency: 1 },
      );
      const sent = job(region);
      await bus.publishJob(sent);
      await waitFor(() => got.seen.length === 2);
      await sleep(300);
      await sub.stop();
      expect(got.seen.map((d) => d.redeliveries)).toEqual([0, 1]);
      expect(got.ids()).toEqual([sent.jobId, sent.jobId]);
      expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(350);
    });

    it('redelivers a delivery left unsettled past the ack wait', async () => {
      const { bus } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      const at: number[] = [];
      const got = recorder();
      const sub = bus.consumeJobs(
        region,
        async (d) => {
          got.seen.push(d);
          at.push(Date.now());
          if (d.redeliveries > 0) await d.ack(); // the first delivery is forgotten, as by a killed agent
        },
        { concurrency: 1, ackWaitMs: 1_000 },
      );
      await bus.publishJob(job(region));
      await waitFor(() => got.seen.length === 2, 10_000, 'the redelivery');
      await sleep(1_300);
      await sub.stop();
      expect(got.seen.map((d) => d.redeliveries)).toEqual([0, 1]);
      expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(900);
    });

    it('keeps a delivery whose handler reports it is still working', async () => {
      const { bus } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      const got = recorder();
      const sub = bus.consumeJobs(
        region,
        async (d) => {
          got.seen.push(d);
          for (let i = 0; i < 5; i++) {
            await sleep(400);
            await d.working();
          }
          await d.ack();
        },
        { concurrency: 1, ackWaitMs: 1_000 },
      );
      await bus.publishJob(job(region));
      await waitFor(() => got.seen.length === 1);
      await sub.stop();
      await sleep(1_200);
      expect(got.seen).toHaveLength(1);
      expect((await bus.pending()).jobs[region]).toBe(0);
    });

    it('never redelivers a terminated job, and counts and logs it once', async () => {
      const { bus, lines } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      const got = recorder();
      const sub = bus.consumeJobs(
        region,
        async (d) => {
          got.seen.push(d);
          await d.term('the test no longer exists');
        },
        { concurrency: 1, ackWaitMs: 1_000 },
      );
      await bus.publishJob(job(region));
      await waitFor(() => got.seen.length === 1);
      await sleep(1_800);
      await sub.stop();
      expect(got.seen).toHaveLength(1);
      expect(bus.stats().poison).toBe(1);
      const terms = lines().filter((l) => l.msg === 'message terminated');
      expect(terms).toHaveLength(1);
      expect(terms[0]?.reason).toBe('the test no longer exists');
    });

    it('terminates poison before any handler sees it, and the next job still flows', async () => {
      const { bus, lines, text } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      const { got, sub } = ackEvery(bus, region, { concurrency: 1, ackWaitMs: 1_000 });
      await harness.raw(bus, harness.subjects.jobs(region), '{"jobId": "half');
      await harness.raw(bus, harness.subjects.jobs(region), JSON.stringify({ ...job(region), url: 'not a url' }));
      await harness.raw(bus, harness.subjects.jobs(region), JSON.stringify(job('elsewhere')));
      const good = job(region);
      await bus.publishJob(good);
      await waitFor(() => got.seen.length === 1);
      await sleep(1_500);
      await sub.stop();
      expect(got.ids()).toEqual([good.jobId]);
      expect(bus.stats().poison).toBe(3);
      const poison = lines().filter((l) => l.msg === 'poison message terminated');
      expect(poison.map((l) => l.error)).toEqual([
        'not JSON',
        'url: Invalid URL',
        'region: a job for elsewhere on the ' + region + ' queue',
      ]);
      expect(text()).not.toContain('s3cret-token');
      expect((await bus.pending()).jobs[region]).toBe(0);
    });

    it('runs no more handlers at once than its concurrency', async () => {
      const { bus } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      let inFlight = 0;
      let most = 0;
      let done = 0;
      const sub = bus.consumeJobs(
        region,
        async (d) => {
          inFlight++;
          most = Math.max(most, inFlight);
          await sleep(60);
          inFlight--;
          await d.ack();
          done++;
        },
        { concurrency: 3 },
      );
      for (let i = 0; i < 15; i++) await bus.publishJob(job(region));
      await waitFor(() => done === 15, 15_000, '15 jobs');
      await sub.stop();
      expect(most).toBe(3);
    });

    it('pulls no more jobs than it has free handlers', async () => {
      const { bus } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      const held: (() => void)[] = [];
      const sub = bus.consumeJobs(
        region,
        async (d) => {
          await new Promise<void>((resolve) => held.push(resolve));
          await d.ack();
        },
        { concurrency: 2 },
      );
      for (let i = 0; i < 10; i++) await bus.publishJob(job(region));
      await waitFor(() => held.length === 2);
      await sleep(500);
      expect(held).toHaveLength(2);
      expect((await bus.pending()).jobs[region]).toBe(8);
      const stopped = sub.stop();
      for (const release of held) release();
      await stopped;
    });

    it('stops taking jobs on stop() and resolves once the handlers in flight are done', async () => {
      const { bus } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      const started: string[] = [];
      const finished: string[] = [];
      const sub = bus.consumeJobs(
        region,
        async (d) => {
          started.push(d.value.jobId);
          await sleep(500);
          await d.ack();
          finished.push(d.value.jobId);
        },
        { concurrency: 2 },
      );
      for (let i = 0; i < 5; i++) await bus.publishJob(job(region));
      await waitFor(() => started.length === 2);
      await sub.stop();
      expect(finished).toHaveLength(2);
      await sleep(300);
      expect(started).toHaveLength(2);
      expect((await bus.pending()).jobs[region]).toBe(3);
    });

    it('naks a delivery whose handler throws, so it is retried', async () => {
      const { bus, lines } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      const got = recorder();
      const sub = bus.consumeJobs(
        region,
        async (d) => {
          got.seen.push(d);
          if (d.redeliveries === 0) throw new Error('probe crashed');
          await d.ack();
        },
        { concurrency: 1 },
      );
      await bus.publishJob(job(region));
      await waitFor(() => got.seen.length === 2);
      await sub.stop();
      expect(got.seen.map((d) => d.redeliveries)).toEqual([0, 1]);
      expect(lines().some((l) => l.msg === 'handler failed' && l.error === 'probe crashed')).toBe(true);
    });

    it('drops a message after max deliveries and counts it', async () => {
      const { bus, lines } = await open({ maxDeliver: 3 });
      const region = freshRegion();
      await bus.ensure([region]);
      const got = recorder();
      const sub = bus.consumeJobs(
        region,
        async (d) => {
          got.seen.push(d);
          await d.nak(0);
        },
        { concurrency: 1 },
      );
      await bus.publishJob(job(region));
      await waitFor(() => bus.stats().dropped === 1, 10_000, 'the drop');
      await sleep(500);
      await sub.stop();
      expect(got.seen.map((d) => d.redeliveries)).toEqual([0, 1, 2]);
      expect(lines().filter((l) => l.msg === 'message dropped after max deliveries')).toHaveLength(1);
    });

    it("caps a region's jobs, discarding the oldest, and leaves other regions alone", async () => {
      const { bus } = await open({ jobsMaxPerRegion: 3 });
      const [capped, other] = [freshRegion(), freshRegion()];
      await bus.ensure([capped, other]);
      const sent = Array.from({ length: 5 }, () => job(capped));
      for (const j of sent) await bus.publishJob(j);
      await bus.publishJob(job(other));
      await waitFor(async () => (await bus.pending()).jobs[capped] === 3, 10_000, 'the cap');
      expect((await bus.pending()).jobs[other]).toBe(1);
      const { got, sub } = ackEvery(bus, capped, { concurrency: 1 });
      await waitFor(() => got.seen.length === 3);
      await sleep(300);
      await sub.stop();
      expect(got.ids()).toEqual(sent.slice(2).map((j) => j.jobId));
    });

    it('removes jobs no agent took within the max age; fresh ones still flow', async () => {
      const { bus } = await open({ jobsMaxAgeMs: 1_000 });
      const region = freshRegion();
      await bus.ensure([region]);
      await bus.publishJob(job(region));
      await bus.publishJob(job(region));
      expect((await bus.pending()).jobs[region]).toBe(2);
      await waitFor(async () => (await bus.pending()).jobs[region] === 0, 15_000, 'the jobs to expire');
      const fresh = job(region);
      await bus.publishJob(fresh);
      const { got, sub } = ackEvery(bus, region, { concurrency: 1 });
      await waitFor(() => got.seen.length === 1);
      await sleep(300);
      await sub.stop();
      expect(got.ids()).toEqual([fresh.jobId]);
    });

    it('refuses to publish an invalid job', async () => {
      const { bus } = await open();
      const region = freshRegion();
      await expect(bus.publishJob({ ...job(region), url: 'nope' })).rejects.toThrow('invalid job: url');
      await expect(bus.publishJob(job('Not A Region'))).rejects.toThrow('invalid job: region');
    });

    it('carries every result to the ingest consumer, a second of the same job too: ingest keeps one per job id', async () => {
      const { bus } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      const sent = result(region);
      const seen: string[] = [];
      const sub = bus.consumeResults(
        async (d) => {
          seen.push(d.value.jobId);
          await d.ack();
        },
        { concurrency: 4 },
      );
      // A publish retried after its answer was lost, or a job run twice: the bus drops neither (a
      // message id another publisher could choose first is no dedupe key); ingest's unique job id does.
      await bus.publishResult(sent);
      await bus.publishResult({ ...sent, agent: 'agent-2' });
      await waitFor(() => seen.filter((id) => id === sent.jobId).length === 2, 10_000, 'both results');
      await sleep(300);
      await sub.stop();
      expect(seen.filter((id) => id === sent.jobId)).toHaveLength(2);
      expect(bus.stats()).toMatchObject({ resultsPublished: 2 });
    });

    it("a result published first under another region's job id does not stop that region's own result", async () => {
      const { bus } = await open();
      const [own, other] = [freshRegion(), freshRegion()];
      await bus.ensure([own, other]);
      const attacker = await peer(bus);
      // Job ids are predictable (hs.<test>.<region>.<slot>): an agent of `own` can name the other region's next one.
      const jobId = `hs.test-1.${other}.1700000000000`;
      const seen: string[] = [];
      const sub = bus.consumeResults(
        async (d) => {
          if (d.value.jobId === jobId) seen.push(`${d.value.region} ${d.value.agent}`);
          await d.ack();
        },
        { concurrency: 2 },
      );
      // On its own region's subject, which is all its NATS user may publish on, and first.
      await attacker.publishResult(result(own, { jobId, agent: 'attacker' }));
      await bus.publishResult(result(other, { jobId, agent: 'agent-1' }));
      await waitFor(() => seen.includes(`${other} agent-1`), 10_000, "the other region's own result");
      await sleep(300);
      await sub.stop();
      // Both reach ingest, which judges them (a job id that is not its result's own is rejected there).
      expect(seen.sort()).toEqual([`${other} agent-1`, `${own} attacker`].sort());
    });

    it('terminates a result over the bounds from a foreign publisher as poison; the next result still flows', async () => {
      const { bus, lines } = await open();
      const region = freshRegion();
      await bus.ensure([region]);
      const seen: string[] = [];
      const sub = bus.consumeResults(
        async (d) => {
          seen.push(d.value.jobId);
          await d.ack();
        },
        { concurrency: 1 },
      );
      // 250 KB of message: a probe cuts it to BOUNDS.message (2048), a foreign publisher need not.
      const oversized = result(region);
      oversized.run = { ...oversized.run!, message: 'x'.repeat(250_000) };
      await harness.raw(bus, harness.subjects.results(region), JSON.stringify(oversized));
      await expect(bus.publishResult(oversized)).rejects.toThrow('invalid result: run.message');
      const good = result(region);
      await bus.publishResult(good);
      await waitFor(() => seen.length === 1);
      await sleep(500);
      await sub.stop();
      expect(seen).toEqual([good.jobId]);
      expect(bus.stats().poison).toBe(1);
      const poison = lines().filter((l) => l.msg === 'poison message terminated');
      expect(poison.map((l) => l.error)).toEqual([expect.stringMatching(/^run\.message: Too big/)]);
    });

    it('never drops a result after max deliveries: it waits out a database outage of any length', async () => {
      const { bus } = await open({ maxDeliver: 2 });
      const region = freshRegion();
      await bus.ensure([region]);
      const sent = result(region);
      const deliveries: number[] = [];
      const sub = bus.consumeResults(
        async (d) => {
          deliveries.push(d.redeliveries);
          // The database is "down" for the first four deliveries.
          if (deliveries.length <= 4) await d.nak(0);
          else await d.ack();
        },
        { concurrency: 1 },
      );
      await bus.publishResult(sent);
      await waitFor(() => deliveries.length === 5, 15_000, 'the fifth delivery');
      await sleep(300);
      await sub.stop();
      expect(deliveries).toEqual([0, 1, 2, 3, 4]);
      expect(bus.stats().dropped).toBe(0);
    });

    it("drops a result or heartbeat whose region is not its subject's: an agent speaks only for its own region", async () => {
      const { bus, lines } = await open();
      const [own, other] = [freshRegion(), freshRegion()];
      await bus.ensure([own, other]);
      const results: string[] = [];
      const sub = bus.consumeResults(
        async (d) => {
          if (d.value.region === own || d.value.region === other) results.push(`${d.value.region} ${d.value.jobId}`);
          await d.ack();
        },
        { concurrency: 1 },
      );
      const beats: string[] = [];
      const hb = bus.onHeartbeat((h) => beats.push(h.region));
      await sleep(100); // a core NATS subscription reaches the server asynchronously
      // Sent on the own region's subjects (all its NATS user may publish on), claiming the other region.
      await harness.raw(bus, harness.subjects.results(own), JSON.stringify(result(other)));
      await harness.raw(bus, harness.subjects.heartbeats(own), JSON.stringify(heartbeat(other)));
      const good = result(own);
      await bus.publishResult(good);
      await bus.publishHeartbeat(heartbeat(own));
      await waitFor(() => results.length === 1 && beats.includes(own), 10_000, 'the honest result and heartbeat');
      await sleep(500);
      await sub.stop();
      await hb.stop();
      expect(results).toEqual([`${own} ${good.jobId}`]);
      expect(beats.filter((r) => r === own || r === other)).toEqual([own]);
      const refused = lines()
        .filter((l) => String(l.error).startsWith('region:'))
        .map((l) => l.error);
      expect(refused.sort()).toEqual([
        `region: a heartbeat for ${other} on the ${own} subject`,
        `region: a result for ${other} on the ${own} subject`,
      ]);
    });

    it('fans heartbeats out to every listener', async () => {
      const { bus } = await open();
      const region = freshRegion();
      const a: string[] = [];
      const b: string[] = [];
      const subA = bus.onHeartbeat((h) => a.push(h.region));
      const subB = bus.onHeartbeat((h) => b.push(h.region));
      await sleep(100); // a core NATS subscription reaches the server asynchronously
      await bus.publishHeartbeat(heartbeat(region));
      await waitFor(() => a.includes(region) && b.includes(region));
      await subA.stop();
      await subB.stop();
    });

    it('counts what waits per region and for ingest', async () => {
      const { bus } = await open();
      const [east, west] = [freshRegion(), freshRegion()];
      await bus.ensure([east, west]);
      const before = (await bus.pending()).results;
      for (let i = 0; i < 3; i++) await bus.publishJob(job(east));
      await bus.publishJob(job(west));
      await bus.publishResult(result(east));
      await bus.publishResult(result(west));
      await waitFor(async () => (await bus.pending()).jobs[east] === 3);
      const pending = await bus.pending();
      expect(pending.jobs[east]).toBe(3);
      expect(pending.jobs[west]).toBe(1);
      expect(pending.results).toBe(before + 2);
      const drained: string[] = [];
      const sub = bus.consumeResults(
        async (d) => {
          drained.push(d.value.jobId);
          await d.ack();
        },
        { concurrency: 4 },
      );
      await waitFor(async () => (await bus.pending()).results === 0);
      await sub.stop();
    });
  });
}
