// `mcp-fleet check --format conformance`: the run in the official conformance suite's check shape
// (github.com/modelcontextprotocol/conformance, src/types.ts `ConformanceCheck`: id, name,
// description, status SUCCESS | FAILURE | WARNING | SKIPPED | INFO, timestamp, specReferences
// [{id, url?}], details, errorMessage), so our results can sit beside the suite's checks.json.
import { type CheckResult, type ConformanceRun, checkById } from '@mcp-fleet/probe';
import { connected } from './check-report';

export type OfficialStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED';

export interface OfficialCheck {
  id: string;
  name: string;
  description: string;
  status: OfficialStatus;
  timestamp: string;
  specReferences: { id: string }[];
  errorMessage?: string;
  details: Record<string, unknown>;
}

/** A MUST failure is the suite's FAILURE; a SHOULD failure its WARNING. */
export function officialStatus(c: Pick<CheckResult, 'status' | 'level'>): OfficialStatus {
  if (c.status === 'pass') return 'SUCCESS';
  if (c.status === 'skip') return 'SKIPPED';
  return c.level === 'MUST' ? 'FAILURE' : 'WARNING';
}

/**
 * Our check ids are the name (the suite's names are display words; ours are the stable ids of seed
 * 000), the rule is the description, and the spec section the one reference (the suite's `url` is
 * optional, and our table names sections, not addresses). errorMessage is there when the check did
 * not pass: what was seen, or why it was skipped. `timestamp` is when the report was made: the run
 * keeps no per-check clock time.
 */
export function officialChecks(run: ConformanceRun, now = new Date()): OfficialCheck[] {
  const timestamp = now.toISOString();
  if (!connected(run))
    return [
      {
        id: 'connection',
        name: 'connection',
        description: `The server accepts a connection (protocol ${run.protocol.requested})`,
        status: 'FAILURE',
        timestamp,
        specReferences: [{ id: 'basic/lifecycle: initialization' }],
        errorMessage: run.message,
        details: { outcome: run.outcome, ...(run.evidence ? { evidence: run.evidence } : {}) },
      },
    ];
  return run.checks.map((c) => {
    const def = checkById(c.id);
    const status = officialStatus(c);
    return {
      id: c.id,
      name: c.id,
      description: def?.rule ?? c.message,
      status,
      timestamp,
      specReferences: def ? [{ id: def.spec }] : [],
      ...(status === 'SUCCESS' ? {} : { errorMessage: c.message }),
      details: {
        level: c.level,
        era: run.protocol.era,
        negotiated: run.protocol.negotiated,
        message: c.message,
        ...(c.evidence ? { evidence: c.evidence } : {}),
      },
    };
  });
}
