// Region disagreement, written by ingest in the run's own transaction (under the test row's lock,
// so runs of one test from different regions take turns and at most one disagreement is open):
// after a newest-supported test's state moved, its regions' current revisions are compared. Two or
// more distinct revisions open one (or keep its `revisions` current); one or none ends it. The reads
// are in disagreements.ts.
import { isRevision } from '@mcp-fleet/probe';
import { and, eq, inArray, isNotNull, isNull } from 'drizzle-orm';
import type { Db } from './db';
import { regionDisagreements, testStates } from './schema';

export interface DisagreementChange {
  /** This run opened it. */
  started: boolean;
  /** This run ended it (regions agree again). */
  ended: boolean;
  /** Each region's revision (for an ended one: the last seen while they disagreed). */
  revisions: Record<string, string>;
  startedAt: Date;
  endedAt: Date | null;
}

export interface DisagreementInput {
  serverId: string;
  testId: string;
  /** The run's finishedAt. */
  at: Date;
  /** The server's regions (null: every region): a state from any other region is not the server's and is not compared. */
  regions: readonly string[] | null;
}

/** Open, update or end the test's disagreement; null when there is none and none ended. */
export async function updateDisagreement(tx: Db, input: DisagreementInput): Promise<DisagreementChange | null> {
  const states = await tx
    .select({ region: testStates.region, revision: testStates.currentRevision })
    .from(testStates)
    .where(
      and(
        eq(testStates.testId, input.testId),
        isNotNull(testStates.currentRevision),
        input.regions ? inArray(testStates.region, [...input.regions]) : undefined,
      ),
    );
  const revisions: Record<string, string> = {};
  for (const s of [...states].sort((a, b) => a.region.localeCompare(b.region)))
    if (isRevision(s.revision)) revisions[s.region] = s.revision;
  const [open] = await tx
    .select()
    .from(regionDisagreements)
    .where(and(eq(regionDisagreements.testId, input.testId), isNull(regionDisagreements.endedAt)));

  if (new Set(Object.values(revisions)).size >= 2) {
    if (!open) {
      await tx.insert(regionDisagreements).values({
        serverId: input.serverId,
        testId: input.testId,
        revisions,
        startedAt: input.at,
        updatedAt: input.at,
      });
      return { started: true, ended: false, revisions, startedAt: input.at, endedAt: null };
    }
    if (JSON.stringify(sorted(open.revisions)) !== JSON.stringify(revisions))
      await tx
        .update(regionDisagreements)
        .set({ revisions, updatedAt: input.at })
        .where(eq(regionDisagreements.id, open.id));
    return { started: false, ended: false, revisions, startedAt: open.startedAt, endedAt: null };
  }
  if (!open) return null;
  // An agent's clock behind the one that opened it must not make it end before it started.
  const endedAt = new Date(Math.max(input.at.getTime(), open.startedAt.getTime()));
  await tx.update(regionDisagreements).set({ endedAt, updatedAt: endedAt }).where(eq(regionDisagreements.id, open.id));
  return { started: false, ended: true, revisions: sorted(open.revisions), startedAt: open.startedAt, endedAt };
}

/** A stored map by region name (jsonb keeps its own key order). */
function sorted(value: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const region of Object.keys(value ?? {}).sort()) out[region] = value[region]!;
  return out;
}
