// Control's registry on its own: what promtool and rate() read from it, without a database.
import { DEFAULT_JUDGEMENT } from '@mcp-fleet/config';
import { parseMetrics, seriesValue } from '@mcp-fleet/testkit';
import { describe, expect, it } from 'vitest';
import { disagreementOf } from '../src/fleet-gauge-reads';
import { FleetGauges } from '../src/fleet-gauges';
import { createControlMetrics } from '../src/metrics';

const region = { region: 'eu-west', up: true, failingPinnedTests: 0 };
const fleet = new FleetGauges({
  liveServerIds: async () => ['orders', 'odd'],
  servers: async (ids) =>
    ids.map((id) => ({
      id,
      name: id,
      // A revision control does not know (stored from a server's answer) stays a bounded label.
      regions: [
        id === 'orders'
          ? { ...region, revision: '2025-11-25', era: 'legacy' }
          : { ...region, revision: '1999-01-01', era: null },
      ],
      tests: [],
      disagreement: null,
      mustFailing: null,
    })),
});
const sources = (poison: () => number) => ({ poison, agentsSeen: async () => [], fleet: () => fleet.bytes() });

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

describe("a server's disagreement as the gauges read it", () => {
  const judgement = { ...DEFAULT_JUDGEMENT, disagreementAfterMs: 0 };
  const now = new Date('2026-07-28T12:00:00Z');
  const ago = (ms: number) => new Date(now.getTime() - ms);

  it('is none for a server with no live test, and open since its longest open one started', () => {
    expect(disagreementOf([], [{ testId: 't1', startedAt: ago(5_000) }])).toBeNull();
    expect(
      disagreementOf(
        [
          { testId: 't1', judgement },
          { testId: 't2', judgement },
        ],
        [
          { testId: 't2', startedAt: ago(1_000) },
          { testId: 't1', startedAt: ago(5_000) },
        ],
      ),
    ).toEqual({ afterMs: 0, openSince: ago(5_000).getTime() });
  });

  it('ignores an open disagreement of a test no longer live (nobody can end it)', () => {
    expect(disagreementOf([{ testId: 't1', judgement }], [{ testId: 'retired', startedAt: ago(3_600_000) }])).toEqual({
      afterMs: 0,
      openSince: null,
    });
  });
});
