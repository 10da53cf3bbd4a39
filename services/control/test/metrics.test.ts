// Control's registry on its own: what promtool and rate() read from it, without a database.
import { parseMetrics, seriesValue } from '@mcp-fleet/testkit';
import { describe, expect, it } from 'vitest';
import { createControlMetrics } from '../src/metrics';

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
