// How long from a change at a server to a confirmed era move (what the dashboard and the API show)
// and to a firing McpFleetEraMoveConfirmed alert, with the defaults: a 60 s interval, confirmAfter
// 2, quorum half, Prometheus scraping every 15 s and evaluating every 15 s (deploy/prometheus).
// Two regions on one machine, told apart by their agents' source addresses (eu-west 127.0.0.1,
// us-east 127.0.0.2), each trial a geo server of its own (fleet-sim, so no trial's move is another's
// flap): a one-region change (us-east's side rolled back to legacy) and an all-region change (both
// sides). The monitor runs as `mcp-fleet up` does: embedded database, in-process queue.
//
//   npm run bench:confirmation [-- --trials 3]
//
// Prints each trial's times from the change, and the median against one interval (the baseline).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createMemoryBus } from '@mcp-fleet/bus';
import { DEFAULT_INTERVAL_MS, DEFAULT_JUDGEMENT, fleetToYaml } from '@mcp-fleet/config';
import { parseFleet } from '@mcp-fleet/control';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { startMonitor } from '@mcp-fleet/monitor';
import { eraMovesList, serversOverview } from '@mcp-fleet/store';
import { LOOPBACK_FLOOR } from './pipeline/settings';

const { values } = parseArgs({ options: { trials: { type: 'string', default: '3' } } });
const TRIALS = Math.max(1, Math.min(10, Number(values.trials) || 3));
const PROMETHEUS = process.env.MCP_FLEET_PROMETHEUS ?? '/usr/bin/prometheus';
const RULES_DIR = fileURLToPath(new URL('../../../../deploy/prometheus/rules', import.meta.url));
const REGIONS = ['eu-west', 'us-east'];
const log = createLogger('bench', 'silent');

type Scenario = 'one region' | 'all regions';
interface Trial {
  scenario: Scenario;
  name: string;
  sim: Sim;
  changedAt?: number;
  seen?: number;
  confirmed?: number;
  by?: string;
  alert?: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : Number.NaN;
};

async function main(): Promise<void> {
  if (!existsSync(PROMETHEUS)) throw new Error(`no Prometheus at ${PROMETHEUS}: apt-get install -y prometheus`);
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-confirm-'));
  const trials: Trial[] = [];
  for (const scenario of ['one region', 'all regions'] as const)
    for (let i = 1; i <= TRIALS; i += 1) {
      const sim = await startSim({ only: ['geo'] });
      sim.face('geo', 'modern');
      trials.push({ scenario, name: `${scenario === 'one region' ? 'one' : 'all'}-${i}`, sim });
    }
  // The defaults: no interval, timeout or judgement key in the file.
  const fleet = fleetToYaml({
    regions: REGIONS,
    servers: trials.map((t) => ({ name: t.name, url: t.sim.target('geo').url })),
    policy: { allow: ['127.0.0.0/8'] },
  });
  const monitor = await startMonitor({
    log,
    store: { open: { dataDir: join(dir, 'pgdata') } },
    bus: createMemoryBus({ log }),
    control: { log, fleet: parseFleet(fleet, 'bench fleet'), port: 0, probeFloor: LOOPBACK_FLOOR },
    agents: {
      regions: REGIONS,
      metricsPort: null,
      processMetrics: false,
      probeFloor: LOOPBACK_FLOOR,
      sourceAddresses: { 'eu-west': '127.0.0.1', 'us-east': '127.0.0.2' },
    },
  });

  // Prometheus as deploy/prometheus/prometheus.yml sets it: 15 s scrapes and evaluations, our rules.
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  writeFileSync(
    join(dir, 'prometheus.yml'),
    JSON.stringify({
      global: { scrape_interval: '15s', evaluation_interval: '15s' },
      rule_files: readdirSync(RULES_DIR).map((f) => join(RULES_DIR, f)),
      scrape_configs: [
        { job_name: 'mcp-fleet-control', static_configs: [{ targets: [new URL(monitor.control.url).host] }] },
      ],
    }),
  );
  const prometheus: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=error',
    ],
    { stdio: 'ignore' },
  );

  try {
    const interval = DEFAULT_INTERVAL_MS;
    console.log(
      `defaults: interval ${interval / 1000} s, confirmAfter ${DEFAULT_JUDGEMENT.confirmAfter}, quorum ${DEFAULT_JUDGEMENT.quorum}; Prometheus 15 s scrape and evaluation; ${TRIALS} trial(s) per scenario`,
    );
    // Every server settled on 2026-07-28 in both regions (the first runs come within an interval).
    const start = Date.now();
    for (;;) {
      const all = await serversOverview(monitor.store.db);
      const settled = all.filter(
        (s) => s.byRegion.length === 2 && s.byRegion.every((r) => r.currentRevision === '2026-07-28'),
      );
      if (settled.length === trials.length) break;
      if (Date.now() - start > 4 * interval) throw new Error('the fleet did not settle on 2026-07-28');
      await sleep(1_000);
    }
    const ids = new Map((await serversOverview(monitor.store.db)).map((s) => [s.name, s.id]));

    // Changes at random moments over one interval, so they fall anywhere between two runs.
    for (const t of trials)
      setTimeout(
        () => {
          t.changedAt = Date.now();
          t.sim.face('geo', 'legacy', '127.0.0.2');
          if (t.scenario === 'all regions') t.sim.face('geo', 'legacy');
        },
        Math.round(Math.random() * interval),
      ).unref();

    const deadline = Date.now() + 8 * interval;
    while (trials.some((t) => t.alert === undefined) && Date.now() < deadline) {
      await sleep(250);
      const now = Date.now();
      for (const t of trials) {
        if (t.changedAt === undefined) continue;
        const raw = (
          await eraMovesList(monitor.store.db, { serverId: ids.get(t.name)!, view: 'raw', limit: 10 })
        ).moves.filter((m) => m.toRevision === '2025-11-25');
        if (t.seen === undefined && raw.length) t.seen = now - t.changedAt;
        const confirmed = raw.find((m) => m.state === 'confirmed');
        if (t.confirmed === undefined && confirmed) {
          t.confirmed = now - t.changedAt;
          t.by = confirmed.confirmedBy ?? '';
        }
      }
      const res = await fetch(`${base}/api/v1/alerts`).catch(() => undefined);
      if (!res?.ok) continue;
      const { data } = (await res.json()) as {
        data: { alerts: { labels: Record<string, string>; state: string }[] };
      };
      for (const a of data.alerts)
        if (a.labels.alertname === 'McpFleetEraMoveConfirmed' && a.state === 'firing') {
          const t = trials.find((x) => x.name === a.labels.server);
          if (t?.changedAt !== undefined && t.alert === undefined) t.alert = now - t.changedAt;
        }
    }

    console.log('\nscenario      server  move seen  confirmed  by       alert firing');
    for (const t of trials)
      console.log(
        `${t.scenario.padEnd(13)} ${t.name.padEnd(7)} ${secs(t.seen).padStart(9)}  ${secs(t.confirmed).padStart(9)}  ${(t.by ?? '—').padEnd(8)} ${secs(t.alert).padStart(12)}`,
      );
    console.log('\nmedian (× one interval, the baseline):');
    for (const scenario of ['one region', 'all regions'] as const) {
      const of = trials.filter((t) => t.scenario === scenario);
      const m = (k: 'seen' | 'confirmed' | 'alert') =>
        median(of.map((t) => t[k]).filter((x): x is number => x !== undefined));
      const show = (ms: number) => `${secs(ms)} (${(ms / interval).toFixed(2)}×)`;
      console.log(
        `  ${scenario}: move seen ${show(m('seen'))}, confirmed ${show(m('confirmed'))}, alert firing ${show(m('alert'))}`,
      );
    }
    console.log(
      '  An open dashboard page refreshes every 30 s: it shows a confirmed move up to 30 s after the database has it (a page load at once).',
    );
  } finally {
    prometheus.kill('SIGTERM');
    await monitor.stop();
    await Promise.all(trials.map((t) => t.sim.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
