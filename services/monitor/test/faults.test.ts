// Faults, on real processes: an agent SIGKILLed mid-batch, NATS restarted under load, Postgres
// stopped for 30 s under load, control restarted (SIGTERM and SIGKILL), and a poison result in the
// middle of a flow. Each scenario checks that nothing is lost or doubled and prints its figures on
// one line (`[faults] <scenario> | key=value · …`). NATS and Postgres are private servers where a
// scenario stops them; the shared ones on 4222 and 5432 are only ever used, never stopped.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNatsBus, type Job, type NatsBus } from '@mcp-fleet/bus';
import { parseFleet, startControl } from '@mcp-fleet/control';
import { type CheapFleet, type Sim, startCheapFleet, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { listActiveTests, openStore, type Store } from '@mcp-fleet/store';
import {
  createTestDatabase,
  parseMetrics,
  seriesValue,
  startNatsServer,
  type TestDatabase,
  testKeyring,
  waitFor,
} from '@mcp-fleet/testkit';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatedTarget } from './faults/gated-target';
import {
  accountSlots,
  countRunsOf,
  countRunsSince,
  duplicates,
  type Entry,
  entriesRunSince,
  readRuns,
  recordingBus,
  report,
  scheduleEntries,
  type Verdict,
} from './faults/ledger';
import { startPrivatePostgres } from './faults/postgres-cluster';
import {
  type AgentProcess,
  type Child,
  type ControlProcess,
  killAll,
  poll,
  startAgentProcess,
  startControlProcess,
} from './faults/processes';
import { log, NATS_URL, startTestMonitor } from './support';

const REGIONS = ['eu-west', 'us-east'];
/** Real MCP servers from fleet-sim (every generation), plus cheap loopback targets for load. */
const SIM_TARGETS = ['modern', 'sessions-2025-03-26', 'sessions-2025-06-18', 'sessions-2025-11-25', 'legacy-sse'];
const CHEAP_TARGETS = 15;
const INTERVAL = '2s';
/** How long a delivery may stay unsettled before JetStream redelivers it, everywhere in these tests. */
const ACK_WAIT_MS = 5_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const namespace = () => `f${randomBytes(5).toString('hex')}`;
const seconds = (ms: number) => (ms / 1000).toFixed(1);

afterAll(async () => {
  await killAll();
});

/** The fleet file for sim + cheap targets, every test every 2 s in both regions. */
function fleetYaml(sim: Sim, cheap: CheapFleet): string {
  const lines = [
    `regions: [${REGIONS.join(', ')}]`,
    `defaults: { interval: ${INTERVAL}, timeout: 1500ms }`,
    'servers:',
  ];
  for (const name of SIM_TARGETS) lines.push(`  - { name: ${name}, url: "${sim.target(name).url}" }`);
  for (const [i, url] of cheap.urls.entries()) lines.push(`  - { name: load-${i}, url: "${url}" }`);
  lines.push('policy: { allow: ["127.0.0.0/8"] }');
  return `${lines.join('\n')}\n`;
}

async function startTargets() {
  const sim = await startSim({ only: SIM_TARGETS });
  const cheap = await startCheapFleet({ count: CHEAP_TARGETS });
  return {
    sim,
    cheap,
    fleetYaml: fleetYaml(sim, cheap),
    close: async () => {
      await sim.close();
      await cheap.close();
    },
  };
}

async function consumerState(bus: NatsBus, stream: string, consumer: string) {
  const jsm = await jetstreamManager(bus.connection);
  const info = await jsm.consumers.info(stream, consumer);
  return { pending: info.num_pending, ackPending: info.num_ack_pending, ackFloor: info.ack_floor.stream_seq };
}

/** Every job and result settled: nothing waiting, nothing unacked, so nothing can still come back. */
async function settled(bus: NatsBus, regions: readonly string[]): Promise<boolean> {
  const states = await Promise.all([
    ...regions.map((r) => consumerState(bus, bus.names.jobsStream, bus.names.jobsConsumer(r))),
    consumerState(bus, bus.names.resultsStream, bus.names.ingestConsumer),
  ]);
  return states.every((s) => s.pending === 0 && s.ackPending === 0);
}

async function deleteStreams(bus: NatsBus) {
  const jsm = await jetstreamManager(bus.connection);
  for (const stream of [bus.names.jobsStream, bus.names.resultsStream])
    await jsm.streams.delete(stream).catch(() => undefined);
}

async function controlMetrics(url: string) {
  return parseMetrics(await (await fetch(`${url}/metrics`)).text());
}

/** Messages a process deleted after max deliveries (each is logged once, by the process whose delete won). */
const droppedBy = (children: readonly Child[]) =>
  children.reduce((sum, c) => sum + c.messages('message dropped after max deliveries').length, 0);

/** Wait for a condition, but give up quietly at the deadline (the figures are printed, then asserted). */
async function settle(fn: () => Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

describe('an agent killed with SIGKILL mid-batch', () => {
  it('has its jobs redelivered to another agent, each completed exactly once in runs', async () => {
    const BATCH = 24;
    const FAST = 8;
    const region = 'batch-kill';
    // Control (scheduler idle at a 1 h interval, ingest live) over the shared Postgres and NATS.
    // The batch's region is the fleet's (ingest refuses results from any other), with nothing scheduled there.
    const m = await startTestMonitor('postgres+nats', [{ name: 'modern' }], {
      interval: '1h',
      agents: false,
      ackWaitMs: 3_000,
      spareRegions: [region],
    });
    const gate = await startGatedTarget();
    const agents: AgentProcess[] = [];
    try {
      const bus = m.bus as NatsBus;
      const [test] = await listActiveTests(m.store.db);
      await m.bus.ensure([region]);
      const agentOpts = { region, natsUrl: NATS_URL, namespace: m.namespace, ackWaitMs: 3_000 };
      const victim = await startAgentProcess(agentOpts);
      agents.push(victim);
      const base = Date.now();
      // The first FAST jobs finish at once; the rest hang behind the gate, in the victim's hands.
      const jobs: Job[] = Array.from({ length: BATCH }, (_, i) => ({
        jobId: `hs.${test!.testId}.${region}.${base + i}`,
        kind: 'handshake',
        depth: 'handshake',
        region,
        serverId: test!.serverId,
        serverName: i < FAST ? 'modern' : `gated-${i}`,
        testId: test!.testId,
        url: i < FAST ? m.sim.target('modern').url : gate.url(i),
        headers: {},
        revision: '2026-07-28',
        currentRevision: null,
        timeoutMs: 60_000,
        slot: base + i,
        scheduledAt: new Date(base + i).toISOString(),
        allow: ['127.0.0.0/8'],
        deny: [],
        script: null,
      }));
      for (const job of jobs) await m.bus.publishJob(job);
      const ids = jobs.map((j) => j.jobId);
      const jobsConsumer = () => consumerState(bus, bus.names.jobsStream, bus.names.jobsConsumer(region));

      await poll(
        'the fast jobs done and the rest in flight at the victim',
        async () => {
          const state = await jobsConsumer();
          return (
            state.pending === 0 &&
            state.ackPending === BATCH - FAST &&
            gate.held() === BATCH - FAST &&
            (await countRunsOf(m.store.db, ids)) === FAST
          );
        },
        20_000,
      );
      const inFlightGauge = seriesValue(
        parseMetrics(await (await fetch(victim.metricsUrl)).text()),
        'mcp_agent_in_flight',
      );
      const inFlightAtKill = (await jobsConsumer()).ackPending;
      // A second agent of the region is up and pulling before the kill: it is the one that takes over.
      const rescuer = await startAgentProcess(agentOpts);
      agents.push(rescuer);

      const killedAt = Date.now();
      await victim.kill('SIGKILL');
      gate.open();
      await poll(
        'every job of the batch to have its run',
        async () => (await countRunsOf(m.store.db, ids)) === BATCH,
        30_000,
      );
      const recoverMs = Date.now() - killedAt;
      // Nothing is left unacked anywhere, so no delivery can still come back and write a second run.
      await poll('jobs and results settled', () => settled(bus, [region]), 20_000);

      const rows = (await readRuns(m.store.db)).filter((r) => ids.includes(r.jobId));
      const dup = duplicates(rows);
      const byVictim = rows.filter((r) => r.agent === victim.id).length;
      const byRescuer = rows.filter((r) => r.agent === rescuer.id).length;
      const outcomes = new Set(
        (
          await m.api<{ runs: { jobId: string; outcome: string }[] }>(`/api/servers/${test!.serverId}/runs?limit=100`)
        ).body.runs
          .filter((r) => ids.includes(r.jobId))
          .map((r) => r.outcome),
      );
      report('agent SIGKILL mid-batch', {
        batch: BATCH,
        done_before_kill: FAST,
        in_flight_at_kill: inFlightAtKill,
        victim_in_flight_gauge: inFlightGauge,
        redelivered_and_run_by_survivor: byRescuer,
        runs: rows.length,
        runs_per_job_max: dup.maxPerJob,
        duplicates: dup.byJob,
        lost: BATCH - new Set(rows.map((r) => r.jobId)).size,
        ack_wait_ms: 3_000,
        recover_ms: recoverMs,
      });
      expect(inFlightAtKill).toBe(BATCH - FAST);
      expect(inFlightGauge).toBe(BATCH - FAST);
      expect(rows).toHaveLength(BATCH);
      expect(dup).toEqual({ byJob: 0, bySlot: 0, maxPerJob: 1 });
      expect(byVictim).toBe(FAST);
      expect(byRescuer).toBe(BATCH - FAST);
      expect(outcomes).toEqual(new Set(['success']));
    } finally {
      await Promise.all(agents.map((a) => a.kill('SIGKILL')));
      await gate.close();
      await m.close();
    }
  }, 120_000);
});

describe('NATS restarted under load', () => {
  it('agents and control reconnect; every accepted job runs exactly once; only outage slots are missing', async () => {
    const nats = await startNatsServer();
    const db = await createTestDatabase('mcpfleet_faults');
    const targets = await startTargets();
    const agents: AgentProcess[] = [];
    let store: Store | undefined;
    let bus: ReturnType<typeof recordingBus> | undefined;
    let control: Awaited<ReturnType<typeof startControl>> | undefined;
    try {
      store = await openStore({ databaseUrl: db.url, keyring: testKeyring() });
      await store.migrate();
      const ns = namespace();
      // Control's bus logs its connection changes here: when it is back, slots must flow again.
      const busLines: { msg?: string; time?: number }[] = [];
      const busLog = createLogger('faults-bus', 'info', {
        write: (line: string) => void busLines.push(JSON.parse(line)),
      });
      bus = recordingBus(
        await connectNatsBus({ servers: nats.url, namespace: ns, log: busLog, ackWaitMs: ACK_WAIT_MS }),
      );
      const fleet = parseFleet(targets.fleetYaml, 'faults fleet');
      control = await startControl({ store, bus, log, fleet, port: 0, tickMs: 50 });
      agents.push(
        ...(await Promise.all(
          REGIONS.map((region) =>
            startAgentProcess({ region, natsUrl: nats.url, namespace: ns, ackWaitMs: ACK_WAIT_MS }),
          ),
        )),
      );
      const entries = await scheduleEntries(store.db, REGIONS);
      const sdb = store.db;
      const warm = Date.now();
      await poll(
        'every entry to run once',
        async () => (await entriesRunSince(sdb, warm)) === entries.length,
        30_000,
        200,
      );
      const from = Date.now();

      const restarts: { signal: string; down: number; up: number; reconnected: number; firstAccepted: number }[] = [];
      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        const down = Date.now();
        await nats.stop(signal);
        await sleep(3_000); // the outage itself
        await nats.start();
        const up = Date.now();
        const accepted = bus.accepted;
        const reconnected = await waitFor(
          "control's bus to reconnect",
          () => busLines.find((l) => l.msg === 'NATS reconnected' && (l.time ?? 0) >= up)?.time,
          30_000,
        );
        const firstAccepted = await poll(
          'control to publish again',
          async () => {
            const after = [...accepted.values()].filter((a) => a.at >= up).map((a) => a.at);
            return after.length > 0 ? Math.min(...after) : undefined;
          },
          30_000,
          50,
        );
        await poll(
          'the first run of a slot after the restart',
          async () => (await countRunsSince(sdb, up)) > 0,
          30_000,
          50,
        );
        const firstRunMs = Date.now() - up;
        await poll(
          'every entry to run after the restart',
          async () => (await entriesRunSince(sdb, up)) === entries.length,
          30_000,
          100,
        );
        const allEntriesMs = Date.now() - up;
        // Steady again before the next fault: every entry runs once more.
        const steady = Date.now();
        await poll(
          'every entry to run again',
          async () => (await entriesRunSince(sdb, steady)) === entries.length,
          30_000,
          100,
        );
        restarts.push({ signal, down, up, reconnected, firstAccepted });
        report(`NATS restart (${signal})`, {
          outage_ms: up - down,
          control_reconnected_ms: reconnected - up,
          control_publishing_again_ms: firstAccepted - up,
          first_new_run_ms: firstRunMs,
          all_entries_running_ms: allEntriesMs,
        });
      }

      control.scheduler.stop();
      const to = Date.now();
      const ids = [...bus.accepted.keys()];
      const drained = await settle(async () => (await countRunsOf(sdb, ids)) === ids.length, 30_000);
      const quiet = drained && (await settle(() => settled(bus!, REGIONS), 30_000));
      const rows = await readRuns(sdb);
      const ran = new Set(rows.map((r) => r.jobId));
      const lost = ids.filter((id) => !ran.has(id));
      const dup = duplicates(rows);
      // A slot fresh at any time the bus was connected must run: only those whose whole fresh window
      // fell between the stop and control's reconnection (give or take a tick) may be missing.
      const margin = 500;
      const verdict = (s: number, e: Entry): Verdict =>
        restarts.some((r) => s >= r.down - margin && s + e.freshMs <= r.reconnected + margin) ? 'either' : 'must';
      const slots = accountSlots(entries, rows, { from, to }, verdict);
      const samples = await controlMetrics(control.url);
      report('NATS restart totals', {
        entries: entries.length,
        jobs_accepted: ids.length,
        publish_errors: bus.publishErrors(),
        runs: rows.length,
        duplicates: dup.byJob + dup.bySlot,
        lost_accepted_jobs: lost.length,
        slots_in_window: slots.expected,
        slots_while_connected: `${slots.by.must.slots} (ran ${slots.by.must.ran})`,
        slots_in_outages: `${slots.by.either.slots} (ran ${slots.by.either.ran})`,
        slots_missing_while_connected: slots.missing.length,
        ingest_duplicates: seriesValue(samples, 'mcp_ingest_total', { result: 'duplicate' }),
        dropped_after_max_deliveries: bus.stats().dropped + droppedBy(agents),
      });
      expect(drained).toBe(true);
      expect(quiet).toBe(true);
      expect(lost).toEqual([]);
      expect(dup).toMatchObject({ byJob: 0, bySlot: 0 });
      expect(slots.missing).toEqual([]);
      expect(slots.offGrid).toBe(0);
      expect(bus.stats().dropped + droppedBy(agents)).toBe(0);
      for (const a of agents) {
        expect(a.messages('NATS disconnected; reconnecting').length).toBeGreaterThanOrEqual(2);
        expect(a.messages('NATS reconnected').length).toBeGreaterThanOrEqual(2);
      }
    } finally {
      await Promise.all(agents.map((a) => a.kill('SIGTERM')));
      await control?.stop();
      await bus?.close();
      await store?.close();
      await targets.close();
      await nats.close();
      await db.drop();
    }
  }, 150_000);
});

describe('Postgres stopped for 30 s under load', () => {
  it('control survives; results wait in JetStream; ingest resumes and drains; no run lost or doubled', async () => {
    const OUTAGE_MS = 30_000;
    const pg = await startPrivatePostgres();
    const targets = await startTargets();
    const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-faults-'));
    const fleetFile = join(dir, 'fleet.yaml');
    writeFileSync(fleetFile, targets.fleetYaml);
    const ns = namespace();
    const agents: AgentProcess[] = [];
    let control: ControlProcess | undefined;
    let reads: Store | undefined;
    let held: Store | undefined;
    // The test's own connection: declares the durables with a short ack wait first, and reads the streams.
    const bus = await connectNatsBus({ servers: NATS_URL, namespace: ns, log, ackWaitMs: ACK_WAIT_MS });
    try {
      await bus.ensure(REGIONS);
      control = await startControlProcess({ fleetFile, databaseUrl: pg.url, natsUrl: NATS_URL, namespace: ns });
      // The test reads through its own small pool.
      reads = await openStore({ databaseUrl: pg.url, poolSize: 2, keyring: testKeyring() });
      const rdb = reads.db;
      agents.push(
        ...(await Promise.all(
          REGIONS.map((region) =>
            startAgentProcess({ region, natsUrl: NATS_URL, namespace: ns, ackWaitMs: ACK_WAIT_MS }),
          ),
        )),
      );
      const entries = await scheduleEntries(rdb, REGIONS);
      const warm = Date.now();
      await poll(
        'every entry to run once',
        async () => (await entriesRunSince(rdb, warm)) === entries.length,
        30_000,
        200,
      );
      const from = Date.now();
      const jsm = await jetstreamManager(bus.connection);
      const waitingResults = async () => (await jsm.streams.info(bus.names.resultsStream)).state.messages;

      // A transaction open when Postgres goes: it must fail, never take its process down (the store
      // guards every pool's checked-out clients; here a pool of the test's own process, deterministically).
      held = await openStore({ databaseUrl: pg.url, poolSize: 1, keyring: testKeyring() });
      let release = () => {};
      const holding = new Promise<void>((resolve) => {
        release = resolve;
      });
      let opened = () => {};
      const open = new Promise<void>((resolve) => {
        opened = resolve;
      });
      const heldTransaction = held.db
        .transaction(async (tx) => {
          await tx.execute(sql`select 1`);
          opened();
          await holding;
          await tx.execute(sql`select 1`);
        })
        .then(
          () => 'committed',
          (err: Error) => `failed (${err.message.slice(0, 60)})`,
        );
      await open;

      const runsBefore = await countRunsSince(rdb, 0);
      const down = Date.now();
      await pg.stop();
      release();
      const heldOutcome = await heldTransaction;
      // The outage: jobs keep being scheduled and probed; their results wait in the results stream.
      let peakWaiting = 0;
      while (Date.now() - down < OUTAGE_MS) {
        peakWaiting = Math.max(peakWaiting, await waitingResults());
        await sleep(1_000);
      }
      const waitingAtRestart = await waitingResults();
      peakWaiting = Math.max(peakWaiting, waitingAtRestart);
      const aliveThroughOutage = control.alive();
      await pg.start();
      const up = Date.now();
      await poll('ingest to write again', async () => (await countRunsSince(rdb, 0)) > runsBefore, 60_000, 100);
      const resumeMs = Date.now() - up;
      // Drained: every slot up to the restart has its run (the scheduler needs no database: none is skipped).
      const owed = async () => accountSlots(entries, await readRuns(rdb), { from, to: up }, () => 'must');
      const drainedInTime = await settle(async () => (await owed()).missing.length === 0, 60_000, 200);
      const drainMs = Date.now() - up;

      // Then a little more flow, and everything up to a cut-off must be there exactly once.
      const after = Date.now();
      await poll(
        'every entry to run after the drain',
        async () => (await entriesRunSince(rdb, after)) === entries.length,
        30_000,
        200,
      );
      const to = Date.now();
      const account = async () => accountSlots(entries, await readRuns(rdb), { from, to }, () => 'must');
      await settle(async () => (await account()).missing.length === 0, 20_000);
      const rows = await readRuns(rdb);
      const slots = accountSlots(entries, rows, { from, to }, () => 'must');
      const outageSlots = accountSlots(entries, rows, { from: down, to: up }, () => 'must');
      const dup = duplicates(rows);
      const samples = await controlMetrics(control.url);
      const dropped = droppedBy([control, ...agents]);
      report('Postgres stopped 30 s', {
        outage_s: seconds(up - down),
        control_alive: aliveThroughOutage && control.alive(),
        open_transaction: heldOutcome.split(' ')[0]!,
        slots_during_outage: outageSlots.expected,
        slots_during_outage_run: outageSlots.ran,
        results_waiting_peak: peakWaiting,
        results_waiting_at_restart: waitingAtRestart,
        ingest_resumed_ms: resumeMs,
        drain_ms: drainMs,
        ingest_retries: seriesValue(samples, 'mcp_ingest_total', { result: 'retried' }),
        slots_in_window: slots.expected,
        runs_in_window: slots.ran,
        slots_missing: slots.missing.length,
        duplicates: dup.byJob + dup.bySlot,
        dropped_after_max_deliveries: dropped,
      });
      expect(heldOutcome).toMatch(/^failed/);
      expect(aliveThroughOutage).toBe(true);
      expect(control.alive()).toBe(true);
      expect(peakWaiting).toBeGreaterThan(0);
      expect(drainedInTime).toBe(true);
      expect(dup).toMatchObject({ byJob: 0, bySlot: 0 });
      expect(slots.missing).toEqual([]);
      expect(outageSlots.missing).toEqual([]);
      expect(slots.offGrid).toBe(0);
      expect(dropped).toBe(0);
    } finally {
      await control?.kill('SIGTERM');
      await Promise.all(agents.map((a) => a.kill('SIGTERM')));
      await deleteStreams(bus);
      await bus.close();
      await reads?.close();
      await held?.close();
      await targets.close();
      await pg.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('control as a process', () => {
  const ns = namespace();
  let dir: string | undefined;
  let fleetFile = '';
  let db: TestDatabase;
  let targets: Awaited<ReturnType<typeof startTargets>>;
  let bus: NatsBus;
  let reads: Store;
  let entries: Entry[];
  const agents: AgentProcess[] = [];
  let control: ControlProcess | undefined;
  const startControlHere = () =>
    startControlProcess({ fleetFile, databaseUrl: db.url, natsUrl: NATS_URL, namespace: ns });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcpfleet-faults-'));
    fleetFile = join(dir, 'fleet.yaml');
    db = await createTestDatabase('mcpfleet_faults');
    targets = await startTargets();
    writeFileSync(fleetFile, targets.fleetYaml);
    // Declared first with a short ack wait: control's own default (60 s) never overrides a choice.
    bus = await connectNatsBus({ servers: NATS_URL, namespace: ns, log, ackWaitMs: ACK_WAIT_MS });
    await bus.ensure(REGIONS);
    control = await startControlHere();
    reads = await openStore({ databaseUrl: db.url, poolSize: 2, keyring: testKeyring() });
    entries = await scheduleEntries(reads.db, REGIONS);
    agents.push(
      ...(await Promise.all(
        REGIONS.map((region) =>
          startAgentProcess({ region, natsUrl: NATS_URL, namespace: ns, ackWaitMs: ACK_WAIT_MS }),
        ),
      )),
    );
  }, 60_000);

  afterAll(async () => {
    await control?.kill('SIGTERM');
    await Promise.all(agents.map((a) => a.kill('SIGTERM')));
    if (bus) {
      await deleteStreams(bus);
      await bus.close();
    }
    await reads?.close();
    await targets?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a restart (SIGTERM, then SIGKILL) doubles no slot and skips only what the policy skips', async () => {
    const warm = Date.now();
    await poll(
      'every entry to run',
      async () => (await entriesRunSince(reads.db, warm)) === entries.length,
      30_000,
      200,
    );
    const from = Date.now();
    const restarts: { signal: string; stop: number; applied: number; serving: number }[] = [];
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      // Let a few slots run on the control about to go.
      const before = Date.now();
      await poll(
        'slots before the stop',
        async () => (await entriesRunSince(reads.db, before)) === entries.length,
        30_000,
        200,
      );
      const stop = Date.now();
      await control!.kill(signal);
      const gone = Date.now();
      control = await startControlHere();
      // pino's own timestamp of "fleet applied": the schedule was loaded just before it.
      const applied = Number(
        (await control.waitForLine('fleet applied', (l) => String(l.json?.msg ?? '').startsWith('fleet applied'))).json
          ?.time,
      );
      const serving = control.lines.find((l) => l.text.startsWith('control at '))!.at;
      await poll(
        'a run of a slot after the restart',
        async () => (await countRunsSince(reads.db, serving)) > 0,
        30_000,
        50,
      );
      const firstRunMs = Date.now() - serving;
      await poll(
        'every entry after the restart',
        async () => (await entriesRunSince(reads.db, serving)) === entries.length,
        30_000,
        100,
      );
      restarts.push({ signal, stop, applied, serving });
      report(`control restart (${signal})`, {
        exit_ms: gone - stop,
        downtime_ms: serving - stop,
        first_new_run_ms: firstRunMs,
        all_entries_running_ms: Date.now() - serving,
      });
    }
    const to = Date.now();
    // Under the policy a slot must run when control was up for part of its fresh window, must NOT run
    // (no burst to catch up) when its fresh window ended before the new control loaded its schedule,
    // and may go either way within a tick of those edges.
    const margin = 500;
    const verdict = (s: number, e: Entry): Verdict => {
      for (const r of restarts) {
        if (s > r.stop + margin && s + e.freshMs < r.applied - margin) return 'skip';
        if (s >= r.stop - margin && s + e.freshMs <= r.serving + margin) return 'either';
      }
      return 'must';
    };
    const account = async () => accountSlots(entries, await readRuns(reads.db), { from, to }, verdict);
    // Slots near the end may still be on their way through the agents and ingest.
    await settle(async () => (await account()).missing.length === 0, 20_000);
    const rows = await readRuns(reads.db);
    const slots = accountSlots(entries, rows, { from, to }, verdict);
    const dup = duplicates(rows);
    const samples = await controlMetrics(control!.url);
    report('control restart totals', {
      entries: entries.length,
      slots_in_window: slots.expected,
      runs_in_window: slots.ran,
      duplicates: dup.byJob + dup.bySlot,
      slots_required: `${slots.by.must.slots} (ran ${slots.by.must.ran})`,
      slots_stale_at_restart: `${slots.by.skip.slots} (ran ${slots.by.skip.ran})`,
      slots_on_an_edge: `${slots.by.either.slots} (ran ${slots.by.either.ran})`,
      missing_beyond_policy: slots.missing.length,
      ingest_duplicates_since_restart: seriesValue(samples, 'mcp_ingest_total', { result: 'duplicate' }),
    });
    expect(dup).toMatchObject({ byJob: 0, bySlot: 0 });
    expect(slots.missing).toEqual([]);
    expect(slots.ranWhenStale).toBe(0);
    expect(slots.offGrid).toBe(0);
  }, 120_000);

  it('a result that fails validation is terminated, counted and logged once; the rest flow on', async () => {
    if (!control?.alive()) control = await startControlHere();
    const poisonTotal = async () => seriesValue(await controlMetrics(control!.url), 'mcp_bus_poison_total');
    const poisonLines = () => control!.messages('poison message terminated');
    const flowing = Date.now();
    await poll(
      'the flow to run',
      async () => (await entriesRunSince(reads.db, flowing)) === entries.length,
      30_000,
      200,
    );
    const baseTotal = await poisonTotal();
    const baseLines = poisonLines().length;

    // Valid JSON, the shape of a result, one field wrong: poison for the schema, not for JSON.parse.
    const subject = bus.names.results('eu-west');
    const body = JSON.stringify({
      jobId: `hs.poison.eu-west.${Date.now()}`,
      kind: 'handshake',
      region: 'eu-west',
      agent: 'poison-publisher',
      serverId: 'x',
      testId: 'x',
      slot: Date.now(),
      scheduledAt: new Date().toISOString(),
      startedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
      traceId: null,
      run: { outcome: 'exploded-SECRET-BODY' },
      detection: null,
    });
    const ack = await jetstream(bus.connection).publish(subject, body, { msgID: `poison-${Date.now()}` });
    const poisonedAt = Date.now();
    // Settled (terminated counts as acked): its sequence is below the ingest consumer's ack floor.
    await poll(
      'ingest to settle the poison',
      async () => (await consumerState(bus, bus.names.resultsStream, bus.names.ingestConsumer)).ackFloor >= ack.seq,
      20_000,
      100,
    );
    await waitFor('the counter to count it', async () => (await poisonTotal()) === baseTotal + 1);
    const line = await control!.waitForLine('the poison log line', (l) => l.json?.msg === 'poison message terminated');
    // The rest flow on: every entry runs two more slots after the poison.
    const after = poisonedAt + 2_000;
    await poll(
      'the flow after the poison',
      async () => (await entriesRunSince(reads.db, after)) === entries.length,
      30_000,
      200,
    );
    const rows = await readRuns(reads.db);
    const slots = accountSlots(entries, rows, { from: flowing, to: Date.now() - 3_000 }, () => 'must');
    const total = await poisonTotal();
    const lines = poisonLines().length - baseLines;
    report('poison result', {
      published: 1,
      poison_total_before: baseTotal,
      poison_total_after: total,
      log_lines: lines,
      terminated_lines: control!.messages('message terminated').length,
      runs_after_poison: rows.filter((r) => r.scheduledAt >= poisonedAt).length,
      slots_in_window: slots.expected,
      slots_missing: slots.missing.length,
      duplicates: duplicates(rows).byJob,
    });
    expect(total).toBe(baseTotal + 1);
    expect(lines).toBe(1);
    expect(line.json).toMatchObject({ level: 40, consumer: 'ingest', subject, seq: ack.seq });
    expect(String(line.json?.error)).toMatch(/^run\./);
    // One line, naming the field, never the body.
    expect(line.text).not.toContain('SECRET-BODY');
    expect(line.text).not.toContain('poison-publisher');
    expect(slots.missing).toEqual([]);
    expect(duplicates(rows)).toMatchObject({ byJob: 0, bySlot: 0 });
  }, 90_000);
});
