// What an agent tells Prometheus. A registry per agent (several agents can share a process in
// one-machine mode). Every label value comes from a closed set: revisions, outcomes, kinds and
// the region. URLs, server names, session ids and job ids belong on spans, never here. Label
// names and values follow one convention across control and agents (handshake metrics:
// docs/protocol.md#handshake-metrics): revisions in `*_version` labels (`requested_version`,
// `negotiated_version`; `from_version`, `to_version`), and lower-case values. Conformance checks
// are labelled by their id from probe's table (a closed set), their level in lower case (`must`,
// `should`), their status and the era the run negotiated; the method-not-found and transport-error
// series by the closed sets of traffic.ts.
import { collectProcessMetrics, revisionLabel } from '@mcp-fleet/bus/metrics';
import type {
  CheckLevel,
  ConformanceRun,
  Detection,
  DetectionOutcome,
  HandshakeRun,
  ScriptRun,
  SurfaceRead,
} from '@mcp-fleet/probe';
import { CONFORMANCE_CHECKS, CURRENT_REVISION, eraMove, REVISION_NAMES } from '@mcp-fleet/probe';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { STDIO_ERROR_TYPES, TRANSPORT_ERROR_TYPES, type Traffic } from './traffic';

export { revisionLabel };

export type JobKind = 'handshake' | 'detection';

/** Each check's level from probe's table: the label never takes a level from the run itself. */
const CHECK_LEVELS: ReadonlyMap<string, CheckLevel> = new Map(CONFORMANCE_CHECKS.map((c) => [c.id, c.level]));
const CHECK_STATUSES: ReadonlySet<string> = new Set(['pass', 'fail', 'skip']);

/** A check's level as a label value: `must`, `should` (the report's MUST and SHOULD stay in the JSON). */
export function levelLabel(level: CheckLevel): string {
  return level.toLowerCase();
}
/**
 * How a job ended for the agent: result accepted, result not accepted (nak'ed), our own failure,
 * handed back at stop, or dropped unprobed because its slot was stale.
 */
export type JobResult = 'ok' | 'failed_publish' | 'error' | 'returned' | 'stale';

/** 5 ms … 30 s: a loopback handshake takes milliseconds, a detection against a slow server up to its 20 s cap. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];

const DETECTION_OUTCOMES: readonly DetectionOutcome[] = ['DETECTED', 'NONE', 'RATE_LIMITED'];

/**
 * A detection's outcome as a label value: `detected`, `none`, `rate_limited`. The upper-case names
 * of the detection's answer (docs/protocol.md#detection) stay in the JSON (CLI, API); label values
 * are lower-case like every other outcome label.
 */
export function detectionOutcomeLabel(outcome: DetectionOutcome): string {
  return outcome.toLowerCase();
}

export class AgentMetrics {
  readonly registry = new Registry();
  readonly #region: string;
  readonly #handshakes: Counter<'requested_version' | 'negotiated_version' | 'outcome' | 'region'>;
  readonly #eraMoves: Counter<'from_version' | 'to_version' | 'region'>;
  readonly #downgrades: Counter<'region'>;
  readonly #duration: Histogram<'kind' | 'region'>;
  readonly #detections: Counter<'outcome' | 'region'>;
  readonly #jobs: Counter<'region' | 'kind' | 'result'>;
  readonly #inFlight: Gauge<'region'>;
  readonly #concurrency: Gauge<'region'>;
  readonly #floorRefusals: Counter<'region'>;
  readonly #checks: Counter<'check' | 'level' | 'status' | 'era' | 'region'>;
  readonly #methodNotFound: Counter<'method' | 'protocol_version' | 'region'>;
  readonly #transportErrors: Counter<'transport' | 'error_type' | 'region'>;
  readonly #scriptSteps: Counter<'status' | 'region'>;
  readonly #surfaceReads: Counter<'era' | 'result' | 'region'>;

  constructor(opts: { region: string; version: string; defaultMetrics?: boolean }) {
    this.#region = opts.region;
    const registers = [this.registry];
    if (opts.defaultMetrics !== false) collectProcessMetrics(this.registry);

    this.#handshakes = new Counter({
      name: 'mcp_handshake_total',
      help: 'Handshake runs by requested and negotiated revision and outcome.',
      labelNames: ['requested_version', 'negotiated_version', 'outcome', 'region'],
      registers,
    });
    this.#eraMoves = new Counter({
      name: 'mcp_era_moves_total',
      help: 'Handshake runs whose negotiated revision differs from the revision the test spoke before.',
      labelNames: ['from_version', 'to_version', 'region'],
      registers,
    });
    this.#downgrades = new Counter({
      name: 'mcp_downgrades_total',
      help: 'Handshake runs where the server answered with an older revision than the one offered.',
      labelNames: ['region'],
      registers,
    });
    this.#duration = new Histogram({
      name: 'mcp_probe_duration_seconds',
      help: "How long a probe (handshake run, detection, or a conformance-depth job's checks) took, as the probe measured it.",
      labelNames: ['kind', 'region'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#detections = new Counter({
      name: 'mcp_detection_total',
      help: 'Detections by outcome (detected, none, rate_limited).',
      labelNames: ['outcome', 'region'],
      registers,
    });
    this.#jobs = new Counter({
      name: 'mcp_agent_jobs_total',
      help: 'Jobs handled: ok (result accepted, job acked), failed_publish, error (an agent fault), returned (handed back at stop), stale (dropped unprobed: its slot was past its staleAt).',
      labelNames: ['region', 'kind', 'result'],
      registers,
    });
    this.#inFlight = new Gauge({
      name: 'mcp_agent_in_flight',
      help: 'Jobs this agent is working on.',
      labelNames: ['region'],
      registers,
    });
    this.#concurrency = new Gauge({
      name: 'mcp_agent_concurrency_limit',
      help: "Jobs this agent may run at once now (fixed, or 'auto': sized from its rate × job time).",
      labelNames: ['region'],
      registers,
    });
    this.#floorRefusals = new Counter({
      name: 'mcp_agent_floor_refusals_total',
      help: "Addresses or schemes a probe was about to dial that the job's policy allowed but the agent's own floor (--allow/--deny/--schemes, MCP_FLEET_PROBE_*) refused.",
      labelNames: ['region'],
      registers,
    });
    this.#checks = new Counter({
      name: 'mcp_conformance_checks_total',
      help: 'Conformance checks judged, by check id, level (must, should), status (pass, fail, skip) and the era the run negotiated.',
      labelNames: ['check', 'level', 'status', 'era', 'region'],
      registers,
    });
    // Bounded labels: a step's status (pass, fail, skip), never its tool or its message.
    this.#scriptSteps = new Counter({
      name: 'mcp_script_steps_total',
      help: 'Script steps run by script-depth tests, by status (pass, fail, skip).',
      labelNames: ['status', 'region'],
      registers,
    });
    this.#surfaceReads = new Counter({
      name: 'mcp_surface_reads_total',
      help: 'Surface reads of conformance- and surface-depth tests, by era and result (snapshot: read; none: the era did not open or the read failed).',
      labelNames: ['era', 'result', 'region'],
      registers,
    });
    this.#methodNotFound = new Counter({
      name: 'mcp_method_not_found_total',
      help: "Requests of any probe answered with JSON-RPC -32601 (method not found), by MCP method (or other) and the revision it was sent at; a conformance check's deliberate bad requests are not counted.",
      labelNames: ['method', 'protocol_version', 'region'],
      registers,
    });
    this.#transportErrors = new Counter({
      name: 'mcp_transport_error_total',
      help: "Requests of any probe that got no answer, by transport and error type: http (timeout, connection_refused, connection_reset, dns, tls, malformed_http, network) and stdio (spawn_failed, exited_early, timeout, stdout_flood; stdout_not_json once per job whose process wrote lines that are not JSON-RPC); the probe's own refusals (policy, request budget, a command off the agent's allowlist) and deliberate bad requests are not counted.",
      labelNames: ['transport', 'error_type', 'region'],
      registers,
    });
    const info = new Gauge({
      name: 'mcp_agent_info',
      help: 'Always 1; labels say which region and version this agent is.',
      labelNames: ['region', 'version'],
      registers,
    });
    info.set({ region: opts.region, version: opts.version }, 1);
    this.#inFlight.set({ region: opts.region }, 0);
    // Counters that alerts take increase() of start at 0, not at their first event: a series that
    // appears at 1 shows no increase, so the first downgrade or era move after a start would be lost.
    const region = opts.region;
    this.#downgrades.inc({ region }, 0);
    for (const from of REVISION_NAMES)
      for (const to of REVISION_NAMES)
        if (from !== to) this.#eraMoves.inc({ from_version: from, to_version: to, region }, 0);
    for (const outcome of DETECTION_OUTCOMES)
      this.#detections.inc({ outcome: detectionOutcomeLabel(outcome), region }, 0);
    this.#floorRefusals.inc({ region }, 0);
    for (const kind of ['handshake', 'detection'] as const) this.#jobs.inc({ region, kind, result: 'stale' }, 0);
    // Each check's failures in the era(s) it runs in, and every transport error type.
    for (const c of CONFORMANCE_CHECKS)
      for (const era of c.era === 'both' ? (['legacy', 'modern'] as const) : [c.era])
        this.#checks.inc({ check: c.id, level: levelLabel(c.level), status: 'fail', era, region }, 0);
    // The openings every probe sends, at the revisions they are sent at: a legacy server refusing
    // server/discover, a modern-only one refusing initialize.
    this.#methodNotFound.inc({ method: 'server/discover', protocol_version: CURRENT_REVISION, region }, 0);
    for (const revision of REVISION_NAMES)
      if (revision !== CURRENT_REVISION)
        this.#methodNotFound.inc({ method: 'initialize', protocol_version: revision, region }, 0);
    for (const errorType of TRANSPORT_ERROR_TYPES)
      this.#transportErrors.inc({ transport: 'http', error_type: errorType, region }, 0);
    for (const errorType of STDIO_ERROR_TYPES)
      this.#transportErrors.inc({ transport: 'stdio', error_type: errorType, region }, 0);
  }

  /** A stdio probe whose processes wrote lines that are not JSON-RPC: once per job (the lines are the run's finding). */
  stdoutNotJson(report: { stdoutNotJson: number } | undefined): void {
    if (report && report.stdoutNotJson > 0)
      this.#transportErrors.inc({ transport: 'stdio', error_type: 'stdout_not_json', region: this.#region });
  }

  /** A script run's steps. */
  script(run: ScriptRun): void {
    for (const step of run.steps)
      if (step.status === 'pass' || step.status === 'fail' || step.status === 'skip')
        this.#scriptSteps.inc({ status: step.status, region: this.#region });
  }

  /** Each surface read, snapshot or none. */
  surfaceReads(reads: readonly SurfaceRead[]): void {
    for (const read of reads)
      if (read.era === 'legacy' || read.era === 'modern')
        this.#surfaceReads.inc({ era: read.era, result: read.snapshot ? 'snapshot' : 'none', region: this.#region });
  }

  /** A conformance run's checks; ids outside probe's table (a bug, or a foreign runner) are not counted. */
  conformance(run: ConformanceRun): void {
    const region = this.#region;
    const era = run.protocol.era;
    if (era !== 'legacy' && era !== 'modern') return;
    for (const c of run.checks) {
      const level = CHECK_LEVELS.get(c.id);
      if (!level || !CHECK_STATUSES.has(c.status)) continue;
      this.#checks.inc({ check: c.id, level: levelLabel(level), status: c.status, era, region });
    }
    this.#duration.observe({ kind: 'conformance', region }, run.millis / 1000);
  }

  /** What every request of a job met (traffic.ts: label values already bounded). */
  traffic(traffic: Traffic): void {
    const region = this.#region;
    for (const m of traffic.methodNotFound)
      this.#methodNotFound.inc({ method: m.method, protocol_version: m.protocolVersion, region });
    for (const t of traffic.transportErrors)
      this.#transportErrors.inc({ transport: t.transport, error_type: t.errorType, region });
  }

  handshake(run: HandshakeRun): void {
    const region = this.#region;
    this.#handshakes.inc({
      requested_version: revisionLabel(run.requested),
      negotiated_version: revisionLabel(run.negotiated),
      outcome: run.outcome,
      region,
    });
    const move = eraMove(run.previousRevision, run.negotiated);
    if (move)
      this.#eraMoves.inc({ from_version: revisionLabel(move.from), to_version: revisionLabel(move.to), region });
    if (run.outcome === 'downgrade') this.#downgrades.inc({ region });
    this.#duration.observe({ kind: 'handshake', region }, run.millis / 1000);
  }

  detection(detection: Detection): void {
    this.#detections.inc({ outcome: detectionOutcomeLabel(detection.outcome), region: this.#region });
    this.#duration.observe({ kind: 'detection', region: this.#region }, detection.millis / 1000);
  }

  job(kind: JobKind, result: JobResult): void {
    this.#jobs.inc({ region: this.#region, kind, result });
  }

  floorRefusal(): void {
    this.#floorRefusals.inc({ region: this.#region });
  }

  /** Jobs in flight, and the limit they run under now. */
  inFlight(count: number, limit: number): void {
    this.#inFlight.set({ region: this.#region }, count);
    this.#concurrency.set({ region: this.#region }, limit);
  }
}
