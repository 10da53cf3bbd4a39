// The uptime rollup, written by ingest in the run's own transaction: one test_slots row per test and
// interval bucket (scheduledAt rounded down to the test's interval, so one slot of each region lands
// in one bucket), counting executions and successes. Read by uptime.ts; pruned by retention.ts.
import { sql } from 'drizzle-orm';
import type { Db } from './db';
import { testSlots } from './schema';

/** The bucket a slot falls in: scheduledAt rounded down to the interval. */
export function slotBucket(scheduledAt: Date, intervalMs: number): Date {
  const every = Math.max(1, Math.floor(intervalMs));
  return new Date(Math.floor(scheduledAt.getTime() / every) * every);
}

/** Count one execution (and one success when it passed) in its bucket. */
export async function countSlot(
  tx: Db,
  input: { testId: string; serverId: string; scheduledAt: Date; intervalMs: number; passing: boolean },
): Promise<void> {
  const success = input.passing ? 1 : 0;
  await tx
    .insert(testSlots)
    .values({
      testId: input.testId,
      serverId: input.serverId,
      bucket: slotBucket(input.scheduledAt, input.intervalMs),
      executions: 1,
      successes: success,
    })
    .onConflictDoUpdate({
      target: [testSlots.testId, testSlots.bucket],
      set: {
        executions: sql`${testSlots.executions} + 1`,
        successes: sql`${testSlots.successes} + ${success}`,
      },
    });
}
