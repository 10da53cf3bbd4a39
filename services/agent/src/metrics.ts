// What an agent tells Prometheus. A registry per agent (several agents can share a process in
// one-machine mode). Every label value comes from a closed set: revisions, outcomes, kinds and
// the region. URLs, server names, session ids and job ids belong on spans, never here. Label
// names and values follow one convention across control and agents (handshake metrics:
// docs/protocol.md#handshake-metrics): revisions in `*_version` labels (`requested_version`,
// `negotiated_version`; `from_version`, `to_version`), and lower-case values.
import { collectProcessMetrics, revisionLabel } from '@mcp-fleet/bus/metrics';
import type { Detection, DetectionOutcome, HandshakeRun } from '@mcp-fleet/probe';
import { eraMove, REVISION_NAMES } from '@mcp-fleet/probe';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export { revisionLabel };

export type JobKind = 'handshake' | 'detection';
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
  readonly #floorRefusals: Counter<'region'>;

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
      help: 'How long a probe (handshake run or detection) took, as the probe measured it.',
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
    this.#floorRefusals = new Counter({
      name: 'mcp_agent_floor_refusals_total',
      help: "Addresses or schemes a probe was about to dial that the job's policy allowed but the agent's own floor (--allow/--deny/--schemes, MCP_FLEET_PROBE_*) refused.",
      labelNames: ['region'],
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

  inFlight(count: number): void {
    this.#inFlight.set({ region: this.#region }, count);
  }
}
