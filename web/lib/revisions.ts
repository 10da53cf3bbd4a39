// Revision labels and colours, from the probe's one revision table.
import { REVISION_NAMES, type Revision, revisionInfo } from '@mcp-fleet/probe';

export type { Revision };
export { REVISION_NAMES, revisionInfo };

/** `2026-07-28 · stateless · current`: the picker's form (docs/protocol.md#revisions-generations-and-eras). */
export function revisionLabel(r: Revision): string {
  const info = revisionInfo(r);
  return `${r} · ${info.generation} · ${info.note}`;
}

/** A CSS colour per revision, oldest to newest; the palette lives in globals.css (light and dark). */
export function revisionColor(r: string): string {
  const i = REVISION_NAMES.indexOf(r as Revision);
  return i < 0 ? 'var(--muted)' : `var(--rev-${i})`;
}

export function eraOf(r: string | null | undefined): 'legacy' | 'modern' | null {
  return r && (REVISION_NAMES as string[]).includes(r) ? revisionInfo(r as Revision).era : null;
}

export const CURRENT_REVISION = REVISION_NAMES[REVISION_NAMES.length - 1]!;
