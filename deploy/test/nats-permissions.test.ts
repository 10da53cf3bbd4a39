// NATS permissions per role (deploy/nats), on a real nats-server running the shipped config as it
// is (deploy/nats/nats.conf, which includes mcp-fleet-account.conf) with the passwords
// `mcp-fleet secrets init` generates: control's user runs the whole pipeline; an agent's user pulls
// its own region's jobs and publishes its own region's results and heartbeats, and the server
// refuses it everything else. Every region of the shipped fleet files has its agent user.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  connectNatsBus,
  type Heartbeat,
  type Job,
  type NatsBus,
  natsConnectionOptions,
  type Result,
} from '@mcp-fleet/bus';
import { heartbeat, job, result } from '@mcp-fleet/bus/testing';
import { createLogger } from '@mcp-fleet/log';
import { type NatsServer, startNatsServer } from '@mcp-fleet/testkit';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { NATS_USERS, runCli } from './secrets-init';
import { REPO } from './source-env';

const CONFIG = join(REPO, 'deploy/nats/nats.conf');
const FLEETS = ['deploy/compose/fleet.yaml', 'deploy/k8s/base/fleet.yaml'];
/** Every region of the shipped fleet files (their `regions` lists). */
const REGIONS = [
  ...new Set(FLEETS.flatMap((f) => (parse(readFileSync(join(REPO, f), 'utf8')) as { regions: string[] }).regions)),
].sort();

let dir: string;
let server: NatsServer;
const opened: { close(): Promise<void> }[] = [];
const password = (role: string) => readFileSync(join(dir, role, 'NATS_PASSWORD'), 'utf8');

function captured() {
  const lines: string[] = [];
  return { log: createLogger('bus', 'debug', { write: (l: string) => lines.push(l) }), lines };
}

async function controlBus(): Promise<NatsBus & { lines: string[] }> {
  const { log, lines } = captured();
  const bus = await connectNatsBus({ servers: server.url, user: NATS_USERS.control, pass: password('control'), log });
  opened.push(bus);
  return Object.assign(bus, { lines });
}

/** An agent's bus as `mcp-fleet agent` opens it: its region's user, declaring nothing. */
async function agentBus(region: string): Promise<NatsBus & { lines: string[] }> {
  const { log, lines } = captured();
  const bus = await connectNatsBus({
    servers: server.url,
    user: NATS_USERS.agent(region),
    pass: password(`agent-${region}`),
    log,
    declare: false,
  });
  opened.push(bus);
  return Object.assign(bus, { lines });
}

/** The header that would make a message roll up (replace) every message of the stream before it. */
function rollupAll() {
  const h = headers();
  h.set('Nats-Rollup', 'all');
  return h;
}

/** A bare connection with an agent's credentials, as a compromised agent would have. */
async function agentConnection(region: string): Promise<NatsConnection> {
  const nc = await connect(
    natsConnectionOptions({ servers: server.url, user: NATS_USERS.agent(region), pass: password(`agent-${region}`) }),
  );
  opened.push(nc);
  return nc;
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const violations = () => server.log().match(/(Publish|Subscription) Violation.*/g) ?? [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-fleet-nats-perms-'));
  const init = await runCli(['secrets', 'init', '--dir', dir, ...REGIONS.flatMap((r) => ['--region', r])]);
  expect(init.stderr).toBe('');
  expect(init.code).toBe(0);
  // nats-server gets the passwords as compose's NATS services export them: one variable per file.
  const env = Object.fromEntries(
    readdirSync(join(dir, 'nats')).map((f) => [f, readFileSync(join(dir, 'nats', f), 'utf8')]),
  );
  server = await startNatsServer({ include: CONFIG, env });
});

afterAll(async () => {
  await Promise.all(opened.map((c) => c.close().catch(() => {})));
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('NATS permissions (deploy/nats) on a real nats-server', () => {
  it('runs the pipeline with control and the agents of every region of the shipped fleets, with no violation', async () => {
    expect(REGIONS).toEqual(expect.arrayContaining(['eu-west', 'us-east']));
    // The agents start first: their durables do not exist yet, and they may not create them.
    const agents = await Promise.all(REGIONS.map(agentBus));
    const ran: Record<string, string[]> = {};
    const subs = agents.map((agent, i) => {
      const region = REGIONS[i]!;
      ran[region] = [];
      return agent.consumeJobs(
        region,
        async (d) => {
          ran[region]!.push(d.value.jobId);
          await d.working();
          await agent.publishResult(result(region, { jobId: d.value.jobId }));
          await agent.publishHeartbeat(heartbeat(region));
          await d.ack();
        },
        { concurrency: 2, ackWaitMs: 60_000 },
      );
    });
    for (const agent of agents)
      await waitFor('an agent to say it waits', () =>
        agent.lines.some((l) => l.includes('does not exist yet: waiting for control to declare it')),
      );

    const control = await controlBus();
    await control.ensure(REGIONS);
    const results: Result[] = [];
    const beats: Heartbeat[] = [];
    const ingest = control.consumeResults(
      async (d) => {
        results.push(d.value);
        await d.ack();
      },
      { concurrency: 4 },
    );
    const hb = control.onHeartbeat((h) => beats.push(h));
    await new Promise((r) => setTimeout(r, 200)); // the heartbeat subscription reaches the server
    const sent: Job[] = REGIONS.map((r) => job(r));
    for (const j of sent) expect(await control.publishJob(j)).toEqual({ duplicate: false });

    await waitFor('every region to run its job and report', () => results.length === sent.length, 30_000);
    for (const j of sent) {
      expect(ran[j.region], j.region).toEqual([j.jobId]);
      expect(results.find((r) => r.jobId === j.jobId)?.region).toBe(j.region);
    }
    await waitFor('a heartbeat from every region', () => REGIONS.every((r) => beats.some((b) => b.region === r)));
    expect(await control.pending()).toEqual({ jobs: Object.fromEntries(REGIONS.map((r) => [r, 0])), results: 0 });
    await Promise.all([...subs, ingest, hb].map((s) => s.stop()));
    // Nothing either role did was refused: each has every right its process uses.
    expect(violations()).toEqual([]);
    for (const bus of [control, ...agents])
      expect(bus.lines.filter((l) => /NATS error|[Pp]ermission/.test(l))).toEqual([]);
  });

  it('refuses an agent every other publish, pull, read, change or subscription, and the streams keep what they had', async () => {
    const [own, other] = ['eu-west', 'us-east'];
    const control = await controlBus();
    await control.ensure(REGIONS);
    // A job waiting for the other region, which the agent must not be able to take or destroy.
    const waiting = job(other);
    await control.publishJob(waiting);
    const before = violations().length;

    const nc = await agentConnection(own);
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const jobs = control.names.jobsStream;
    const resultsStream = control.names.resultsStream;
    const refused: [string, () => Promise<unknown>, string][] = [
      ['publish a job', () => js.publish(control.names.jobs(own), JSON.stringify(job(own))), control.names.jobs(own)],
      [
        'publish a result for another region',
        () => js.publish(control.names.results(other), JSON.stringify(result(other))),
        control.names.results(other),
      ],
      [
        "read another region's durable",
        () => jsm.consumers.info(jobs, `jobs-${other}`),
        `$JS.API.CONSUMER.INFO.${jobs}.jobs-${other}`,
      ],
      [
        "pull another region's jobs",
        () =>
          nc.request(`$JS.API.CONSUMER.MSG.NEXT.${jobs}.jobs-${other}`, JSON.stringify({ batch: 1, expires: 1e9 }), {
            timeout: 5_000,
          }),
        `$JS.API.CONSUMER.MSG.NEXT.${jobs}.jobs-${other}`,
      ],
      [
        "consume another region's jobs through a consumer of its own",
        () =>
          jsm.consumers.add(jobs, {
            durable_name: 'mine',
            filter_subject: control.names.jobs(other),
            ack_policy: 'explicit',
          } as never),
        `$JS.API.CONSUMER.CREATE.${jobs}.mine.${control.names.jobs(other)}`,
      ],
      [
        'change its own durable',
        () => jsm.consumers.update(jobs, `jobs-${own}`, { ack_wait: 1_000_000_000 }),
        `$JS.API.CONSUMER.CREATE.${jobs}.jobs-${own}`,
      ],
      ['delete the jobs stream', () => jsm.streams.delete(jobs), `$JS.API.STREAM.DELETE.${jobs}`],
      ['purge the jobs stream', () => jsm.streams.purge(jobs), `$JS.API.STREAM.PURGE.${jobs}`],
      ['delete a job', () => jsm.streams.deleteMessage(jobs, 1), `$JS.API.STREAM.MSG.DELETE.${jobs}`],
      [
        'change the jobs stream',
        // Straight to the API: the client's update() would first ask for the stream's info (refused too).
        () => nc.request(`$JS.API.STREAM.UPDATE.${jobs}`, JSON.stringify({ name: jobs, subjects: ['mcpfleet.>'] })),
        `$JS.API.STREAM.UPDATE.${jobs}`,
      ],
      ['create a stream', () => jsm.streams.add({ name: 'MINE', subjects: ['mine.>'] }), '$JS.API.STREAM.CREATE.MINE'],
      [
        'read the results stream',
        () => jsm.streams.getMessage(resultsStream, { seq: 1 }),
        `$JS.API.STREAM.MSG.GET.${resultsStream}`,
      ],
      ['read the results stream info', () => jsm.streams.info(resultsStream), `$JS.API.STREAM.INFO.${resultsStream}`],
      [
        'pull results from ingest',
        () =>
          nc.request(`$JS.API.CONSUMER.MSG.NEXT.${resultsStream}.ingest`, JSON.stringify({ batch: 1 }), {
            timeout: 5_000,
          }),
        `$JS.API.CONSUMER.MSG.NEXT.${resultsStream}.ingest`,
      ],
      [
        'read the results through a consumer of its own',
        () => jsm.consumers.add(resultsStream, { durable_name: 'mine', ack_policy: 'none' } as never),
        `$JS.API.CONSUMER.CREATE.${resultsStream}.mine`,
      ],
      ['list the streams', () => jsm.streams.names().next(), '$JS.API.STREAM.NAMES'],
    ];
    for (const [what, attempt, subject] of refused) {
      const err = await attempt().then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err, what).toBeInstanceOf(Error);
      expect(err!.message, what).toMatch(/Permissions Violation for Publish/);
      // The server's own log names the refused subject (it arrives a moment after the client's error).
      await waitFor(`the server to log the refusal to ${what}`, () =>
        violations().slice(before).join('\n').includes(`Subject "${subject}`),
      );
    }

    // Eavesdropping: the subjects jobs, results and other users' replies travel on.
    for (const subject of [
      'mcpfleet.jobs.>',
      control.names.jobs(other),
      'mcpfleet.results.>',
      'mcpfleet.heartbeats.*',
      '_INBOX.>',
      `_INBOX.${NATS_USERS.control}.>`,
      `_INBOX.${NATS_USERS.agent(other)}.>`,
      `$JS.EVENT.ADVISORY.>`,
    ]) {
      const refusal = new Promise<Error | null>((resolve) => {
        nc.subscribe(subject, { callback: (err) => resolve(err) });
      });
      await nc.flush();
      const err = await Promise.race([refusal, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
      expect(err?.message, subject).toMatch(/Permissions Violation for Subscription/);
    }

    // A heartbeat for another region is dropped by the server, never reaching control.
    const beats: string[] = [];
    const hb = control.onHeartbeat((h) => beats.push(h.region));
    await new Promise((r) => setTimeout(r, 200));
    nc.publish(`mcpfleet.heartbeats.${other}`, JSON.stringify(heartbeat(other)));
    nc.publish(`mcpfleet.heartbeats.${own}`, JSON.stringify(heartbeat(own)));
    await waitFor('the agent’s own heartbeat', () => beats.includes(own));
    await new Promise((r) => setTimeout(r, 300));
    expect(beats).toEqual([own]);
    await hb.stop();

    // Nothing changed: the other region's job still waits; no job reached this region's queue.
    expect((await control.pending()).jobs).toMatchObject({ [other]: 1, [own]: 0 });
    const ran: string[] = [];
    const otherAgent = await agentBus(other);
    const sub = otherAgent.consumeJobs(
      other,
      async (d) => {
        ran.push(d.value.jobId);
        await d.ack();
      },
      { concurrency: 1 },
    );
    await waitFor('the waiting job', () => ran.length === 1);
    await sub.stop();
    expect(ran).toEqual([waiting.jobId]);
  });

  it("lets no agent's credentials keep another region's result out: a message id, a job id or a rollup it sets", async () => {
    const [own, other] = ['eu-west', 'us-east'];
    const control = await controlBus();
    await control.ensure(REGIONS);
    const seen: string[] = [];
    const ingest = control.consumeResults(
      async (d) => {
        seen.push(`${d.value.region} ${d.value.agent} ${d.value.jobId}`);
        await d.ack();
      },
      { concurrency: 4 },
    );
    const before = violations().length;
    // Job ids are predictable (hs.<test>.<region>.<slot>), and a test runs in every region.
    const jobId = `hs.test-1.${other}.1700000000000`;
    const nc = await agentConnection(own);
    const js = jetstream(nc);
    // Its own region's result, which its user may publish, carrying the other region's job id as
    // the message id: NATS permissions bind the subject, never the headers.
    const decoy = result(own, { agent: 'attacker' });
    expect((await js.publish(control.names.results(own), JSON.stringify(decoy), { msgID: jobId })).duplicate).toBe(
      false,
    );
    // The same through the bus as the agent opens it, the job id in the body.
    const attacker = await agentBus(own);
    await attacker.publishResult(result(own, { jobId, agent: 'attacker' }));
    // A rollup would purge the subject (or the whole stream) it lands on: the results stream allows none.
    const rollup = await js
      .publish(control.names.results(own), JSON.stringify(result(own)), { headers: rollupAll() })
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(rollup?.message).toMatch(/rollup/i);

    // Then the other region's agent publishes its real result, after all of the above.
    const victim = await agentBus(other);
    await victim.publishResult(result(other, { jobId, agent: 'victim' }));
    const expected = [`${own} attacker ${decoy.jobId}`, `${own} attacker ${jobId}`, `${other} victim ${jobId}`];
    await waitFor('every result at ingest', () => expected.every((e) => seen.includes(e)));
    await new Promise((r) => setTimeout(r, 300));
    await ingest.stop();
    // All reach control's ingest, which rejects a job id that is not its result's own (services/control).
    expect(seen.sort()).toEqual(expected.sort());
    expect(violations().slice(before)).toEqual([]);
  });

  it("admits no one without the password of their own user: not an agent with another region's", async () => {
    const [own, other] = ['eu-west', 'us-east'];
    for (const [user, pass] of [
      [NATS_USERS.agent(own), password(`agent-${other}`)],
      [NATS_USERS.control, password(`agent-${own}`)],
      [NATS_USERS.agent(own), ''],
      ['', ''],
    ] as const) {
      const err = await connect({ servers: server.url, ...(user ? { user, pass } : {}), reconnect: false }).then(
        (nc) => nc.close().then(() => undefined),
        (e: Error) => e,
      );
      expect(err, `${user || 'anonymous'}`).toBeInstanceOf(Error);
      expect(String(err), `${user || 'anonymous'}`).toMatch(/Authorization Violation/i);
    }
  });
});
