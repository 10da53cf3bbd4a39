// The spans of one probe, after the OTel MCP semantic conventions: a CLIENT span for the probe
// (`mcp.handshake` or `mcp.detection`) and a child per HTTP request, built from the probe's
// exchanges after the fact; a conformance-depth handshake adds a child per check
// (`mcp.conformance.check <id>`), its requests staying children of the probe span like the rest. Header values never go on a span, and URLs lose their query string
// and credentials, so neither a token in the headers nor one in a URL can leak into a trace; what a
// server chose (a session id, a version, an id, an error) is redacted with the probe's secretsOf.
import type {
  CheckResult,
  ConformanceRun,
  Detection,
  Era,
  Exchange,
  HandshakeRun,
  ScriptRun,
  SurfaceRead,
} from '@mcp-fleet/probe';
import { displayCommand, isPassing, onPipe, redact, secretsOf } from '@mcp-fleet/probe';
import {
  type Attributes,
  context,
  isSpanContextValid,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_NETWORK_PROTOCOL_NAME,
  ATTR_NETWORK_TRANSPORT,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';

/** The MCP and JSON-RPC attribute names (incubating in semconv; spelled out so a rename there is a choice here). */
export const MCP_ATTR = {
  methodName: 'mcp.method.name',
  protocolVersion: 'mcp.protocol.version',
  sessionId: 'mcp.session.id',
  jsonRpcRequestId: 'jsonrpc.request.id',
  rpcResponseStatusCode: 'rpc.response.status_code',
} as const;

/** Our own attributes: what an operator searches traces by. */
export const FLEET_ATTR = {
  region: 'mcp_fleet.region',
  jobId: 'mcp_fleet.job.id',
  serverId: 'mcp_fleet.server.id',
  serverName: 'mcp_fleet.server.name',
  testId: 'mcp_fleet.test.id',
  agent: 'mcp_fleet.agent',
  outcome: 'mcp_fleet.outcome',
  requestedVersion: 'mcp_fleet.requested_version',
  negotiatedVersion: 'mcp_fleet.negotiated_version',
  previousRevision: 'mcp_fleet.previous_revision',
  requests: 'mcp_fleet.requests',
  checkId: 'mcp_fleet.check.id',
  checkLevel: 'mcp_fleet.check.level',
  checkStatus: 'mcp_fleet.check.status',
  era: 'mcp_fleet.era',
  conformancePass: 'mcp_fleet.conformance.pass',
  deliberate: 'mcp_fleet.deliberate',
  conformanceFailedMust: 'mcp_fleet.conformance.failed_must',
  surfaceHash: 'mcp_fleet.surface.hash',
  surfaceTruncated: 'mcp_fleet.surface.truncated',
  scriptPass: 'mcp_fleet.script.pass',
  scriptStepIndex: 'mcp_fleet.script.step.index',
  scriptStepStatus: 'mcp_fleet.script.step.status',
  /** A stdio server's command line (probe's displayCommand: never its env, which may hold secrets). */
  command: 'mcp_fleet.command',
} as const;

/**
 * `network.transport` (OTel): `pipe` for a stdio server's stdin and stdout, `tcp` for HTTP
 * (issue 20), on the probe span and on each request's child.
 */
export const TRANSPORT = { stdio: 'pipe', http: 'tcp' } as const;

/** Span events of a surface or script job: one per surface read, one per script step. */
export const SPAN_EVENTS = {
  surfaceRead: 'mcp.surface.read',
  scriptStep: 'mcp.script.step',
} as const;

export const SPAN_NAMES = {
  handshake: 'mcp.handshake',
  detection: 'mcp.detection',
  check: 'mcp.conformance.check',
} as const;

/** A URL fit for a span: no user name, password, query string or fragment. */
export function spanUrl(raw: string | URL): string {
  try {
    const u = new URL(raw);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.href;
  } catch {
    return '';
  }
}

function serverAttributes(raw: string): Attributes {
  try {
    const u = new URL(raw);
    const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    return { [ATTR_SERVER_ADDRESS]: u.hostname.replace(/^\[|\]$/g, ''), [ATTR_SERVER_PORT]: port };
  } catch {
    return {};
  }
}

export interface ProbeSpanJob {
  kind: 'handshake' | 'detection';
  jobId: string;
  region: string;
  serverId: string;
  serverName: string;
  testId: string | null;
  /** The whole URL; only its scheme, host, port and path go on a span, its credentials hide what the server echoes. */
  url?: string | undefined;
  /** A stdio server's command, instead of a URL: its command line goes on the span, its env values hide what the process echoes. */
  command?: { command: string; args: readonly string[]; env: Record<string, string> } | undefined;
  /** What the job asked for: `newest` or a revision (handshakes). */
  revision: string | null;
  /** Only to keep their values out of span messages; never recorded. */
  headers: Record<string, string>;
}

/** Keeps what the parent span reports from the exchanges it saw. */
export class ProbeSpan {
  readonly span: Span;
  readonly #tracer: Tracer;
  readonly #parent: ReturnType<typeof trace.setSpan>;
  readonly #secrets: string[];
  #sessionId: string | undefined;
  #answer: Exchange | undefined;

  constructor(tracer: Tracer, job: ProbeSpanJob, agent: string) {
    this.#tracer = tracer;
    // The probe's own redaction: header values and the URL's credentials, as sent and encoded.
    this.#secrets = job.command ? secretsOf(job.command.env) : secretsOf(job.headers, job.url);
    const target: Attributes = job.command
      ? {
          [ATTR_NETWORK_TRANSPORT]: TRANSPORT.stdio,
          [FLEET_ATTR.command]: redact(displayCommand(job.command), this.#secrets),
        }
      : {
          [ATTR_URL_FULL]: spanUrl(job.url ?? ''),
          ...serverAttributes(job.url ?? ''),
          [ATTR_NETWORK_TRANSPORT]: TRANSPORT.http,
        };
    const attributes: Attributes = {
      ...target,
      [FLEET_ATTR.region]: job.region,
      [FLEET_ATTR.jobId]: job.jobId,
      [FLEET_ATTR.serverId]: job.serverId,
      [FLEET_ATTR.serverName]: job.serverName,
      [FLEET_ATTR.agent]: agent,
    };
    if (job.testId) attributes[FLEET_ATTR.testId] = job.testId;
    if (job.revision) attributes[FLEET_ATTR.requestedVersion] = job.revision;
    // A new root: a probe is its own trace (the job's trace id is what the result points at).
    this.span = tracer.startSpan(SPAN_NAMES[job.kind], { kind: SpanKind.CLIENT, attributes, root: true });
    this.#parent = trace.setSpan(context.active(), this.span);
  }

  /** The trace id to store with the result, or null when the trace is not recorded anywhere. */
  get traceId(): string | null {
    const sc = this.span.spanContext();
    return isSpanContextValid(sc) && (sc.traceFlags & TraceFlags.SAMPLED) !== 0 ? sc.traceId : null;
  }

  /** One child per HTTP request, timed by the exchange itself. */
  exchange(ex: Exchange): void {
    if (ex.headers.sessionId && !this.#sessionId) this.#sessionId = ex.headers.sessionId;
    if (ex.response && ('result' in ex.response || 'error' in ex.response)) this.#answer = ex;
    // Not recorded (no OTLP endpoint, or not sampled): its children would not be either, and their
    // attributes (URLs parsed, values redacted) were 2–3% of a busy agent's CPU for nothing.
    if (!this.span.isRecording()) return;

    // What the server chose (a session id, a version, an answer's id, an SSE endpoint's URL) may
    // carry the credentials it was sent: redacted like every message.
    const secrets = this.#secrets;
    // A line over a stdio server's pipes has no URL, method or HTTP status: its transport says so.
    const attributes: Attributes = onPipe(ex)
      ? { [ATTR_NETWORK_TRANSPORT]: TRANSPORT.stdio }
      : {
          [ATTR_HTTP_REQUEST_METHOD]: ex.method,
          [ATTR_URL_FULL]: redact(spanUrl(ex.url), secrets),
          ...serverAttributes(ex.url),
          [ATTR_NETWORK_PROTOCOL_NAME]: 'http',
          [ATTR_NETWORK_TRANSPORT]: TRANSPORT.http,
        };
    if (ex.jsonRpcMethod) attributes[MCP_ATTR.methodName] = ex.jsonRpcMethod;
    if (ex.headers.protocolVersion)
      attributes[MCP_ATTR.protocolVersion] = redact(ex.headers.protocolVersion, secrets).slice(0, 64);
    if (ex.headers.sessionId) attributes[MCP_ATTR.sessionId] = redact(ex.headers.sessionId, secrets).slice(0, 200);
    Object.assign(attributes, rpcAttributes(ex, secrets));
    if (ex.status !== null) attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = ex.status;
    const errorType = ex.failure ?? (ex.status !== null && ex.status >= 400 ? String(ex.status) : undefined);
    if (errorType) attributes[ATTR_ERROR_TYPE] = errorType;
    // A conformance check's bad request, sent on purpose: its error answer is what the check wants, so the
    // span says what came back (error.type) without marking the trace as failing; its check's span judges it.
    if (ex.deliberate) attributes[FLEET_ATTR.deliberate] = true;

    const child = this.#tracer.startSpan(
      `${ex.method} ${ex.jsonRpcMethod ?? ''}`.trim(),
      { kind: SpanKind.CLIENT, attributes, startTime: ex.startedAt },
      this.#parent,
    );
    if (errorType && !ex.deliberate)
      child.setStatus({ code: SpanStatusCode.ERROR, message: redact(ex.error ?? errorType, this.#secrets) });
    child.end(ex.startedAt + ex.millis);
  }

  /**
   * One child per conformance check, timed by the runner. A failed MUST marks the span an error; a
   * failed SHOULD (a warning) keeps its status unset, its `mcp_fleet.check.status` says fail. The
   * message quotes the server: redacted like every span message.
   */
  check(check: CheckResult, startedAt: number, era: Era): void {
    const attributes: Attributes = {
      [FLEET_ATTR.checkId]: check.id,
      [FLEET_ATTR.checkLevel]: check.level,
      [FLEET_ATTR.checkStatus]: check.status,
      [FLEET_ATTR.era]: era,
      [FLEET_ATTR.requests]: check.requests,
    };
    const child = this.#tracer.startSpan(
      `${SPAN_NAMES.check} ${check.id}`,
      { kind: SpanKind.INTERNAL, attributes, startTime: startedAt },
      this.#parent,
    );
    if (check.status === 'fail' && check.level === 'MUST') {
      child.setAttribute(ATTR_ERROR_TYPE, 'conformance_must_failed');
      child.setStatus({ code: SpanStatusCode.ERROR, message: redact(check.message, this.#secrets) });
    }
    child.end(startedAt + check.millis);
  }

  /** One event per surface read: its era, revision, hash (or none) and what the reader said (redacted). */
  surfaceRead(read: SurfaceRead): void {
    const attributes: Attributes = { [FLEET_ATTR.era]: read.era, [FLEET_ATTR.requests]: read.requests };
    if (read.revision) attributes[FLEET_ATTR.negotiatedVersion] = read.revision.slice(0, 64);
    if (read.snapshot) {
      attributes[FLEET_ATTR.surfaceHash] = read.snapshot.hash;
      attributes[FLEET_ATTR.surfaceTruncated] = read.snapshot.truncated;
    }
    attributes['mcp_fleet.message'] = redact(read.message, this.#secrets).slice(0, 500);
    this.span.addEvent(SPAN_EVENTS.surfaceRead, attributes);
  }

  /** One event per script step, and the script's pass on the span. */
  script(run: ScriptRun): void {
    this.span.setAttribute(FLEET_ATTR.scriptPass, run.pass);
    for (const step of run.steps)
      this.span.addEvent(SPAN_EVENTS.scriptStep, {
        [FLEET_ATTR.scriptStepIndex]: step.index,
        [FLEET_ATTR.scriptStepStatus]: step.status,
        [MCP_ATTR.methodName]: step.method,
        'mcp_fleet.message': redact(step.message, this.#secrets).slice(0, 500),
      });
  }

  /** `conformance`: the checks run after it (a conformance-depth job whose handshake passed); `otherRequests`: its surface reads' and script's. */
  endHandshake(run: HandshakeRun, conformance: ConformanceRun | null = null, otherRequests = 0): void {
    const version = run.negotiated ?? run.requested;
    const attributes: Attributes = {
      [FLEET_ATTR.outcome]: run.outcome,
      // Every request of the job: its surface reads' and script's too (`otherRequests`).
      [FLEET_ATTR.requests]: run.requests + (conformance?.requests ?? 0) + otherRequests,
    };
    if (conformance) {
      attributes[FLEET_ATTR.conformancePass] = conformance.pass;
      attributes[FLEET_ATTR.conformanceFailedMust] = conformance.checks.filter(
        (c) => c.status === 'fail' && c.level === 'MUST',
      ).length;
      if (conformance.protocol.era) attributes[FLEET_ATTR.era] = conformance.protocol.era;
    }
    if (version) attributes[MCP_ATTR.protocolVersion] = version.slice(0, 64);
    if (run.requested) attributes[FLEET_ATTR.requestedVersion] = run.requested;
    if (run.negotiated) attributes[FLEET_ATTR.negotiatedVersion] = run.negotiated.slice(0, 64);
    if (run.previousRevision) attributes[FLEET_ATTR.previousRevision] = run.previousRevision;
    const decisive = run.evidence ? { status: run.evidence.status, rpcCode: run.evidence.jsonRpcErrorCode } : undefined;
    this.#endWith(attributes, decisive, isPassing(run.outcome) ? undefined : run.outcome, run.message);
  }

  endDetection(detection: Detection): void {
    const attributes: Attributes = {
      [FLEET_ATTR.outcome]: detection.outcome,
      [FLEET_ATTR.requests]: detection.requests,
    };
    if (detection.newestSupported) {
      attributes[MCP_ATTR.protocolVersion] = detection.newestSupported;
      attributes[FLEET_ATTR.negotiatedVersion] = detection.newestSupported;
    }
    const failed = detection.outcome === 'DETECTED' ? undefined : detection.outcome;
    this.#endWith(attributes, undefined, failed, failed ? `detection: ${detection.outcome}` : undefined);
  }

  /** The probe itself failed (an agent fault or the hard guard): the span says so and ends. */
  endWithError(errorType: string, message: string): void {
    this.#endWith({ [FLEET_ATTR.outcome]: errorType }, undefined, errorType, message);
  }

  /** `decisive`: the failing reply (a run's evidence); without one, the last JSON-RPC answer speaks for the probe. */
  #endWith(
    attributes: Attributes,
    decisive: { status: number | null; rpcCode: number | null } | undefined,
    errorType: string | undefined,
    message?: string,
  ): void {
    if (this.#sessionId) attributes[MCP_ATTR.sessionId] = redact(this.#sessionId, this.#secrets).slice(0, 200);
    const answer = this.#answer;
    if (answer) Object.assign(attributes, rpcAttributes(answer, this.#secrets));
    if (decisive) {
      delete attributes[MCP_ATTR.rpcResponseStatusCode];
      if (decisive.rpcCode !== null) attributes[MCP_ATTR.rpcResponseStatusCode] = String(decisive.rpcCode);
    }
    const status = decisive ? decisive.status : (answer?.status ?? null);
    if (status !== null) attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = status;
    if (errorType) {
      attributes[ATTR_ERROR_TYPE] = errorType;
      this.span.setStatus({
        code: SpanStatusCode.ERROR,
        ...(message ? { message: redact(message, this.#secrets) } : {}),
      });
    }
    this.span.setAttributes(attributes);
    this.span.end();
  }
}

/** `jsonrpc.request.id` of an answer, and `rpc.response.status_code` when the answer is a JSON-RPC error. */
function rpcAttributes(ex: Exchange, secrets: readonly string[]): Attributes {
  const out: Attributes = {};
  const r = ex.response;
  if (!r) return out;
  if ('id' in r && r.id !== null && r.id !== undefined)
    out[MCP_ATTR.jsonRpcRequestId] = redact(String(r.id), secrets).slice(0, 100);
  if ('error' in r) out[MCP_ATTR.rpcResponseStatusCode] = String(r.error.code);
  return out;
}
