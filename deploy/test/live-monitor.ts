// A small real monitor for the deploy tests: embedded PGlite, the in-process queue, control and one
// agent per region on loopback ports, and fleet-sim targets (one healthy, one failing). It answers
// what our /metrics endpoints really expose, and gives Prometheus something real to scrape.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Agent } from '@mcp-fleet/agent';
import { fleetToYaml } from '@mcp-fleet/config';
import { type Control, parseFleet } from '@mcp-fleet/control';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { startMonitor } from '@mcp-fleet/monitor';
import { LOOPBACK_FLOOR, waitFor } from '@mcp-fleet/testkit';

export const REGIONS = ['eu-west', 'us-east'];

export interface LiveMonitor {
  control: Control;
  agents: Agent[];
  sim: Sim;
  /** Every /metrics URL: control's, then each agent's. */
  metricsUrls: string[];
  /** Metric family names exposed now (from `# TYPE` lines: counters, gauges, histograms). */
  exposedFamilies(): Promise<Set<string>>;
  /** Every series name a query can use: families plus `_bucket`, `_sum`, `_count` of histograms. */
  exposedNames(): Promise<Set<string>>;
  close(): Promise<void>;
}

/**
 * `healthy` targets pass; `failing` ones answer 503 (`unavailable`), so handshake failures exist.
 * Waits until every target has been run in every region, and each `detected` one detected.
 */
export async function startLiveMonitor(
  opts: {
    healthy?: string[];
    failing?: string[];
    interval?: string;
    detected?: string[];
    conformance?: string[];
    /** These also get a surface-depth test (what they offer per era, every 2 s). */
    surface?: string[];
    /** These also get a script-depth test calling the v2 sim's read-only echo tool. */
    scripted?: string[];
  } = {},
): Promise<LiveMonitor> {
  const healthy = opts.healthy ?? ['modern', 'drifter'];
  const failing = opts.failing ?? ['unavailable'];
  const log = createLogger('deploy-test', 'silent');
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-deploy-'));
  const sim = await startSim({ only: [...healthy, ...failing] });
  const interval = opts.interval ?? '1s';
  const detected = opts.detected ?? [];
  // These also get a conformance-depth test, so the conformance families have series.
  const conformance = opts.conformance ?? [];
  const fleet = fleetToYaml({
    regions: REGIONS,
    defaults: { interval, timeout: '900ms' },
    servers: [...healthy, ...failing].map((name) => ({
      name,
      url: sim.target(name).url,
      tests: [
        { revision: 'newest' },
        ...(conformance.includes(name) ? [{ revision: 'newest', depth: 'conformance' as const, interval: '5s' }] : []),
        ...(opts.surface?.includes(name) ? [{ revision: 'newest', depth: 'surface' as const, interval: '2s' }] : []),
        ...(opts.scripted?.includes(name)
          ? [
              {
                revision: 'newest',
                depth: 'script' as const,
                interval: '2s',
                steps: [
                  {
                    method: 'tools/call',
                    params: { name: 'echo', arguments: { text: 'hi' } },
                    expect: [{ isError: false }, { path: '$.content[0].text', equals: 'hi' }],
                  },
                ],
              },
            ]
          : []),
      ],
      ...(detected.includes(name) ? { detection: { interval } } : {}),
    })),
    policy: { allow: ['127.0.0.0/8'] },
  });
  const monitor = await startMonitor({
    log,
    store: { open: { dataDir: join(dir, 'pgdata') } },
    control: { fleet: parseFleet(fleet, 'deploy test fleet'), port: 0, tickMs: 50 },
    // The sim is on loopback: an agent's own floor is public addresses only unless told.
    agents: { metricsPort: 0, heartbeatMs: 500, probeFloor: LOOPBACK_FLOOR },
  });
  const { control, agents } = monitor;
  await waitFor(
    'every target to have run in every region',
    async () => {
      const res = await fetch(`${control.url}/api/servers`);
      const { servers } = (await res.json()) as {
        servers: { id: string; name: string; byRegion: { lastRunAt: string | null }[] }[];
      };
      if (!servers.every((s) => s.byRegion.length === REGIONS.length && s.byRegion.every((r) => r.lastRunAt)))
        return false;
      for (const s of servers.filter((s) => detected.includes(s.name))) {
        const res = await fetch(`${control.url}/api/servers/${s.id}/detection`);
        if (!((await res.json()) as { detection: unknown }).detection) return false;
      }
      for (const s of servers.filter((s) => conformance.includes(s.name))) {
        const res = await fetch(`${control.url}/api/servers/${s.id}/conformance`);
        const { tests } = (await res.json()) as { tests: { regions: { checks: unknown[] }[] }[] };
        if (!tests.some((t) => t.regions.length === REGIONS.length && t.regions.every((r) => r.checks.length > 0)))
          return false;
      }
      return true;
    },
    30_000,
  );
  const metricsUrls = [`${monitor.addresses.api}/metrics`, ...monitor.addresses.agents.map((a) => a.metrics!)];
  const scrape = async () => Promise.all(metricsUrls.map(async (u) => (await fetch(u)).text()));
  const families = async () => {
    const out = new Map<string, string>();
    for (const text of await scrape()) for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1]!, m[2]!);
    return out;
  };
  return {
    control,
    agents,
    sim,
    metricsUrls,
    async exposedFamilies() {
      return new Set((await families()).keys());
    },
    async exposedNames() {
      const names = new Set<string>();
      for (const [name, type] of await families()) {
        names.add(name);
        if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${name}${s}`);
        if (type === 'summary') for (const s of ['_sum', '_count']) names.add(`${name}${s}`);
      }
      return names;
    },
    async close() {
      await monitor.stop();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
