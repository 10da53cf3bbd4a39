// `promtool check metrics` (Debian's binary) against the live /metrics of a real control and real
// agents once they have done work: handshakes passing and failing, a detection, and a drift that
// makes a downgrade and an era move. Any warning fails: promtool's lint is what Prometheus users
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
    healthy: ['modern', 'drifter'],
    failing: ['unavailable'],
    detected: ['modern'],
    conformance: ['modern'],
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
}, 90_000);

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
