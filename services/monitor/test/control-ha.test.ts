// Two controls on one Postgres database and one NATS, as real processes (docs/control-replicas.md):
// exactly one schedules (holds the lease), both ingest and serve. Two results of one job, one to
// each replica through the shared consumer, write one run. The scheduling one SIGKILLed: the other
// takes over within one interval, no job is published or probed twice, and no slot is skipped
// beyond the freshness policy. A server added through the replica that does not schedule is
// scheduled at once (the scheduling one is told). Figures on one line each (`[faults] <scenario> | …`).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNatsBus, type NatsBus } from '@mcp-fleet/bus';
import { handshakeJobId, offsetFor, slotStart } from '@mcp-fleet/control';
import { type CheapFleet, startCheapFleet } from '@mcp-fleet/fleet-sim';
import { listActiveServers, listActiveTests, openStore, type Store } from '@mcp-fleet/store';
import { createTestDatabase, parseMetrics, seriesValue, type TestDatabase, testKeyring } from '@mcp-fleet/testkit';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountSlots,
  countRunsOf,
  duplicates,
  type Entry,
  entriesRunSince,
  readRuns,
  report,
  scheduleEntries,
  type Verdict,
} from './faults/ledger';
import {
  type AgentProcess,
  type ControlProcess,
  killAll,
  poll,
  startAgentProcess,
  startControlProcess,
} from './faults/processes';
import { log, NATS_URL } from './support';

const REGIONS = ['eu-west', 'us-east'];
const SERVERS = 6;
const INTERVAL_MS = 2_000;
const ACK_WAIT_MS = 5_000;
/** Pinned to the modern revision: a probe of a cheap target is exactly one request (no lookup ever). */
const PIN = '2026-07-28';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fleetYaml(cheap: CheapFleet): string {
  const lines = [`regions: [${REGIONS.join(', ')}]`, 'defaults: { interval: 2s, timeout: 1500ms }', 'servers:'];
  for (const [i, url] of cheap.urls.entries())
    lines.push(`  - { name: ha-${i}, url: "${url}", tests: [{ revision: "${PIN}" }] }`);
  lines.push('policy: { allow: ["127.0.0.0/8"] }');
  return `${lines.join('\n')}\n`;
}

async function health(c: ControlProcess): Promise<{ ok: boolean; scheduling: boolean }> {
  return (await fetch(`${c.url}/healthz`)).json() as Promise<{ ok: boolean; scheduling: boolean }>;
}

async function metric(c: ControlProcess, name: string, labels?: Record<string, string>): Promise<number> {
  return seriesValue(parseMetrics(await (await fetch(`${c.url}/metrics`)).text()), name, labels);
}

afterAll(async () => {
  await killAll();
});

describe('two controls on one database', () => {
  const ns = `ha${randomBytes(5).toString('hex')}`;
  let dir = '';
  let fleetFile = '';
  let db: TestDatabase;
  let cheap: CheapFleet;
  let bus: NatsBus;
  let reads: Store;
  let entries: Entry[];
  let controls: ControlProcess[] = [];
  const agents: AgentProcess[] = [];
  /** Every job publish seen on the wire (a plain subscription sees duplicates the stream drops). */
  const published = new Map<string, number[]>();
  let wire: ReturnType<NatsBus['connection']['subscribe']> | undefined;
  const start = (port?: number) =>
    startControlProcess({ fleetFile, databaseUrl: db.url, natsUrl: NATS_URL, namespace: ns, port });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcpfleet-ha-'));
    fleetFile = join(dir, 'fleet.yaml');
    db = await createTestDatabase('mcpfleet_ha');
    cheap = await startCheapFleet({ count: SERVERS });
    writeFileSync(fleetFile, fleetYaml(cheap));
    bus = await connectNatsBus({ servers: NATS_URL, namespace: ns, log, ackWaitMs: ACK_WAIT_MS });
    await bus.ensure(REGIONS);
    wire = bus.connection.subscribe(bus.names.allJobs, {
      callback: (_err, msg) => {
        const { jobId } = msg.json<{ jobId: string }>();
        published.set(jobId, [...(published.get(jobId) ?? []), Date.now()]);
      },
    });
    // Both at once, the same fleet file: their applies take turns (store's apply lock).
    controls = await Promise.all([start(), start()]);
    reads = await openStore({ databaseUrl: db.url, poolSize: 2, keyring: testKeyring() });
    entries = await scheduleEntries(reads.db, REGIONS);
    agents.push(
      ...(await Promise.all(
        REGIONS.map((region) =>
          startAgentProcess({ region, natsUrl: NATS_URL, namespace: ns, ackWaitMs: ACK_WAIT_MS }),
        ),
      )),
    );
  }, 90_000);

  afterAll(async () => {
    wire?.unsubscribe();
    await Promise.all([...controls, ...agents].map((c) => c.kill('SIGTERM')));
    if (bus) {
      const jsm = await jetstreamManager(bus.connection);
      for (const stream of [bus.names.jobsStream, bus.names.resultsStream])
        await jsm.streams.delete(stream).catch(() => undefined);
      await bus.close();
    }
    await reads?.close();
    await cheap?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('applied the fleet once from both, and exactly one schedules', async () => {
    expect((await listActiveServers(reads.db)).length).toBe(SERVERS);
    expect(entries.length).toBe(SERVERS * REGIONS.length);
    const states = await Promise.all(controls.map(health));
    expect(states.filter((s) => s.scheduling).length).toBe(1);
    expect(states.every((s) => s.ok)).toBe(true);
    const leaders = await Promise.all(controls.map((c) => metric(c, 'mcp_scheduler_leader')));
    expect(leaders.sort()).toEqual([0, 1]);
    const warm = Date.now();
    await poll(
      'every entry to run',
      async () => (await entriesRunSince(reads.db, warm)) === entries.length,
      30_000,
      200,
    );
  }, 60_000);

  it('two results of one job, ingested through the shared consumer by both controls, write one run', async () => {
    const JOBS = 40;
    const tests = await listActiveTests(reads.db);
    // Slots of an hour ago, on each entry's grid: kept as history, moving no test's state.
    const hourAgo = Date.now() - 3_600_000;
    const results = Array.from({ length: JOBS }, (_, i) => {
      // Each (test, region) in turn, one slot further back each round: 40 distinct jobs.
      const pair = i % (tests.length * REGIONS.length);
      const t = tests[Math.floor(pair / REGIONS.length)]!;
      const region = REGIONS[pair % REGIONS.length]!;
      const offset = offsetFor(`handshake.${t.testId}.${region}`, INTERVAL_MS);
      const round = Math.floor(i / (tests.length * REGIONS.length));
      const slot = slotStart(hourAgo, INTERVAL_MS, offset) - round * INTERVAL_MS;
      const at = new Date(slot).toISOString();
      return {
        jobId: handshakeJobId(t.testId, region, slot),
        kind: 'handshake',
        region,
        agent: 'ha-test',
        serverId: t.serverId,
        testId: t.testId,
        slot,
        scheduledAt: at,
        startedAt: at,
        finishedAt: at,
        traceId: null,
        run: {
          mode: 'pinned',
          requested: PIN,
          negotiated: PIN,
          generation: 'stateless',
          era: 'modern',
          outcome: 'success',
          message: 'ok',
          previousRevision: null,
          requests: 1,
          millis: 1,
          serverInfo: { name: 'bench', version: '1' },
          assertion: null,
          lookup: { performed: false, found: null, requests: 0 },
          evidence: null,
        },
        detection: null,
      };
    });
    const ids = results.map((r) => r.jobId);
    expect(new Set(ids).size).toBe(JOBS);
    const before = await Promise.all(
      controls.map(async (c) => ({
        duplicate: await metric(c, 'mcp_ingest_total', { kind: 'handshake', result: 'duplicate' }),
        rejected: await metric(c, 'mcp_ingest_total', { kind: 'handshake', result: 'rejected' }),
      })),
    );
    const js = jetstream(bus.connection);
    // Each result twice, under two message ids (the stream keeps both, as after an agent's retry).
    await Promise.all(
      results.flatMap((r) =>
        [1, 2].map((copy) =>
          js.publish(bus.names.results(r.region), JSON.stringify(r), { msgID: `${r.jobId}#${copy}` }),
        ),
      ),
    );
    await poll('every copy ingested', async () => (await countRunsOf(reads.db, ids)) === JOBS, 30_000, 100);
    const after = async () =>
      Promise.all(
        controls.map(async (c, i) => ({
          duplicate:
            (await metric(c, 'mcp_ingest_total', { kind: 'handshake', result: 'duplicate' })) - before[i]!.duplicate,
          rejected:
            (await metric(c, 'mcp_ingest_total', { kind: 'handshake', result: 'rejected' })) - before[i]!.rejected,
        })),
      );
    await poll(
      'the second copies counted',
      async () => (await after()).reduce((n, c) => n + c.duplicate, 0) >= JOBS,
      30_000,
      200,
    );
    const counted = await after();
    const rows = (await readRuns(reads.db)).filter((r) => ids.includes(r.jobId));
    const byReplica = controls.map((c) => c.lines.filter((l) => l.json?.msg === 'result rejected').length);
    report('two controls ingest one job twice', {
      jobs: JOBS,
      copies: JOBS * 2,
      runs: rows.length,
      duplicates_counted: counted.map((c) => c.duplicate).join('+'),
      rejected: counted.reduce((n, c) => n + c.rejected, 0),
    });
    expect(rows.length).toBe(JOBS);
    expect(duplicates(rows)).toMatchObject({ byJob: 0, bySlot: 0 });
    // Every second copy was seen as one, by whichever control got it; nothing refused.
    expect(counted.reduce((n, c) => n + c.duplicate, 0)).toBe(JOBS);
    expect(counted.reduce((n, c) => n + c.rejected, 0)).toBe(0);
    expect(byReplica).toEqual([0, 0]);
  }, 60_000);

  it('the scheduling control SIGKILLed: the other takes over within one interval, no slot doubled or skipped beyond freshness', async () => {
    const states = await Promise.all(controls.map(health));
    const leader = controls[states.findIndex((s) => s.scheduling)]!;
    const follower = controls.find((c) => c !== leader)!;
    // Both ingest: each has written runs of the flow.
    const written = await Promise.all(
      controls.map((c) => metric(c, 'mcp_ingest_total', { kind: 'handshake', result: 'written' })),
    );
    // A few slots on the leader first.
    const from = Date.now();
    await sleep(2 * INTERVAL_MS);
    await poll(
      'slots before the kill',
      async () => (await entriesRunSince(reads.db, from)) === entries.length,
      30_000,
      200,
    );

    const killedAt = Date.now();
    await leader.kill('SIGKILL');
    const acquired = Number(
      (
        await follower.waitForLine(
          'the lease to change hands',
          (l) => l.at >= killedAt && l.json?.msg === 'scheduling lease acquired: this control schedules',
          15_000,
        )
      ).json?.time,
    );
    const resumed = Number(
      (
        await follower.waitForLine(
          'scheduling to resume',
          (l) => l.at >= killedAt && String(l.json?.msg ?? '').endsWith('from its current slot while still fresh'),
        )
      ).json?.time,
    );
    expect(await health(follower)).toMatchObject({ ok: true, scheduling: true });
    expect(await metric(follower, 'mcp_scheduler_leader')).toBe(1);
    const firstPublish = Math.min(...[...published.values()].flat().filter((at) => at > killedAt));
    // Slots after the takeover.
    await sleep(3 * INTERVAL_MS);
    await poll(
      'every entry after the takeover',
      async () => (await entriesRunSince(reads.db, resumed)) === entries.length,
      30_000,
      200,
    );
    const to = Date.now();

    // A slot must run unless its whole fresh window lay between the kill and the resumption
    // (then the policy skips it); within a tick of those edges, either.
    const margin = 500;
    const verdict = (s: number, e: Entry): Verdict => {
      if (s > killedAt + margin && s + e.freshMs < resumed - margin) return 'skip';
      if (s >= killedAt - margin && s + e.freshMs <= resumed + margin) return 'either';
      return 'must';
    };
    const account = async () => accountSlots(entries, await readRuns(reads.db), { from, to }, verdict);
    // The last slots may still be on their way through the agents and ingest; then nothing in flight.
    await poll(
      'the window to settle',
      async () => (await account()).missing.length === 0 || undefined,
      20_000,
      250,
    ).catch(() => undefined);
    const jsm = await jetstreamManager(bus.connection);
    await poll(
      'the jobs stream to drain',
      async () => {
        const consumers = await Promise.all(
          REGIONS.map((r) => jsm.consumers.info(bus.names.jobsStream, bus.names.jobsConsumer(r))),
        );
        return consumers.every((c) => c.num_pending === 0 && c.num_ack_pending === 0);
      },
      20_000,
      200,
    );
    await sleep(500);
    const slots = await account();
    const rows = await readRuns(reads.db);
    const flowRuns = rows.filter((r) => r.agent !== 'ha-test');
    const dup = duplicates(rows);
    // The stream stores each job id once: what it holds is the distinct ids that went out.
    const stream = await jsm.streams.info(bus.names.jobsStream);
    const stored = stream.state.last_seq;
    const republished = [...published.values()].filter((ats) => ats.length > 1).length;
    report('scheduling control SIGKILLed', {
      entries: entries.length,
      takeover_ms: acquired - killedAt,
      scheduling_again_ms: resumed - killedAt,
      first_publish_after_kill_ms: firstPublish - killedAt,
      interval_ms: INTERVAL_MS,
      job_ids_published: published.size,
      job_ids_published_again: `${republished} (dropped by the stream's dedupe)`,
      jobs_stored: stored,
      probes: cheap.requests(),
      runs: flowRuns.length,
      slots_in_window: slots.expected,
      slots_required: `${slots.by.must.slots} (ran ${slots.by.must.ran})`,
      slots_stale_at_takeover: `${slots.by.skip.slots} (ran ${slots.by.skip.ran})`,
      slots_on_an_edge: `${slots.by.either.slots} (ran ${slots.by.either.ran})`,
      missing_beyond_policy: slots.missing.length,
      ingested_before_kill: written.join('+'),
    });
    expect(acquired - killedAt).toBeLessThan(INTERVAL_MS);
    // Both had ingested runs of the flow before the kill: ingest is shared, not the leader's.
    expect(written.every((n) => n > 0)).toBe(true);
    // Nothing doubled: each job id stored once, each stored job probed once, each probe one run.
    expect(stored).toBe(published.size);
    expect(cheap.requests()).toBe(flowRuns.length);
    expect(flowRuns.length).toBe(published.size);
    expect(dup).toMatchObject({ byJob: 0, bySlot: 0 });
    // Nothing skipped beyond freshness, nothing burst to catch up, everything on its grid.
    expect(slots.missing).toEqual([]);
    expect(slots.ranWhenStale).toBe(0);
    expect(slots.offGrid).toBe(0);
  }, 120_000);

  it('a server added through the other control is scheduled at once: the scheduling one is told', async () => {
    const leaderIndex = (await Promise.all(controls.map((c) => (c.alive() ? health(c) : null)))).findIndex(
      (h) => h?.scheduling,
    );
    const leader = controls[leaderIndex]!;
    // The killed one back, as a replica that does not schedule.
    const replica = await start();
    controls = [leader, replica];
    expect(await health(replica)).toMatchObject({ ok: true, scheduling: false });
    // Its own apply of the fleet file at start told the scheduling one too: let that notice land first.
    await sleep(500);
    const told = leader.messages('the fleet changed through another control: reading the schedule again').length;
    const added = Date.now();
    const res = await fetch(`${replica.url}/api/servers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'ha-api',
        url: `${cheap.urls[0]}-api`,
        interval: '2s',
        timeout: '1500ms',
        tests: [{ revision: PIN }],
      }),
    });
    const answer = (await res.json()) as { server: { id: string } };
    expect(res.status, JSON.stringify(answer)).toBe(201);
    const { server } = answer;
    const testIds = new Set((await listActiveTests(reads.db, server.id)).map((t) => t.testId));
    expect(testIds.size).toBe(1);
    // Told, not found at the next periodic read (every 30 s): within a few seconds.
    await leader.waitForLine(
      'the scheduling control to be told',
      (l) => l.at >= added && l.json?.msg === 'the fleet changed through another control: reading the schedule again',
      10_000,
    );
    const firstRun = await poll(
      'a run of the new server',
      async () => {
        const slots = (await readRuns(reads.db)).filter((r) => testIds.has(r.testId)).map((r) => r.scheduledAt);
        return slots.length > 0 && Math.min(...slots);
      },
      15_000,
      200,
    );
    report('server added through the other control', {
      told_lines:
        leader.messages('the fleet changed through another control: reading the schedule again').length - told,
      first_run_slot_from_add_ms: `${firstRun - added} (a slot still fresh at the add runs)`,
    });
    expect(firstRun - added).toBeLessThan(10_000);
  }, 60_000);
});
