// Every check is able to fail: the conformance runner against fleet-sim's defect targets (a real
// SDK server with one deliberate defect in front of it), each of which must fail the check it is
// named for; and the clean SDK baselines behind them fail no MUST.
import { CONFORMANCE_DEFECTS, DEFECT_TARGET_NAMES } from '@mcp-fleet/fleet-sim';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_CHECKS, type ConformanceRun, conformance } from '../src';
import { useSim } from './use-sim';

const CLEAN = ['catalogue', 'catalogue-legacy', 'modern', 'sessions-2025-11-25'];
const fleet = useSim({ only: [...CLEAN, ...DEFECT_TARGET_NAMES] });
const url = (name: string) => fleet().target(name).url;

const failedMust = (run: ConformanceRun) =>
  run.checks.filter((c) => c.status === 'fail' && c.level === 'MUST').map((c) => `${c.id}: ${c.message}`);

describe('the defect targets', () => {
  it('cover every check of the table', () => {
    const covered = new Set(CONFORMANCE_DEFECTS.map((d) => d.check));
    // The stdio transport's own rules are failed by the hostile stdio servers (stdio-conformance.test.ts).
    const http = CONFORMANCE_CHECKS.filter((c) => !('stdio' in c));
    expect(http.filter((c) => !covered.has(c.id)).map((c) => c.id)).toEqual([]);
  });

  // One run per target, shared by the rows that name it.
  const runs = new Map<string, Promise<ConformanceRun>>();
  const runOf = (target: string) => {
    let run = runs.get(target);
    if (run === undefined) {
      run = conformance(url(target));
      runs.set(target, run);
    }
    return run;
  };

  for (const { target, check, defect } of CONFORMANCE_DEFECTS) {
    it(`${target} fails ${check} (${defect})`, async () => {
      const run = await runOf(target);
      expect(run.outcome, run.message).toBe('success');
      const result = run.checks.find((c) => c.id === check);
      expect(result, `${check} did not run on ${target} (${run.protocol.era})`).toBeDefined();
      expect(result!.status, result!.message).toBe('fail');
      // A failing MUST fails the run; a failing SHOULD is a warning.
      if (result!.level === 'MUST') expect(run.pass).toBe(false);
    });
  }
});

describe('the clean SDK baselines', () => {
  for (const target of CLEAN) {
    it(`${target} fails no MUST`, async () => {
      const run = await conformance(url(target));
      expect(run.outcome, run.message).toBe('success');
      expect(failedMust(run)).toEqual([]);
      expect(run.pass).toBe(true);
    });
  }

  it('the catalogue is judged on a paged list and a resource, and passes every rule', async () => {
    const run = await conformance(url('catalogue'));
    expect(run.protocol.era).toBe('modern');
    const notPassed = run.checks.filter((c) => c.status !== 'pass').map((c) => [c.id, c.status, c.message]);
    // All three capabilities declared: nothing undeclared to ask for.
    expect(notPassed).toEqual([['undeclared_capability_not_found', 'skip', expect.any(String)]]);
  });
});
