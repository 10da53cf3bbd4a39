// The fleet's regions as the dashboard knows them: every region some test has run in.
import { type Db, testStates } from '@mcp-fleet/store';

export async function regionsOfFleet(db: Db): Promise<string[]> {
  const rows = await db.selectDistinct({ region: testStates.region }).from(testStates).orderBy(testStates.region);
  return rows.map((r) => r.region);
}
