// The current revisions of some tests, as the store has them now: a scheduling control reads them
// back before it publishes their jobs, because another control may have ingested their last runs.
// One index scan of test_states_pk for the tests asked about, whatever the fleet's size.
import { and, isNotNull, sql } from 'drizzle-orm';
import type { Db } from './db';
import { testStates } from './schema';

/** `${testId}|${region}` → the current revision, for every region of these tests that has one. */
export async function currentRevisions(db: Db, testIds: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (testIds.length === 0) return out;
  const rows = await db
    .select({ testId: testStates.testId, region: testStates.region, revision: testStates.currentRevision })
    .from(testStates)
    .where(
      and(
        // One array parameter, however many tests are due (a list of parameters has a ceiling).
        sql`${testStates.testId} = any(${sql.param([...new Set(testIds)])}::uuid[])`,
        isNotNull(testStates.currentRevision),
      ),
    );
  for (const r of rows) if (r.revision) out.set(`${r.testId}|${r.region}`, r.revision);
  return out;
}
