// `promtool check metrics` (Debian's binary) against the live /metrics of a real control and real
// agents once they have done work: handshakes passing and failing, a detection, and a drift that
// makes a downgrade, an era move and a flap. Any warning fails: promtool's lint is what Prometheus users
// hold an exporter to (suffixes by type, units, snake_case, help). Every family has a series, so
// the lint sees label values too, not only names.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { waitFor } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LiveMonitor, REGIONS, startLiveMonitor } from './live-monitor';

const PROMTOOL = '/usr/bin/promtool';

let monitor: LiveMonitor;

beforeAll(async () => {
  if (!existsSync(PROMTOOL))
    throw new Error(`${PROMTOOL} is missing: install promtool (Debian: apt-get install prometheus) to lint /metrics`);
  monitor = await startLiveMonitor({
    healthy: ['modern', 'drifter', 'surface-drifter'],
    failing: ['unavailable'],
    detected: ['modern'],
    conformance: ['modern'],
    surface: ['surface-drifter'],
    scripted: ['modern'],
  });
  // The drifter stops speaking 2025-11-25: its next runs are downgrades to 2025-06-18, and era moves.
  monitor.sim.drift('drifter', ['2025-06-18']);
  await waitFor(
    "the drifter's era move in every region",
    async () => {
      const res = await fetch(`${monitor.control.url}/api/era-moves`);
      const { moves } = (await res.json()) as { moves: { region: string }[] };
      return REGIONS.every((r) => moves.some((m) => m.region === r));
    },
    30_000,
  );
  // The move is confirmed (confirmAfter runs), then undone inside the flap window (the drifter stops
  // speaking 2025-06-18: back to 2025-11-25): a flap. So control's confirmed-move and flap counters
  // have series (docs/regions.md).
  const controlMetrics = async () => (await fetch(monitor.metricsUrls[0]!)).text();
  await waitFor(
    'a confirmed move on control',
    async () => /^mcp_era_moves_confirmed_total\{/m.test(await controlMetrics()),
    30_000,
  );
  monitor.sim.drift('drifter', ['2025-11-25']);
  await waitFor('a flap on control', async () => /^mcp_era_flaps_total\{/m.test(await controlMetrics()), 30_000);
  // Its base surface read in every region first (a first sight is no change), then a breaking
  // change (create_order's currency now required), so mcp_surface_changes_total has series.
  await waitFor(
    "surface-drifter's surface in every region",
    async () => {
      const { servers } = (await (await fetch(`${monitor.control.url}/api/servers`)).json()) as {
        servers: { id: string; name: string }[];
      };
      const id = servers.find((s) => s.name === 'surface-drifter')!.id;
      const res = await fetch(`${monitor.control.url}/api/servers/${id}/surface`);
      const { surfaces } = (await res.json()) as { surfaces: { region: string }[] };
      return REGIONS.every((r) => surfaces.some((x) => x.region === r));
    },
    30_000,
  );
  monitor.sim.driftSurface('surface-drifter', 3);
  await waitFor(
    'a breaking surface change in every region',
    async () => {
      const res = await fetch(`${monitor.control.url}/api/surface-changes?severity=breaking`);
      const { changes } = (await res.json()) as { changes: { region: string }[] };
      return REGIONS.every((r) => changes.some((c) => c.region === r));
    },
    30_000,
  );
}, 120_000);

afterAll(async () => {
  await monitor?.close();
});

/** promtool's verdict on one exposition: its exit status and everything it printed. */
function lint(exposition: string) {
  const run = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}

describe('promtool check metrics on live endpoints', () => {
  it('finds nothing to say about control or any agent', async () => {
    const verdicts: string[] = [];
    for (const url of monitor.metricsUrls) {
      const { status, output } = lint(await (await fetch(url)).text());
      if (status !== 0 || output !== '') verdicts.push(`${url} (exit ${status}):\n${output}`);
    }
    expect(verdicts.join('\n\n')).toBe('');
  });

  // Ours, that is: a process family may be empty by nature (nodejs_active_requests with none in flight).
  it('had a series in every mcp_ family it checked', async () => {
    const empty: string[] = [];
    for (const url of monitor.metricsUrls) {
      const text = await (await fetch(url)).text();
      for (const [, family] of text.matchAll(/^# TYPE (mcp_\S+) \S+$/gm)) {
        const sample = new RegExp(`^${family}(?:_bucket|_sum|_count)?(?:\\{| )`, 'm');
        if (!sample.test(text)) empty.push(`${url}: ${family}`);
      }
    }
    expect(empty).toEqual([]);
  });
});
