// A conformance run's shape: the checks a connection on its era is judged by (conformance-checks.ts),
// each passed, failed or skipped with a reason, and whether the server passes (no MUST failed).
// The CLI's table, JSON and JUnit report, the agent's spans and metrics and the monitor's per-check
// state all read this one shape.
import type { CheckId, CheckLevel } from '../conformance-checks';
import type { ProbeOptions } from '../context';
import type { Evidence } from '../evidence';
import type { ServerInfo } from '../opening';
import type { Outcome } from '../outcomes';
import type { Era, Revision } from '../revisions';

/** `auto`: discover first, legacy fallback; `legacy`: the newest legacy revision the server speaks; or one revision. */
export type ConformanceProtocol = 'auto' | 'legacy' | Revision;

export type CheckStatus = 'pass' | 'fail' | 'skip';

export interface CheckResult {
  id: CheckId;
  level: CheckLevel;
  status: CheckStatus;
  /** One line: what was seen (fail), why it could not run (skip), what held (pass). */
  message: string;
  /** The reply that decided a failure: redacted and cut to the probe's bounds. */
  evidence?: Evidence;
  millis: number;
  /** Requests this check sent. */
  requests: number;
}

export interface ConformanceRun {
  /** The URL as it may be shown (credentials masked), or `stdio: <command line>` (no environment). */
  target: string;
  protocol: { requested: ConformanceProtocol; negotiated: string | null; era: Era | null };
  /** Connected, and no MUST check failed. */
  pass: boolean;
  /** How the connection went (`success` when it opened); the checks run only on an open one. */
  outcome: Outcome;
  message: string;
  serverInfo: ServerInfo | null;
  checks: CheckResult[];
  requests: number;
  millis: number;
  /** The reply that ended a connection that did not open. */
  evidence: Evidence | null;
}

export interface ConformanceOptions extends ProbeOptions {
  /** Default `auto`. */
  protocol?: ConformanceProtocol;
  /** Raw probe requests (malformed JSON, wrong headers…); `--no-probe` turns them off. Default true. */
  probe?: boolean;
  /** Called as each check ends, e.g. to make its span. */
  onCheck?: (check: CheckResult, startedAt: number) => void;
}

/** The most requests one run sends: every check's own, with room for the opening. */
export const CONFORMANCE_MAX_REQUESTS = 64;
/** The whole run's deadline unless the caller gives one (`timeoutMs` bounds each request). */
export const CONFORMANCE_MAX_MS = 60_000;

/** Counts by status, failures split by level, for tables and metrics. */
export function tally(run: Pick<ConformanceRun, 'checks'>): {
  passed: number;
  failedMust: number;
  warnings: number;
  skipped: number;
} {
  const t = { passed: 0, failedMust: 0, warnings: 0, skipped: 0 };
  for (const c of run.checks) {
    if (c.status === 'pass') t.passed += 1;
    else if (c.status === 'skip') t.skipped += 1;
    else if (c.level === 'MUST') t.failedMust += 1;
    else t.warnings += 1;
  }
  return t;
}
