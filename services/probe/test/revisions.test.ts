import { describe, expect, it } from 'vitest';
import {
  CURRENT_REVISION,
  compareRevisions,
  isRevision,
  newestKnown,
  REVISION_NAMES,
  REVISIONS,
  revisionInfo,
  revisionLabel,
} from '../src';

describe('the revision table', () => {
  it('lists the five revisions oldest first, ordered by the table and not by string', () => {
    expect(REVISION_NAMES).toEqual(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28']);
    expect(CURRENT_REVISION).toBe('2026-07-28');
    expect(compareRevisions('2025-03-26', '2025-11-25')).toBeLessThan(0);
    expect(compareRevisions('2026-07-28', '2024-11-05')).toBeGreaterThan(0);
    expect(newestKnown(['2025-06-18', 'garbage', '2025-11-25', '2024-10-07'])).toBe('2025-11-25');
    expect(newestKnown(['2024-10-07'])).toBeUndefined();
    expect(isRevision('2024-10-07')).toBe(false);
  });

  // The rules: docs/protocol.md#revisions-generations-and-eras and #the-mcp-protocol-version-header.
  it('carries generation, era, note and the MCP-Protocol-Version header rule (docs/protocol.md: revisions, the header)', () => {
    const rows = REVISIONS.map((r) => [r.revision, r.generation, r.era, r.note, r.protocolVersionHeader]);
    expect(rows).toEqual([
      ['2024-11-05', 'HTTP+SSE transport', 'legacy', 'deprecated, eligible for removal', 'never'],
      ['2025-03-26', 'sessions', 'legacy', 'not the current revision', 'never'],
      ['2025-06-18', 'sessions', 'legacy', 'not the current revision', 'after-initialize'],
      ['2025-11-25', 'sessions', 'legacy', 'not the current revision', 'after-initialize'],
      ['2026-07-28', 'stateless', 'modern', 'current', 'always'],
    ]);
    expect(revisionLabel('2026-07-28')).toBe('2026-07-28 · stateless · current');
    expect(() => revisionInfo('1999-01-01' as never)).toThrow(/unknown protocol revision/);
  });
});
