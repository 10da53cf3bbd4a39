// Ingest against results nobody should trust: forged messages published straight onto the real bus
// (NATS JetStream and the in-process queue), around the bus's own publishing. A result whose test
// is not its server's, from a region that is not the fleet's, or a detection of a server that does
// not exist, or whose job id is not the job id of what it claims, is rejected — terminated, counted,
// never written — and a forged result sent first never keeps a region's real one out. And a late
// result (an older slot) never moves the current revision the scheduler puts in the next job.
import { randomUUID } from 'node:crypto';
import type { Job, MemoryBus, NatsBus, Result } from '@mcp-fleet/bus';
import { detectionJobId, handshakeJobId, STALE_GRACE_MS } from '@mcp-fleet/control';
import { detections, runs } from '@mcp-fleet/store';
import { parseMetrics, seriesValue, waitFor } from '@mcp-fleet/testkit';
import { jetstream } from '@nats-io/jetstream';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Flavour, startTestMonitor, type TestMonitor } from './support';

interface ApiServer {
  id: string;
  name: string;
  tests: { id: string; mode: string }[];
}

describe.each<[Flavour]>([['postgres+nats'], ['pglite+memory']])(
  'ingest of forged and late results on %s',
  (flavour) => {
    let m: TestMonitor;
    let modern: ApiServer;
    let other: ApiServer;
    const jobs: Job[] = [];

    beforeAll(async () => {
      // No agents: every result comes from the test, and every job the scheduler publishes is caught here.
      m = await startTestMonitor(flavour, [{ name: 'modern' }, { name: 'sessions-2025-03-26' }], {
        agents: false,
        interval: '2s',
      });
      const { servers } = (await m.api<{ servers: ApiServer[] }>('/api/servers')).body;
      modern = servers.find((s) => s.name === 'modern')!;
      other = servers.find((s) => s.name === 'sessions-2025-03-26')!;
      m.bus.consumeJobs(
        'eu-west',
        async (d) => {
          jobs.push(d.value);
          await d.ack();
        },
        { concurrency: 4 },
      );
    });
    afterAll(async () => {
      await m?.close();
    });

    const ingestCount = async (kind: string, result: string) =>
      seriesValue(parseMetrics(await (await fetch(`${m.control.url}/metrics`)).text()), 'mcp_ingest_total', {
        kind,
        result,
      });

    /** Bytes onto the results subject, as a foreign publisher could put them. */
    const publishRaw = async (result: Result) => {
      const raw = JSON.stringify(result);
      if (m.bus.kind === 'nats')
        await jetstream((m.bus as NatsBus).connection).publish(`${m.namespace}.results.${result.region}`, raw);
      else (m.bus as MemoryBus).publishRaw(`mcpfleet.results.${result.region}`, raw);
    };

    const handshakeResult = (fields: Partial<Result> & { negotiated?: string; at?: number }): Result => {
      const at = fields.at ?? Date.now();
      const { negotiated = '2026-07-28', ...rest } = fields;
      delete (rest as { at?: number }).at;
      const region = fields.region ?? 'eu-west';
      const testId = fields.testId ?? modern.tests[0]!.id;
      return {
        // The job id of what it claims, unless a test says otherwise.
        jobId: handshakeJobId(testId, region, fields.slot ?? at),
        kind: 'handshake',
        region: 'eu-west',
        agent: 'forger',
        serverId: modern.id,
        testId: modern.tests[0]!.id,
        slot: at,
        scheduledAt: new Date(at).toISOString(),
        startedAt: new Date(at + 100).toISOString(),
        finishedAt: new Date(at + 200).toISOString(),
        traceId: null,
        conformance: null,
        surfaces: [],
        script: null,
        run: {
          mode: 'newest',
          requested: negotiated as never,
          negotiated,
          generation: negotiated === '2026-07-28' ? 'stateless' : 'sessions',
          era: negotiated === '2026-07-28' ? 'modern' : 'legacy',
          outcome: 'success',
          message: 'forged',
          previousRevision: null,
          requests: 1,
          millis: 1,
          serverInfo: { name: 'forged', version: '1' },
          assertion: null,
          lookup: { performed: false, found: null, requests: 0 },
          evidence: null,
        },
        detection: null,
        ...rest,
      };
    };

    const detectionResult = (fields: Partial<Result>): Result => {
      const base = { ...handshakeResult({}), ...fields };
      return {
        ...base,
        scheduledAt: new Date(base.slot).toISOString(),
        jobId: detectionJobId(base.serverId, base.region, base.slot),
        kind: 'detection',
        testId: null,
        run: null,
        detection: {
          outcome: 'DETECTED',
          cause: null,
          retryAfterHeader: null,
          newestSupported: '2026-07-28',
          serverInfo: { name: 'forged', version: '1' },
          requests: 5,
          millis: 5,
          revisions: [],
        },
        ...fields,
      };
    };

    const runsOf = (jobId: string) => m.store.db.select().from(runs).where(eq(runs.jobId, jobId));
    const detectionsOf = (jobId: string) => m.store.db.select().from(detections).where(eq(detections.jobId, jobId));

    it("rejects a result whose test is not its server's, a foreign region's, and a detection of no server: nothing written, not retried", async () => {
      const before = {
        handshake: await ingestCount('handshake', 'rejected'),
        detection: await ingestCount('detection', 'rejected'),
        poison: m.bus.stats().poison,
      };
      const forged = [
        // modern's test, filed under the other server.
        handshakeResult({ serverId: other.id }),
        // A region the fleet does not have (agents there, if any, are not ours).
        handshakeResult({ region: 'ap-south' }),
        detectionResult({ region: 'ap-south' }),
        // A detection of a server that does not exist.
        detectionResult({ serverId: randomUUID() }),
      ];
      for (const r of forged) await publishRaw(r);
      await waitFor(
        'the four to be rejected',
        async () =>
          (await ingestCount('handshake', 'rejected')) === before.handshake + 2 &&
          (await ingestCount('detection', 'rejected')) === before.detection + 2,
        30_000,
      );
      // Terminated (as poison), not left to come back: nothing waits, and the counts stay put.
      await waitFor('the results queue to be empty', async () => (await m.bus.pending()).results === 0, 10_000);
      await new Promise((r) => setTimeout(r, 2_000));
      expect(await ingestCount('handshake', 'rejected')).toBe(before.handshake + 2);
      expect(await ingestCount('detection', 'rejected')).toBe(before.detection + 2);
      expect(m.bus.stats().poison).toBe(before.poison + 4);
      for (const r of forged) {
        expect(await runsOf(r.jobId), r.jobId).toEqual([]);
        expect(await detectionsOf(r.jobId), r.jobId).toEqual([]);
      }
      const test = (await m.api<{ test: { states: unknown[] } }>(`/api/tests/${modern.tests[0]!.id}`)).body.test;
      expect(test.states).toEqual([]);

      // The same results, true to the fleet, are written: the checks refuse what is false, nothing else.
      const honest = [handshakeResult({}), detectionResult({})];
      for (const r of honest) await publishRaw(r);
      await waitFor('the honest ones to be written', async () => (await runsOf(honest[0]!.jobId)).length === 1);
      await waitFor('the detection to be written', async () => (await detectionsOf(honest[1]!.jobId)).length === 1);
    });

    it('a late result from an older slot never changes the current revision of the next job the scheduler publishes', async () => {
      const testId = modern.tests[0]!.id;
      const now = Date.now();
      // The newer run: the test speaks 2026-07-28 in eu-west.
      const newer = handshakeResult({ at: now, negotiated: '2026-07-28' });
      await m.bus.publishResult(newer);
      await waitFor('the newer run', async () => (await runsOf(newer.jobId)).length === 1);
      // Then a run of an older slot arrives late, saying 2025-03-26.
      const late = handshakeResult({ at: now - 60_000, negotiated: '2025-03-26' });
      await m.bus.publishResult(late);
      await waitFor('the late run', async () => (await runsOf(late.jobId)).length === 1);
      const ingested = Date.now();

      // Every newest-supported job of the test published from now on still carries 2026-07-28.
      const next = await waitFor(
        'the next jobs of the test',
        () => {
          const after = jobs.filter((j) => j.testId === testId && j.slot > ingested);
          return after.length >= 2 ? after : undefined;
        },
        20_000,
      );
      for (const job of next) {
        expect(job.currentRevision, job.jobId).toBe('2026-07-28');
        // And says when it goes stale: its next slot's start (the interval is 2 s), and the grace.
        expect(job.staleAt).toBe(job.slot + 2_000 + STALE_GRACE_MS);
      }
      const state = (
        await m.api<{ test: { states: { region: string; currentRevision: string }[] } }>(`/api/tests/${testId}`)
      ).body.test.states.find((s) => s.region === 'eu-west');
      expect(state?.currentRevision).toBe('2026-07-28');
    });

    // Job ids are predictable (slots.ts) and a test runs in every region: an agent of eu-west, which
    // may publish only on eu-west's results subject, names us-east's job of the same test and slot.
    it('rejects a result under a job id that is not its own, and a forged one sent first never keeps the real result out', async () => {
      const before = {
        handshake: await ingestCount('handshake', 'rejected'),
        detection: await ingestCount('detection', 'rejected'),
        poison: m.bus.stats().poison,
      };
      const testId = modern.tests[0]!.id;
      const slot = Date.now() - 1_000;
      const usEastRun = handshakeJobId(testId, 'us-east', slot);
      const usEastDetection = detectionJobId(modern.id, 'us-east', slot);
      // eu-west results (so their subject lets them through), each under a job that is not theirs.
      const forged = [
        handshakeResult({ at: slot, jobId: usEastRun }),
        handshakeResult({ at: slot, jobId: handshakeJobId(other.tests[0]!.id, 'eu-west', slot) }),
        handshakeResult({ at: slot, jobId: handshakeJobId(testId, 'eu-west', slot + 1) }),
        detectionResult({ slot, jobId: usEastDetection }),
        detectionResult({ slot, jobId: handshakeJobId(testId, 'eu-west', slot) }),
      ];
      // Published first, through the bus as an agent publishes (on NATS: the job id it names was the message id).
      for (const r of forged) await m.bus.publishResult(r);
      const real = [
        handshakeResult({ at: slot, region: 'us-east', agent: 'us-east-agent' }),
        detectionResult({ slot, region: 'us-east', agent: 'us-east-agent' }),
      ];
      expect(real.map((r) => r.jobId)).toEqual([usEastRun, usEastDetection]);
      for (const r of real) await m.bus.publishResult(r);

      await waitFor("us-east's own run", async () => (await runsOf(usEastRun))[0]?.agent === 'us-east-agent', 30_000);
      await waitFor(
        "us-east's own detection",
        async () => (await detectionsOf(usEastDetection))[0]?.region === 'us-east',
      );
      await waitFor(
        'the five forged results to be rejected',
        async () =>
          (await ingestCount('handshake', 'rejected')) === before.handshake + 3 &&
          (await ingestCount('detection', 'rejected')) === before.detection + 2,
        30_000,
      );
      expect(m.bus.stats().poison).toBe(before.poison + 5);
      expect((await runsOf(usEastRun))[0]).toMatchObject({ region: 'us-east', agent: 'us-east-agent' });
      expect((await detectionsOf(usEastDetection))[0]).toMatchObject({ region: 'us-east' });
      // The rest named no real job: nothing at all under their ids.
      for (const r of forged.filter((f) => f.jobId !== usEastRun && f.jobId !== usEastDetection)) {
        expect(await runsOf(r.jobId), r.jobId).toEqual([]);
        expect(await detectionsOf(r.jobId), r.jobId).toEqual([]);
      }
    });

    it('rejects a result for a slot that has not begun, or whose scheduledAt is not its slot: a future run would make every honest one stale', async () => {
      const before = await ingestCount('handshake', 'rejected');
      const testId = other.tests[0]!.id;
      const other_ = (fields: Partial<Result> & { at?: number }) =>
        handshakeResult({ serverId: other.id, testId, negotiated: '2025-03-26', ...fields });
      const now = Date.now();
      const future = now + 3_600_000;
      const forged = [
        // Tomorrow's slot (its own job id): it would take that job's place and outrank every run until then.
        other_({ at: future, jobId: handshakeJobId(testId, 'eu-west', future) }),
        // Today's slot, but a scheduledAt far ahead: the store orders runs by it.
        other_({
          at: now - 1_000,
          jobId: handshakeJobId(testId, 'eu-west', now - 1_000),
          scheduledAt: new Date(future).toISOString(),
        }),
      ];
      for (const r of forged) await publishRaw(r);
      await waitFor(
        'the two to be rejected',
        async () => (await ingestCount('handshake', 'rejected')) === before + 2,
        30_000,
      );
      for (const r of forged) expect(await runsOf(r.jobId), r.jobId).toEqual([]);
      // An honest run of the same test after them is written and moves its state.
      const honest = other_({ at: now - 500, jobId: handshakeJobId(testId, 'eu-west', now - 500) });
      await publishRaw(honest);
      await waitFor('the honest run', async () => (await runsOf(honest.jobId)).length === 1);
      const test = (
        await m.api<{ test: { states: { region: string; currentRevision: string }[] } }>(`/api/tests/${testId}`)
      ).body.test;
      expect(test.states.find((st) => st.region === 'eu-west')?.currentRevision).toBe('2025-03-26');
    });

    it.runIf(flavour === 'postgres+nats')(
      "a Nats-Msg-Id naming another region's job, set on an honest-looking result sent first, shadows nothing",
      async () => {
        const testId = modern.tests[0]!.id;
        const slot = Date.now() - 2_000;
        const usEastRun = handshakeJobId(testId, 'us-east', slot);
        // A true-looking eu-west run of its own job; only the header, which no NATS permission governs, aims at us-east.
        const decoy = handshakeResult({ at: slot, agent: 'eu-west-agent' });
        const ack = await jetstream((m.bus as NatsBus).connection).publish(
          `${m.namespace}.results.eu-west`,
          JSON.stringify(decoy),
          { msgID: usEastRun },
        );
        expect(ack.duplicate).toBe(false);
        const real = handshakeResult({ at: slot, region: 'us-east', agent: 'us-east-agent' });
        await m.bus.publishResult(real);
        await waitFor("us-east's own run", async () => (await runsOf(usEastRun)).length === 1, 30_000);
        expect((await runsOf(usEastRun))[0]).toMatchObject({ region: 'us-east', agent: 'us-east-agent' });
        await waitFor('the eu-west run', async () => (await runsOf(decoy.jobId)).length === 1);
      },
    );
  },
);
