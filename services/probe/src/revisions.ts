// The one table of MCP protocol revisions. Everything that orders, labels or opens a revision
// reads it from here; adding a revision is adding one entry (oldest first).

export type Generation = 'HTTP+SSE transport' | 'sessions' | 'stateless';
export type Era = 'legacy' | 'modern';
/** When a client sends the `MCP-Protocol-Version` header at this revision. */
export type ProtocolVersionHeader = 'never' | 'after-initialize' | 'always';

export interface RevisionInfo {
  readonly revision: string;
  readonly generation: Generation;
  readonly era: Era;
  readonly note: string;
  readonly protocolVersionHeader: ProtocolVersionHeader;
}

export const REVISIONS = [
  {
    revision: '2024-11-05',
    generation: 'HTTP+SSE transport',
    era: 'legacy',
    note: 'deprecated, eligible for removal',
    protocolVersionHeader: 'never',
  },
  {
    revision: '2025-03-26',
    generation: 'sessions',
    era: 'legacy',
    note: 'not the current revision',
    protocolVersionHeader: 'never',
  },
  {
    revision: '2025-06-18',
    generation: 'sessions',
    era: 'legacy',
    note: 'not the current revision',
    protocolVersionHeader: 'after-initialize',
  },
  {
    revision: '2025-11-25',
    generation: 'sessions',
    era: 'legacy',
    note: 'not the current revision',
    protocolVersionHeader: 'after-initialize',
  },
  {
    revision: '2026-07-28',
    generation: 'stateless',
    era: 'modern',
    note: 'current',
    protocolVersionHeader: 'always',
  },
] as const satisfies readonly RevisionInfo[];

export type Revision = (typeof REVISIONS)[number]['revision'];

/** Generations, newest first: the order a lookup tries them in. */
export const GENERATIONS_NEWEST_FIRST: readonly Generation[] = ['stateless', 'sessions', 'HTTP+SSE transport'];

const byRevision = new Map<string, RevisionInfo>(REVISIONS.map((r) => [r.revision, r]));

export const REVISION_NAMES: readonly Revision[] = REVISIONS.map((r) => r.revision);
export const CURRENT_REVISION: Revision = REVISIONS[REVISIONS.length - 1]!.revision;

export function isRevision(value: unknown): value is Revision {
  return typeof value === 'string' && byRevision.has(value);
}

export function revisionInfo(revision: Revision): RevisionInfo {
  const info = byRevision.get(revision);
  if (!info) throw new Error(`unknown protocol revision ${revision}`);
  return info;
}

/** Position in the table: larger is newer. Unknown strings have no place (-1). */
export function revisionRank(revision: string): number {
  return REVISION_NAMES.indexOf(revision as Revision);
}

/** The revisions of one generation, oldest first. */
export function revisionsOf(generation: Generation): Revision[] {
  return REVISION_NAMES.filter((r) => revisionInfo(r).generation === generation);
}

/** The newest revision of a generation: the one a lookup offers when it tries that generation. */
export function newestOf(generation: Generation): Revision {
  const newest = revisionsOf(generation).at(-1);
  if (!newest) throw new Error(`no protocol revision of the ${generation} generation`);
  return newest;
}

/** Deduplicated, in table order (oldest → newest); throws on a string that is not a revision. */
export function orderRevisions(revisions: readonly string[]): Revision[] {
  for (const revision of revisions) {
    if (!isRevision(revision)) throw new Error(`unknown protocol revision: ${revision}`);
  }
  return REVISION_NAMES.filter((revision) => revisions.includes(revision));
}

/** The era of a string that may be a revision; null for anything else (nothing recorded yet). */
export function eraOf(revision: string | null | undefined): Era | null {
  return isRevision(revision) ? revisionInfo(revision).era : null;
}

/** Negative when a is older than b; both must be known revisions. */
export function compareRevisions(a: Revision, b: Revision): number {
  return revisionRank(a) - revisionRank(b);
}

/** The newest known revision among some strings (unknown ones are ignored), or undefined. */
export function newestKnown(candidates: readonly string[]): Revision | undefined {
  let best: Revision | undefined;
  for (const c of candidates) if (isRevision(c) && (!best || compareRevisions(c, best) > 0)) best = c;
  return best;
}

/** The label the app shows for a revision, e.g. `2026-07-28 · stateless · current`. */
export function revisionLabel(revision: Revision): string {
  const r = revisionInfo(revision);
  return `${r.revision} · ${r.generation} · ${r.note}`;
}
