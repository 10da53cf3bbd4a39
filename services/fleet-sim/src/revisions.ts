// The sim speaks the revisions of probe's one table (which also orders them and names each
// generation's revisions); the only rule kept here is the SDKs' newest-first offer.
import { orderRevisions, type Revision } from '@mcp-fleet/probe';

export { isRevision, REVISION_NAMES as REVISIONS, type Revision } from '@mcp-fleet/probe';

/** Newest first: the SDKs counter-offer the first legacy entry of `supportedProtocolVersions`. */
export function newestFirst(revisions: readonly Revision[]): Revision[] {
  return orderRevisions(revisions).reverse();
}
