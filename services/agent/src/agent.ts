// A regional probe agent. It pulls its region's jobs from the bus, runs each job's probe, and
// publishes the result; the job is acked only once the result is accepted, so a job is never
// lost between the two (a crash, a failed publish or a stop brings it back). Stateless: all it
// knows about a test comes in the job — except where probes may go, which the job can only narrow:
// the agent's own floor bounds every job. It serves /metrics and exports a span per probe.
import { hostname } from 'node:os';
import {
  type Bus,
  type Delivery,
  HEARTBEAT_STDIO_BOUNDS,
  InvalidMessageError,
  type Job,
  nakDelayMs,
  type Subscription,
} from '@mcp-fleet/bus';
import { createLogger, type Logger } from '@mcp-fleet/log';
import { DEFAULT_SCHEMES, describeRanges, PUBLIC_ONLY, TargetPolicy, type TargetPolicyRanges } from '@mcp-fleet/probe';
import { type TracerProvider, trace } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import { ConcurrencySizer } from './concurrency';
import { startHeartbeats } from './heartbeat';
import { type AgentHttp, serveAgentHttp } from './http';
import { type JobAnswer, runJob } from './job';
import { AgentMetrics, type JobKind } from './metrics';
import { isStale, StaleJobLog } from './stale';
import { type Admission, ALLOWLIST_SETTING, StdioGate } from './stdio-gate';
import { defaultStdioConcurrency, StdioSlots } from './stdio-slots';
import { checkSourceAddress, DispatcherCache } from './target-policy';
import { AGENT_VERSION } from './version';

/** 'auto' concurrency: where it starts, and its floor and default ceiling. */
const AUTO_INITIAL = 64;
const AUTO_MIN = 16;
const AUTO_MAX = 1024;

export interface AgentOptions {
  bus: Bus;
  region: string;
  /** Default `<hostname>-<pid>-<region>` (one process may run an agent per region). */
  id?: string;
  /**
   * Jobs run at once: a number, or 'auto' (the default): sized from the agent's own rate × job time
   * (concurrency.ts) between 16 and `maxConcurrency`. A job mostly waits on round trips (probe,
   * publish, ack): slow targets need many in flight, fast ones few.
   */
  concurrency?: number | 'auto';
  /** The most 'auto' may reach. Default 1024 (what bench:memory holds an agent to, under 200 MB). */
  maxConcurrency?: number;
  /** Cap on a job's own timeoutMs. Default 120 000 (the most a job may ask for). */
  jobTimeoutMs?: number;
  /** Port of /metrics, /healthz, /readyz: 0 = any free port (default), null = no HTTP server. */
  metricsPort?: number | null;
  /** Default 127.0.0.1; use 0.0.0.0 where Prometheus scrapes from elsewhere. */
  host?: string;
  version?: string;
  /** Where spans go. Default: the global provider (the SDK's when startTracing ran, else no-op). */
  tracerProvider?: TracerProvider;
  log?: Logger;
  /** Default 10 s. */
  heartbeatMs?: number;
  /** How long the bus waits for a settle before redelivering; long probes say `working` well before. Default 60 s. */
  ackWaitMs?: number;
  /** How long stop() lets jobs in flight finish before handing them back. Default 20 s. */
  stopGraceMs?: number;
  /**
   * The agent's own probe floor (flags --allow/--deny/--schemes, MCP_FLEET_PROBE_*): a job's
   * allow/deny/schemes narrow it, never widen it. Default: public addresses only, http and https.
   */
  probeFloor?: TargetPolicyRanges;
  /** Include prom-client's default process metrics. Default true. */
  processMetrics?: boolean;
  /**
   * The local IP address every probe connects from (`--source-address`, MCP_FLEET_SOURCE_ADDRESS): a
   * multi-homed host's interface, or 127.0.0.2 for a second region in tests. Default: the system's choice.
   */
  sourceAddress?: string;
  /**
   * stdio servers (issue 20): the programs this agent starts (`--stdio-commands`,
   * MCP_FLEET_STDIO_COMMANDS): bare names found on its own PATH, or absolute paths. Default none: a
   * stdio job then becomes a run that says its command is not allowed, and nothing is started.
   */
  stdioCommands?: readonly string[];
  /** Where a stdio job's `cwd` is resolved (`--stdio-root`); none = a job naming a cwd is refused. */
  stdioRoot?: string;
  /** The PATH bare names of `stdioCommands` are found on (the agent's own, from the edge; never a job's). */
  stdioPath?: string;
  /** stdio processes at once (`--stdio-concurrency`): default 2 per core (a process start is costly). */
  stdioConcurrency?: number;
}

export interface Agent {
  readonly id: string;
  readonly region: string;
  /** http://host:port/metrics, or null without an HTTP server. */
  readonly metricsUrl: string | null;
  readonly registry: Registry;
  /** Jobs in hand right now. */
  inFlight(): number;
  /** Stop taking jobs, let those in flight finish (or hand them back after the grace period), send a last heartbeat. */
  stop(): Promise<void>;
}

/** A job in hand. Once handed back at stop, its probe may still finish, but its result is dropped. */
interface Work {
  kind: JobKind;
  delivery: Delivery<Job>;
  state: 'probing' | 'publishing' | 'done' | 'returned';
  handBack: () => void;
}

/** An agent fault on a job this often redelivered means the job is poison for us: terminate it. */
const MAX_REDELIVERIES_ON_ERROR = 5;

export async function startAgent(opts: AgentOptions): Promise<Agent> {
  const { bus, region } = opts;
  // Before anything starts: a bad source address is the operator's to fix, said in one sentence.
  checkSourceAddress(opts.sourceAddress);
  const id = opts.id ?? `${hostname()}-${process.pid}-${region}`;
  const version = opts.version ?? AGENT_VERSION;
  const concurrency = opts.concurrency ?? 'auto';
  const sizer =
    concurrency === 'auto'
      ? new ConcurrencySizer({ min: AUTO_MIN, max: opts.maxConcurrency ?? AUTO_MAX, initial: AUTO_INITIAL })
      : undefined;
  const ackWaitMs = opts.ackWaitMs ?? 60_000;
  const stopGraceMs = opts.stopGraceMs ?? 20_000;
  const log = (opts.log ?? createLogger('agent')).child({ agent: id, region });
  const tracer = (opts.tracerProvider ?? trace.getTracerProvider()).getTracer('@mcp-fleet/agent', version);
  const metrics = new AgentMetrics({ region, version, defaultMetrics: opts.processMetrics !== false });
  // Bus messages are a trust boundary: whatever a job allows, the floor bounds where probes go.
  const floorRanges = opts.probeFloor ?? PUBLIC_ONLY;
  const dispatchers = new DispatcherCache(
    new TargetPolicy(floorRanges, { floor: true, onRefused: () => metrics.floorRefusal() }),
    { sourceAddress: opts.sourceAddress },
  );
  const staleLog = new StaleJobLog(log);
  // Before any job: the allowlist's names are resolved now, on the agent's own PATH (stdio-gate.ts).
  const stdioGate = new StdioGate({ commands: opts.stdioCommands ?? [], root: opts.stdioRoot, path: opts.stdioPath });
  const stdioSlots = new StdioSlots(opts.stdioConcurrency ?? defaultStdioConcurrency());
  const noStdio: Admission = {
    ok: false,
    reason: `this agent runs no stdio commands (none allowed: ${ALLOWLIST_SETTING}); it was not started`,
  };
  const startedAt = new Date().toISOString();

  const working = new Set<Work>();
  let stopping = false;
  const changed = () => metrics.inFlight(working.size, sizer ? sizer.limit() : (concurrency as number));
  changed();

  const settle = async (what: string, job: Job, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      // The bus redelivers an unsettled job after ackWait; nothing more to do here.
      log.warn({ err, jobId: job.jobId }, `could not ${what} the job`);
    }
  };

  const fail = async (work: Work, result: 'error' | 'failed_publish', err: unknown) => {
    const { delivery } = work;
    const job = delivery.value;
    metrics.job(work.kind, result);
    if (result === 'error' && delivery.redeliveries >= MAX_REDELIVERIES_ON_ERROR) {
      log.error(
        { err, jobId: job.jobId, serverName: job.serverName },
        'the agent keeps failing on this job; terminating it',
      );
      await settle('terminate', job, () => delivery.term(`agent error after ${delivery.redeliveries + 1} deliveries`));
      return;
    }
    const delayMs = nakDelayMs(delivery.redeliveries);
    const what = result === 'error' ? 'the agent failed on the job' : 'the result was not accepted';
    log[result === 'error' ? 'error' : 'warn']({ err, jobId: job.jobId, delayMs }, `${what}; it comes back later`);
    await settle('nak', job, () => delivery.nak(delayMs));
  };

  const runWork = async (work: Work): Promise<void> => {
    const { delivery } = work;
    const job = delivery.value;
    if (job.region !== region) {
      // The bus routes by region, so this is a misrouted message: running it here would report the wrong region.
      metrics.job(work.kind, 'error');
      await settle('terminate', job, () =>
        delivery.term(`a job of region ${job.region} reached an agent of ${region}`),
      );
      return;
    }
    const now = Date.now();
    if (isStale(job, now)) {
      // Acked, not terminated: nothing is wrong with it, its time has passed (and a term is logged per job).
      metrics.job(work.kind, 'stale');
      staleLog.dropped(job, now);
      await settle('ack', job, () => delivery.ack());
      work.state = 'done';
      return;
    }
    let answer: JobAnswer;
    try {
      // A stdio job: its command admitted by this agent's own allowlist, or refused (a run that says so).
      const admission = job.command ? (stdioGate.commands.length ? stdioGate.admit(job.command) : noStdio) : undefined;
      if (admission && !admission.ok)
        log.warn({ jobId: job.jobId, serverName: job.serverName, reason: admission.reason }, 'stdio job refused');
      const run = () =>
        runJob(job, {
          agent: id,
          tracer,
          timeoutCapMs: opts.jobTimeoutMs ?? 120_000,
          dispatcher: dispatchers.for(job.allow, job.deny, job.schemes),
          onTelemetryError: (err) => log.warn({ err, jobId: job.jobId }, 'a span could not be recorded'),
          ...(admission ? { stdio: admission } : {}),
        });
      // Processes are bounded apart from jobs (stdio-slots.ts); a refused job starts none and waits for none.
      answer = admission?.ok ? await stdioSlots.run(run) : await run();
    } catch (err) {
      if (work.state !== 'returned') await fail(work, 'error', err);
      return;
    }
    // Handed back at stop: another agent runs it; this result is dropped.
    if (work.state === 'returned') return;
    if (!answer.ok) {
      metrics.job(work.kind, 'error');
      log.warn({ jobId: job.jobId, reason: answer.poison }, 'terminating a job that can never run');
      await settle('terminate', job, () => delivery.term(answer.poison));
      return;
    }
    try {
      if (answer.run) metrics.handshake(answer.run);
      if (answer.detection) metrics.detection(answer.detection);
      if (answer.conformance) metrics.conformance(answer.conformance);
      if (answer.script) metrics.script(answer.script);
      metrics.surfaceReads(answer.surfaceReads);
      metrics.traffic(answer.traffic);
      metrics.stdoutNotJson(answer.run?.stdio ?? answer.detection?.stdio);
    } catch (err) {
      // Telemetry never holds a result back.
      log.warn({ err, jobId: job.jobId }, 'probe metrics not recorded');
    }

    work.state = 'publishing';
    try {
      // The bus checks our own result against its schema before it publishes (once: that check is
      // a real share of a job's CPU): a result that fails it is our bug, not the bus's.
      await bus.publishResult(answer.result);
    } catch (err) {
      await fail(work, err instanceof InvalidMessageError ? 'error' : 'failed_publish', err);
      return;
    }
    // Only now is the work safely handed on. If the ack is lost the job runs again, and its second
    // result reaches ingest too: ingest writes one run per job id.
    await settle('ack', job, () => delivery.ack());
    work.state = 'done';
    metrics.job(work.kind, 'ok');
    log.debug({ jobId: job.jobId, kind: job.kind, traceId: answer.result.traceId }, 'job done');
  };

  const handle = async (delivery: Delivery<Job>): Promise<void> => {
    if (stopping) {
      await settle('return', delivery.value, () => delivery.nak(0));
      return;
    }
    let handBack = () => {};
    const handedBack = new Promise<void>((resolve) => {
      handBack = resolve;
    });
    const work: Work = { kind: delivery.value.kind, delivery, state: 'probing', handBack };
    const began = performance.now();
    working.add(work);
    sizer?.started(working.size);
    changed();
    // Long probes keep their delivery: the bus would otherwise hand the job to another agent.
    const keepAlive = setInterval(
      () => void delivery.working().catch((err) => log.debug({ err }, 'working() failed')),
      Math.max(1_000, Math.floor(ackWaitMs / 3)),
    );
    keepAlive.unref();
    try {
      await Promise.race([runWork(work), handedBack]);
    } catch (err) {
      // runWork() handles its own failures; reaching here is a bug, and it must not take the agent down.
      log.error({ err, jobId: delivery.value.jobId }, 'unexpected failure handling a job');
    } finally {
      clearInterval(keepAlive);
      working.delete(work);
      sizer?.ended(performance.now() - began, working.size);
      changed();
    }
  };

  let http: AgentHttp | undefined;
  const metricsPort = opts.metricsPort === undefined ? 0 : opts.metricsPort;
  if (metricsPort !== null) {
    // First, so an agent that cannot serve /metrics (a port in use) fails before it takes a job.
    http = await serveAgentHttp({
      registry: metrics.registry,
      port: metricsPort,
      host: opts.host ?? '127.0.0.1',
      ready: () => !stopping,
      onError: (err) => log.error({ err }, '/metrics failed'),
    });
  }

  let subscription: Subscription;
  try {
    subscription = bus.consumeJobs(region, handle, {
      concurrency: sizer ? () => sizer.limit() : (concurrency as number),
      ackWaitMs,
    });
  } catch (err) {
    // A bad region or a closed bus: leave nothing listening behind.
    await http?.close();
    await dispatchers.destroy();
    throw err;
  }

  // What heartbeats say this agent starts, within the bus's bounds so a long allowlist never makes
  // every heartbeat poison (the agent would look dead); the rest still run, control just is not told.
  const { commands: most, commandChars } = HEARTBEAT_STDIO_BOUNDS;
  const told = stdioGate.runnable.filter((c) => c.length <= commandChars);
  const stdioCommands = told.slice(0, most);
  if (stdioCommands.length < stdioGate.runnable.length)
    log.warn(
      { told: stdioCommands.length, runnable: stdioGate.runnable.length },
      `stdio: heartbeats name only ${stdioCommands.length} of the ${stdioGate.runnable.length} commands and paths this agent starts (at most ${most}, ${commandChars} characters each): control refuses servers naming the others (${ALLOWLIST_SETTING})`,
    );
  const heartbeats = startHeartbeats({
    bus,
    everyMs: opts.heartbeatMs ?? 10_000,
    beat: () => ({
      agent: id,
      region,
      version,
      inFlight: working.size,
      startedAt,
      at: new Date().toISOString(),
      // What control may let a stdio server name in this region (issue 20): only what this agent would start.
      stdioCommands,
    }),
    onError: (err) => log.warn({ err }, 'heartbeat not published'),
  });
  log.info({ concurrency, metricsUrl: http ? `${http.url}/metrics` : null }, 'agent started');
  log.info(
    { stdioCommands: stdioGate.commands, stdioConcurrency: stdioSlots.limit },
    stdioGate.commands.length
      ? `stdio: starts only ${stdioGate.commands.join(', ')} (at most ${stdioSlots.limit} processes at once)`
      : `stdio: starts no commands (${ALLOWLIST_SETTING} names none)`,
  );
  log.info(
    { floor: { allow: floorRanges.allow, deny: floorRanges.deny, schemes: floorRanges.schemes ?? DEFAULT_SCHEMES } },
    `probe floor: ${describeRanges(floorRanges)}; a job's allow/deny/schemes can narrow it, never widen it`,
  );

  let stopped: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    stopping = true;
    const drained = subscription.stop();
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), stopGraceMs);
    });
    const first = await Promise.race([drained.then(() => 'drained' as const), graceOver]);
    clearTimeout(timer);
    if (first === 'grace') {
      // Hand back what is still probing, so another agent runs it now; what is publishing finishes.
      let returned = 0;
      for (const work of working) {
        if (work.state !== 'probing') continue;
        returned += 1;
        work.state = 'returned';
        metrics.job(work.kind, 'returned');
        await settle('return', work.delivery.value, () => work.delivery.nak(0));
        work.handBack();
      }
      if (returned > 0) log.warn({ returned }, 'stop: jobs still probing were handed back');
      await drained;
    }
    await heartbeats.stop();
    staleLog.flush();
    await http?.close();
    await dispatchers.destroy();
    log.info('agent stopped');
  };

  return {
    id,
    region,
    metricsUrl: http ? `${http.url}/metrics` : null,
    registry: metrics.registry,
    inFlight: () => working.size,
    stop() {
      stopped ??= stop();
      return stopped;
    },
  };
}
