// Revision colours, beside the probe's one revision table (labels, eras and order come from there).
import { REVISION_NAMES, type Revision } from '@mcp-fleet/probe';

export { CURRENT_REVISION, eraOf, REVISION_NAMES, revisionInfo, revisionLabel } from '@mcp-fleet/probe';
export type { Revision };

/** A CSS colour per revision, oldest to newest; the palette lives in globals.css (light and dark). */
export function revisionColor(r: string): string {
  const i = REVISION_NAMES.indexOf(r as Revision);
  return i < 0 ? 'var(--muted)' : `var(--rev-${i})`;
}
