// A conformance run as JSON: issue 15's `mcp-fleet check --json` object, which control's
// POST /api/check answers too (one shape for both faces, so it lives here, below them both). Pure.
import type { ConformanceRun } from './run';

/**
 * Issue 15's object (target, protocol, pass, checks with id, level, status, message and evidence
 * when there is some), plus outcome, message, requests and millis, so a run that could not connect
 * says why. A check's millis and requests stay out: the contract lists its keys.
 */
export function checkJson(run: ConformanceRun) {
  return {
    target: run.target,
    protocol: {
      requested: run.protocol.requested,
      negotiated: run.protocol.negotiated,
      era: run.protocol.era,
    },
    pass: run.pass,
    outcome: run.outcome,
    message: run.message,
    requests: run.requests,
    millis: run.millis,
    checks: run.checks.map((c) => ({
      id: c.id,
      level: c.level,
      status: c.status,
      message: c.message,
      ...(c.evidence ? { evidence: c.evidence } : {}),
    })),
  };
}
