// The monitor end to end, on real parts: scheduler → bus → agent → bus → ingest → database → API,
// once on Postgres + NATS JetStream and once on embedded PGlite + the in-process queue.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startAgent } from '@mcp-fleet/agent';
import type { Job, MemoryBus, NatsBus, Result } from '@mcp-fleet/bus';
import { parseFleet } from '@mcp-fleet/control';
import { runs } from '@mcp-fleet/store';
import { LOOPBACK_FLOOR, parseMetrics, seriesValue, waitFor } from '@mcp-fleet/testkit';
import { jetstream } from '@nats-io/jetstream';
import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Flavour, fleetYaml, log, NATS_URL, REGIONS, startTestMonitor, type TestMonitor } from './support';

interface ApiServer {
  id: string;
  name: string;
  tests: {
    id: string;
    mode: string;
    pinnedRevision: string | null;
    states: { region: string; currentRevision: string | null; lastOutcome: string | null; failing: boolean }[];
  }[];
  byRegion: { region: string; currentRevision: string | null; lastOutcome: string | null }[];
}

const CLI = fileURLToPath(new URL('../../cli/bin/mcp-fleet.js', import.meta.url));

describe.each<[Flavour]>([['postgres+nats'], ['pglite+memory']])('the pipeline on %s', (flavour) => {
  let m: TestMonitor;
  const servers = async () => (await m.api<{ servers: ApiServer[] }>('/api/servers')).body.servers;
  const server = async (name: string) => (await servers()).find((s) => s.name === name)!;
  const currentIn = async (name: string) =>
    Object.fromEntries((await server(name)).byRegion.map((r) => [r.region, r.currentRevision]));

  const SERVERS = [
    { name: 'modern' },
    { name: 'sessions-2025-03-26' },
    { name: 'drifter' },
    { name: 'drifter-pinned', tests: ['newest', '2025-03-26'] },
  ];
  beforeAll(async () => {
    m = await startTestMonitor(flavour, SERVERS);
  });
  afterAll(async () => {
    await m?.close();
  });

  it('a job travels scheduler → bus → agent → bus → ingest → database and shows in the API', async () => {
    await waitFor('every server to have run in both regions', async () => {
      const all = await servers();
      return (
        all.length === 4 && all.every((s) => s.byRegion.length === 2 && s.byRegion.every((r) => r.currentRevision))
      );
    });
    expect(await currentIn('modern')).toEqual({ 'eu-west': '2026-07-28', 'us-east': '2026-07-28' });
    expect(await currentIn('sessions-2025-03-26')).toEqual({ 'eu-west': '2025-03-26', 'us-east': '2025-03-26' });
    const modern = await server('modern');
    const page = await m.api<{
      runs: { region: string; agent: string; requested: string; negotiated: string; outcome: string; jobId: string }[];
    }>(`/api/servers/${modern.id}/runs?limit=10`);
    expect(page.status).toBe(200);
    const run = page.body.runs[0]!;
    expect(run).toMatchObject({ negotiated: '2026-07-28', outcome: 'success' });
    expect(REGIONS).toContain(run.region);
    expect(m.agents.map((a) => a.id)).toContain(run.agent);
    expect(run.jobId).toMatch(/^hs\./);
  });

  it('records an era move when a sim server changes revision: now 2026-07-28, was 2025-11-25', async () => {
    await waitFor('drifter on 2025-11-25', async () => (await currentIn('drifter'))['eu-west'] === '2025-11-25');
    m.sim.drift('drifter', ['2026-07-28']);
    const drifter = await server('drifter');
    const moves = await waitFor('the move in both regions', async () => {
      const res = await m.api<{
        moves: {
          serverName: string;
          region: string;
          fromRevision: string;
          toRevision: string;
          downgrade: boolean;
          eraChanged: boolean;
        }[];
      }>(`/api/era-moves?server=${drifter.id}`);
      return res.body.moves.length >= 2 ? res.body.moves : undefined;
    });
    for (const move of moves)
      expect(move).toMatchObject({
        serverName: 'drifter',
        fromRevision: '2025-11-25',
        toRevision: '2026-07-28',
        downgrade: false,
        eraChanged: true,
      });
    expect(new Set(moves.map((mv) => mv.region))).toEqual(new Set(REGIONS));
    const page = await m.api<{ runs: { previousRevision: string | null; negotiated: string }[] }>(
      `/api/servers/${drifter.id}/runs?limit=50`,
    );
    expect(page.body.runs.some((r) => r.previousRevision === '2025-11-25' && r.negotiated === '2026-07-28')).toBe(true);
  });

  it('fails a pinned test with its assertion when the server drops the revision', async () => {
    const pinned = (await server('drifter-pinned')).tests.find((t) => t.mode === 'pinned')!;
    await waitFor(
      'the pin to pass first',
      async () => (await server('drifter-pinned')).tests.find((t) => t.id === pinned.id)!.states.length === 2,
    );
    m.sim.drift('drifter-pinned', ['2025-06-18', '2025-11-25']);
    const states = await waitFor('the pin to fail in both regions', async () => {
      const res = await m.api<{
        test: {
          states: {
            region: string;
            failing: boolean;
            lastAssertion: { name: string; expected: string; actual: string; message: string } | null;
          }[];
        };
      }>(`/api/tests/${pinned.id}`);
      const s = res.body.test.states;
      return s.length === 2 && s.every((x) => x.failing) ? s : undefined;
    });
    for (const s of states)
      expect(s.lastAssertion).toEqual({
        name: 'mcp.protocol.revision',
        expected: '2025-03-26',
        actual: '2025-11-25',
        message: 'Server no longer speaks protocol 2025-03-26',
      });
  });

  it("serves control's /metrics with the scheduler, ingest and per-server state series", async () => {
    // The state gauges read a server again after a run moved something of it (fleet-gauges.ts),
    // which can trail the API on a loaded machine: wait for the states the API showed above.
    const samples = await waitFor('the state gauges to show the fleet', async () => {
      const res = await fetch(`${m.control.url}/metrics`);
      expect(res.headers.get('content-type')).toMatch(/text\/plain/);
      const s = parseMetrics(await res.text());
      const shown =
        seriesValue(s, 'mcp_server_up', { server: 'sessions-2025-03-26', region: 'us-east' }) === 1 &&
        seriesValue(s, 'mcp_server_failing_pinned_tests', { server: 'drifter-pinned', region: 'eu-west' }) === 1;
      return shown && s;
    });
    expect(
      seriesValue(samples, 'mcp_server_revision_info', {
        server: 'modern',
        region: 'eu-west',
        negotiated_version: '2026-07-28',
        era: 'modern',
      }),
    ).toBe(1);
    expect(seriesValue(samples, 'mcp_server_up', { server: 'sessions-2025-03-26', region: 'us-east' })).toBe(1);
    expect(
      seriesValue(samples, 'mcp_server_failing_pinned_tests', { server: 'drifter-pinned', region: 'eu-west' }),
    ).toBe(1);
    expect(
      seriesValue(samples, 'mcp_scheduler_jobs_total', { kind: 'handshake', result: 'published' }),
    ).toBeGreaterThan(8);
    expect(seriesValue(samples, 'mcp_ingest_total', { kind: 'handshake', result: 'written' })).toBeGreaterThan(8);
    expect(
      seriesValue(samples, 'mcp_ingest_era_moves_total', { from_version: '2025-11-25', to_version: '2026-07-28' }),
    ).toBeGreaterThanOrEqual(2);
    expect(seriesValue(samples, 'mcp_agents_seen', { region: 'eu-west' })).toBe(1);
    expect(samples.some((s) => Object.values(s.labels).some((v) => v.includes('127.0.0.1')))).toBe(false);
    // Revisions travel in *_version labels only, as on the agents (requested_version:
    // docs/protocol.md#handshake-metrics). The one exception is the test gauges' `revision`, the
    // test's revision choice (`newest` or its pin), named so by issue 17: mcp_test_failing{server,test,revision}.
    const labelNames = new Set(
      samples
        .filter((s) => s.name.startsWith('mcp_') && !s.name.startsWith('mcp_test_'))
        .flatMap((s) => Object.keys(s.labels)),
    );
    expect(
      new Set(samples.filter((s) => s.name.startsWith('mcp_test_')).flatMap((s) => Object.keys(s.labels))),
    ).toEqual(new Set(['server', 'test', 'revision']));
    expect([...labelNames].filter((l) => /revision/.test(l))).toEqual([]);
  });

  it('a second result of a job, published or redelivered, writes no second run and is counted duplicate', async () => {
    const [row] = await m.store.db.select().from(runs).limit(1);
    const result: Result = {
      jobId: row!.jobId,
      kind: 'handshake',
      region: row!.region,
      agent: 'replayer',
      serverId: row!.serverId,
      testId: row!.testId,
      slot: row!.scheduledAt.getTime(),
      scheduledAt: row!.scheduledAt.toISOString(),
      startedAt: row!.startedAt.toISOString(),
      finishedAt: row!.finishedAt.toISOString(),
      traceId: null,
      conformance: null,
      surfaces: [],
      script: null,
      run: {
        mode: 'newest',
        requested: row!.requested as never,
        negotiated: row!.negotiated,
        generation: row!.generation,
        era: row!.era as never,
        outcome: 'success',
        message: 'replayed',
        previousRevision: null,
        requests: 1,
        millis: 1,
        serverInfo: null,
        assertion: null,
        lookup: { performed: false, found: null, requests: 0 },
        evidence: null,
      },
      detection: null,
    };
    const duplicates = async () =>
      seriesValue(parseMetrics(await (await fetch(`${m.control.url}/metrics`)).text()), 'mcp_ingest_total', {
        kind: 'handshake',
        result: 'duplicate',
      });
    const before = await duplicates();
    // The bus carries a second result of the same job (a job run twice, a publish retried) to ingest…
    await m.bus.publishResult(result);
    // …and a redelivery comes in too, straight onto the subject: ingest must still write one run.
    const subject = `${m.namespace}.results.${result.region}`;
    const raw = JSON.stringify(result);
    if (m.bus.kind === 'nats') await jetstream((m.bus as NatsBus).connection).publish(subject, raw);
    else (m.bus as MemoryBus).publishRaw(`mcpfleet.results.${result.region}`, raw);
    await waitFor('ingest to meet both', async () => (await duplicates()) >= before + 2);
    const rows = await m.store.db.select().from(runs).where(eq(runs.jobId, row!.jobId));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.agent).not.toBe('replayer');
  });

  it('a control restart doubles no slot and skips none', async () => {
    const modern = await server('modern');
    const testId = modern.tests[0]!.id;
    const slotsOf = async () =>
      (
        await m.store.db
          .select({ scheduledAt: runs.scheduledAt, region: runs.region })
          .from(runs)
          .where(eq(runs.testId, testId))
          .orderBy(asc(runs.scheduledAt))
      )
        .filter((r) => r.region === 'eu-west')
        .map((r) => r.scheduledAt.getTime());
    const before = (await slotsOf()).length;
    await m.restartControl();
    await waitFor('three more slots after the restart', async () => (await slotsOf()).length >= before + 3, 20_000);
    const slots = await slotsOf();
    expect(new Set(slots).size).toBe(slots.length);
    const gaps = slots.slice(1).map((s, i) => s - slots[i]!);
    expect(gaps.every((g) => g === 2_000)).toBe(true);
  });

  it.runIf(flavour === 'postgres+nats')(
    'an agent killed mid-job has its job redelivered and completed exactly once',
    async () => {
      const region = 'kill-test';
      // A region of the fleet (ingest refuses results from any other) where nothing is scheduled,
      // so the only job there is this one.
      await m.control.apply(parseFleet(fleetYaml(m.sim, SERVERS, { spareRegions: [region] }), 'kill-test fleet'));
      const modern = await server('modern');
      // One instant for the job id, the slot and scheduledAt: ingest refuses a result whose
      // scheduledAt is not its slot or whose id is not the one its slot makes (a millisecond
      // between two clock reads made this test fail once).
      const slot = Date.now();
      const job: Job = {
        jobId: `hs.${modern.tests[0]!.id}.${region}.${slot}`,
        kind: 'handshake',
        depth: 'handshake',
        region,
        serverId: modern.id,
        serverName: 'silent',
        testId: modern.tests[0]!.id,
        url: m.sim.target('silent').url,
        headers: {},
        revision: '2026-07-28',
        currentRevision: null,
        timeoutMs: 3_000,
        slot,
        scheduledAt: new Date(slot).toISOString(),
        allow: ['127.0.0.0/8'],
        deny: [],
        script: null,
      };
      await m.bus.ensure([region]);
      // Below the ephemeral range (32768+), where other tests' connections land.
      const metricsPort = String(20_000 + Math.floor(Math.random() * 12_000));
      const child: ChildProcess = spawn(
        process.execPath,
        [CLI, 'agent', '--region', region, '--metrics-port', metricsPort, '--ack-wait', '4000'],
        {
          env: {
            ...process.env,
            NATS_URL,
            MCP_FLEET_NATS_NAMESPACE: m.namespace,
            MCP_FLEET_PROBE_ALLOW: '127.0.0.0/8',
            LOG_LEVEL: 'warn',
          },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      try {
        await waitFor(
          'the child agent to start',
          () => new Promise<boolean>((resolve) => child.stdout!.once('data', () => resolve(true))),
          20_000,
        );
        await m.bus.publishJob(job);
        await waitFor(
          'the child agent to take the job',
          async () => (await m.bus.pending()).jobs[region] === 0,
          10_000,
        );
        await new Promise((r) => setTimeout(r, 300));
        child.kill('SIGKILL');
        const rescuer = await startAgent({
          bus: m.bus,
          region,
          log,
          metricsPort: null,
          processMetrics: false,
          ackWaitMs: 4_000,
          probeFloor: LOOPBACK_FLOOR,
        });
        try {
          const rows = await waitFor(
            'the job to be completed by the other agent',
            async () => {
              const r = await m.store.db.select().from(runs).where(eq(runs.jobId, job.jobId));
              return r.length > 0 ? r : undefined;
            },
            30_000,
          );
          await new Promise((r) => setTimeout(r, 1_000));
          expect(await m.store.db.select().from(runs).where(eq(runs.jobId, job.jobId))).toHaveLength(1);
          expect(rows[0]!.agent).toBe(rescuer.id);
          expect(rows[0]!.outcome).toBe('timeout');
        } finally {
          await rescuer.stop();
        }
      } finally {
        child.kill('SIGKILL');
      }
    },
  );
});
