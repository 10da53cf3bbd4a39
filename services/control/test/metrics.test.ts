// Control's registry on its own: what promtool and rate() read from it, without a database.
import { DEFAULT_JUDGEMENT } from '@mcp-fleet/config';
import type { TestConsensus } from '@mcp-fleet/store';
import { parseMetrics, seriesValue } from '@mcp-fleet/testkit';
import { describe, expect, it } from 'vitest';
import { createControlMetrics, regionsState } from '../src/metrics';

const sources = (poison: () => number) => ({
  poison,
  serverStates: async () => [
    { server: 'orders', region: 'eu-west', revision: '2025-11-25', era: 'legacy', up: true, failingPinnedTests: 0 },
    // A revision control does not know (stored from a server's answer) stays a bounded label.
    { server: 'odd', region: 'eu-west', revision: '1999-01-01', era: null, up: true, failingPinnedTests: 0 },
  ],
  agentsSeen: async () => [],
});

describe("control's metrics", () => {
  it('mcp_bus_poison_total is a counter that follows the bus count', async () => {
    let poison = 0;
    const { registry } = createControlMetrics(sources(() => poison));
    const scrape = async () => registry.metrics();
    expect(await scrape()).toContain('# TYPE mcp_bus_poison_total counter');
    expect(seriesValue(parseMetrics(await scrape()), 'mcp_bus_poison_total')).toBe(0);
    poison = 3;
    expect(seriesValue(parseMetrics(await scrape()), 'mcp_bus_poison_total')).toBe(3);
    expect(seriesValue(parseMetrics(await scrape()), 'mcp_bus_poison_total')).toBe(3);
    poison = 4;
    expect(seriesValue(parseMetrics(await scrape()), 'mcp_bus_poison_total')).toBe(4);
  });

  // Revisions in *_version labels: docs/protocol.md#handshake-metrics.
  it('names revisions negotiated_version, as the agents and the seed do, and bounds them', async () => {
    const { registry } = createControlMetrics(sources(() => 0));
    const samples = parseMetrics(await registry.metrics()).filter((s) => s.name === 'mcp_server_revision_info');
    expect(samples.map((s) => s.labels)).toEqual([
      { server: 'orders', region: 'eu-west', negotiated_version: '2025-11-25', era: 'legacy' },
      { server: 'odd', region: 'eu-west', negotiated_version: 'other', era: 'unknown' },
    ]);
  });

  it('serves no gauge named like a counter (prom-client’s nodejs_active_*_total)', async () => {
    const { registry } = createControlMetrics(sources(() => 0));
    const types = [...(await registry.metrics()).matchAll(/^# TYPE (\S+) (\S+)$/gm)];
    expect(types.filter(([, name, type]) => name!.endsWith('_total') && type !== 'counter').map(([, n]) => n)).toEqual(
      [],
    );
    expect(types.map(([, name]) => name)).toContain('nodejs_active_handles');
  });
});

describe('regionsState (what the consensus and disagreement gauges show)', () => {
  const judgement = { ...DEFAULT_JUDGEMENT, disagreementAfterMs: 0 };
  const consensus = (over: Partial<TestConsensus>): TestConsensus => ({
    testId: 't1',
    serverId: 's1',
    server: 'orders',
    test: 'newest/handshake',
    revision: 'newest',
    mode: 'newest',
    depth: 'handshake',
    judgement,
    regionsTotal: 2,
    regionsFailing: 0,
    needed: 1,
    failing: false,
    failingRegions: [],
    ...over,
  });
  const now = new Date('2026-07-28T12:00:00Z');

  it('keeps revision labels bounded, and alerts at once on any disagreement with disagreementAfter 0', () => {
    const state = regionsState(
      [
        consensus({}),
        // A pin the store holds but mcp-fleet does not know (it is text in the database): `other`.
        consensus({ testId: 't2', test: '1999-01-01/handshake', mode: 'pinned', revision: '1999-01-01' }),
      ],
      [{ server: 'orders', testId: 't1', startedAt: new Date(now.getTime() - 5_000) }],
      now,
    );
    expect(state.tests.map((t) => t.revision)).toEqual(['newest', 'other']);
    expect(state.servers).toEqual([{ server: 'orders', disagreeing: true, seconds: 5 }]);
  });

  it('ignores an open disagreement of a test no longer live, and a start in the future counts as 0 s', () => {
    const state = regionsState(
      [consensus({})],
      [
        { server: 'orders', testId: 'retired', startedAt: new Date(now.getTime() - 3_600_000) },
        { server: 'orders', testId: 't1', startedAt: new Date(now.getTime() + 60_000) },
      ],
      now,
    );
    expect(state.servers).toEqual([{ server: 'orders', disagreeing: true, seconds: 0 }]);
  });
});
