// crossEra as a library call against real servers: its default protocols come from detection, its
// cost is bounded, and truncated or hostile surfaces are compared without inventing differences.
import { DUAL_ERA_CHANGED_TOOL, DUAL_ERA_LEGACY_ONLY_TOOL } from '@mcp-fleet/fleet-sim';
import { describe, expect, it } from 'vitest';
import {
  CROSS_ERA_CHECK_IDS,
  type CrossEraRun,
  crossEra,
  DETECTION_MAX_REQUESTS,
  HANDSHAKE_MAX_REQUESTS,
  SURFACE_READ_MAX_REQUESTS,
} from '../src';
import { useSim } from './use-sim';

const sim = useSim({ only: ['catalogue', 'dual-era-diff', 'hostile-surface', 'legacy-sse'] });
const url = (name: string) => sim().target(name).url;
const status = (run: CrossEraRun) => Object.fromEntries(run.checks.map((c) => [c.id, c.status]));

describe('crossEra', () => {
  it('compares every revision detection finds, within its budget, and passes a server that serves one surface', async () => {
    const run = await crossEra(url('catalogue'));
    expect(run.protocols.map((p) => [p.protocol, p.negotiated, p.era, p.outcome])).toEqual([
      ['2025-03-26', '2025-03-26', 'legacy', 'success'],
      ['2025-06-18', '2025-06-18', 'legacy', 'success'],
      ['2025-11-25', '2025-11-25', 'legacy', 'success'],
      ['2026-07-28', '2026-07-28', 'modern', 'success'],
    ]);
    expect(run.checks.map((c) => c.id)).toEqual([...CROSS_ERA_CHECK_IDS]);
    expect(Object.values(status(run)).every((s) => s === 'pass')).toBe(true);
    expect(run.pass).toBe(true);
    // The requests it reports are the requests the server received, and stay within the bounds.
    expect(run.requests).toBe(sim().requests('catalogue').length);
    expect(run.requests).toBeLessThanOrEqual(
      DETECTION_MAX_REQUESTS + 4 * SURFACE_READ_MAX_REQUESTS + HANDSHAKE_MAX_REQUESTS,
    );
  });

  it('names the missing tool and the changed one with the protocol that disagrees', async () => {
    const run = await crossEra(url('dual-era-diff'), { protocols: ['2026-07-28', '2025-11-25'] });
    // Compared oldest first, whatever order they were given in.
    expect(run.protocols.map((p) => p.protocol)).toEqual(['2025-11-25', '2026-07-28']);
    const tools = run.checks.find((c) => c.id === 'tools_match')!;
    const definitions = run.checks.find((c) => c.id === 'tool_definitions_match')!;
    expect(tools.differences).toEqual([
      {
        kind: 'tool',
        name: DUAL_ERA_LEGACY_ONLY_TOOL,
        era: '2026-07-28',
        detail: 'not listed in 2026-07-28 (listed in 2025-11-25)',
      },
    ]);
    expect(definitions.differences.map((d) => [d.name, d.era])).toEqual([[DUAL_ERA_CHANGED_TOOL, '2026-07-28']]);
    expect(run.pass).toBe(false);
  });

  it('an HTTP+SSE-only server: one protocol, the comparisons skip, auto is not asked', async () => {
    const run = await crossEra(url('legacy-sse'));
    expect(run.protocols.map((p) => p.protocol)).toEqual(['2024-11-05']);
    expect(status(run)).toMatchObject({ cross_era_connect: 'pass', tools_match: 'skip', auto_picks_modern: 'skip' });
    expect(run.pass).toBe(true);
  });

  it('hostile lists in both eras (the same in each) compare equal; nothing throws', async () => {
    const run = await crossEra(url('hostile-surface'));
    expect(run.protocols.map((p) => p.protocol)).toEqual(['2025-11-25', '2026-07-28']);
    expect(status(run)).toMatchObject({
      cross_era_connect: 'pass',
      tools_match: 'pass',
      tool_definitions_match: 'pass',
    });
    for (const c of run.checks) expect(c.message.length).toBeLessThanOrEqual(300);
  });

  it('a surface cut to fit a snapshot in both eras: the items beyond the cut are not called missing', async () => {
    const big = url('hostile-surface').replace(/\/mcp$/, '/big');
    const run = await crossEra(big, { protocols: ['2025-11-25', '2026-07-28'] });
    expect(status(run)).toMatchObject({
      cross_era_connect: 'pass',
      tools_match: 'pass',
      tool_definitions_match: 'pass',
    });
    expect(run.protocols.every((p) => /cut to fit a snapshot/.test(p.message))).toBe(true);
  });
});
