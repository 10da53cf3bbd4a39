// Placeholder until the runner lands (issue 15): the shape is in run.ts.
import type { ConformanceOptions, ConformanceRun } from './run';

export async function conformance(_url: string | URL, _opts: ConformanceOptions = {}): Promise<ConformanceRun> {
  throw new Error('conformance runner: not yet built');
}
