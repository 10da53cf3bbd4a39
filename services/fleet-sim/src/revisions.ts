// The sim speaks the revisions of probe's one table; these helpers only shape lists of them for
// the SDK servers (order, newest, the generation each opens with).
import { isRevision, REVISION_NAMES, type Revision, revisionInfo } from '@mcp-fleet/probe';

export { isRevision, REVISION_NAMES as REVISIONS, type Revision };

/** Revisions that open with POST `initialize` over Streamable HTTP (the sessions generation). */
export const SESSION_REVISIONS: readonly Revision[] = REVISION_NAMES.filter(
  (r) => revisionInfo(r).generation === 'sessions',
);
/** The revision that opens with GET on an event stream (HTTP+SSE transport). */
export const SSE_REVISION: Revision = REVISION_NAMES.find((r) => revisionInfo(r).generation === 'HTTP+SSE transport')!;
/** The revision that opens with `server/discover`. */
export const MODERN_REVISION: Revision = REVISION_NAMES.find((r) => revisionInfo(r).generation === 'stateless')!;

/** Deduplicated, in table order (oldest → newest); throws on a string that is not a revision. */
export function orderRevisions(revisions: readonly string[]): Revision[] {
  for (const revision of revisions) {
    if (!isRevision(revision)) throw new Error(`unknown protocol revision: ${revision}`);
  }
  return REVISION_NAMES.filter((revision) => revisions.includes(revision));
}

export function newestOf(revisions: readonly Revision[]): Revision | null {
  return orderRevisions(revisions).at(-1) ?? null;
}

/** Newest first: the SDKs counter-offer the first legacy entry of `supportedProtocolVersions`. */
export function newestFirst(revisions: readonly Revision[]): Revision[] {
  return orderRevisions(revisions).reverse();
}
