// The exit status of a detection or a handshake run: 0 when it went well, and for a failure the
// code of its cause (probe's cause.ts), so a script can tell "down" from "needs a token" from "not
// MCP" without parsing text. The codes are EXIT's (usage.ts), documented in the README.
import {
  type Cause,
  type ConformanceRun,
  causeOf,
  type Detection,
  type HandshakeRun,
  isPassing,
} from '@mcp-fleet/probe';
import { EXIT } from './usage';

const BY_CAUSE: Record<Cause, number> = {
  unreachable: EXIT.unreachable,
  dns: EXIT.dns,
  tls: EXIT.tls,
  auth_required: EXIT.authRequired,
  server_error: EXIT.serverError,
  timeout: EXIT.timeout,
  policy: EXIT.policy,
};

export function detectionExit(d: Detection): number {
  if (d.outcome === 'DETECTED') return EXIT.ok;
  if (d.outcome === 'RATE_LIMITED') return EXIT.rateLimited;
  return d.cause ? BY_CAUSE[d.cause] : EXIT.failed;
}

export function runExit(run: HandshakeRun): number {
  if (isPassing(run.outcome)) return EXIT.ok;
  if (run.outcome === 'rate_limited') return EXIT.rateLimited;
  const cause = causeOf(run.evidence);
  if (cause) return BY_CAUSE[cause];
  // A run can also time out between exchanges (an event stream that never sends its endpoint).
  return run.outcome === 'timeout' ? EXIT.timeout : EXIT.failed;
}

/**
 * A conformance run's status (issue 15's contract): 0 when it passes, 1 when a MUST check failed or
 * the connection never opened. Unlike handshake, no code per cause: `check` answers "will clients
 * work", and a run that could not connect says its cause in its output instead.
 */
export function checkExit(run: Pick<ConformanceRun, 'pass'>): number {
  return run.pass ? EXIT.ok : EXIT.failed;
}
