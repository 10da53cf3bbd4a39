// A small real monitor for the deploy tests: embedded PGlite, the in-process queue, control and one
// agent per region on loopback ports, and fleet-sim targets (one healthy, one failing). It answers
// what our /metrics endpoints really expose, and gives Prometheus something real to scrape.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Agent, startAgent } from '@mcp-fleet/agent';
import { createMemoryBus } from '@mcp-fleet/bus';
import { type Control, parseFleet, startControl } from '@mcp-fleet/control';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { openStore, type Store } from '@mcp-fleet/store';
import { waitFor } from '@mcp-fleet/testkit';

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
  opts: { healthy?: string[]; failing?: string[]; interval?: string; detected?: string[] } = {},
): Promise<LiveMonitor> {
  const healthy = opts.healthy ?? ['modern', 'drifter'];
  const failing = opts.failing ?? ['unavailable'];
  const log = createLogger('deploy-test', 'silent');
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-deploy-'));
  const store: Store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  const bus = createMemoryBus({ log });
  const sim = await startSim({ only: [...healthy, ...failing] });
  const lines = [
    `regions: [${REGIONS.join(', ')}]`,
    `defaults: { interval: ${opts.interval ?? '1s'}, timeout: 900ms }`,
    'servers:',
  ];
  const detected = opts.detected ?? [];
  for (const name of [...healthy, ...failing]) {
    lines.push(`  - name: ${name}`, `    url: ${sim.target(name).url}`, '    tests:', '      - revision: newest');
    if (detected.includes(name)) lines.push(`    detection: { interval: ${opts.interval ?? '1s'} }`);
  }
  lines.push('policy: { allow: ["127.0.0.0/8"] }');
  const fleet = parseFleet(`${lines.join('\n')}\n`, 'deploy test fleet');
  const control = await startControl({ store, bus, log, fleet, port: 0, tickMs: 50 });
  const agents = await Promise.all(
    REGIONS.map((region) =>
      // The sim is on loopback: an agent's own floor is public addresses only unless told.
      startAgent({
        bus,
        region,
        log,
        metricsPort: 0,
        heartbeatMs: 500,
        probeFloor: { allow: ['127.0.0.0/8'], deny: [] },
      }),
    ),
  );
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
      return true;
    },
    30_000,
  );
  const metricsUrls = [`${control.url}/metrics`, ...agents.map((a) => a.metricsUrl!)];
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
      await Promise.allSettled(agents.map((a) => a.stop()));
      await control.stop();
      await bus.close();
      await store.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
