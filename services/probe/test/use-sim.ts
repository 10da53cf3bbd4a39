// One simulated fleet per test file, its request log cleared before each test.
import { type Sim, type SimOptions, startSim } from '@mcp-fleet/fleet-sim';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/** Start the fleet for this file; the returned function gives it to tests. */
export function useSim(opts?: SimOptions): () => Sim {
  let sim: Sim | undefined;
  beforeAll(async () => {
    sim = await startSim(opts);
  });
  afterAll(async () => {
    await sim?.close();
  });
  beforeEach(() => sim?.resetRequests());
  return () => {
    if (!sim) throw new Error('the simulated fleet is not running');
    return sim;
  };
}
