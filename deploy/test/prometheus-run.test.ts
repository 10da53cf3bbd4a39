// The real Prometheus (Debian's binary) scraping a real control and two agents on loopback, with
// our rule files loaded: a fleet-sim target that answers 503 must put the handshake-failure alert
// in pending (its `for:` is longer than a test), and the drift series must exist.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type LiveMonitor, REGIONS, startLiveMonitor } from './live-monitor';
import { REPO } from './source-env';

const PROMETHEUS = process.env.MCP_FLEET_PROMETHEUS ?? '/usr/bin/prometheus';
const RULES_DIR = join(REPO, 'deploy/prometheus/rules');

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing' | 'inactive';
}
interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

let monitor: LiveMonitor;
let prometheus: ChildProcess;
let dir: string;
let base: string;
let output = '';

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${base}${path}`);
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${path}: ${body.error}`);
  return body.data;
}
const query = (q: string) => api<{ result: Sample[] }>(`/api/v1/query?query=${encodeURIComponent(q)}`);

beforeAll(async () => {
  if (!existsSync(PROMETHEUS))
    throw new Error(`no Prometheus at ${PROMETHEUS}: apt-get install -y prometheus (or set MCP_FLEET_PROMETHEUS)`);
  monitor = await startLiveMonitor({ healthy: ['modern', 'sessions-2025-11-25'], failing: ['unavailable'] });
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-prom-'));
  const hostPort = (url: string) => new URL(url).host;
  const config = {
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    rule_files: readdirSync(RULES_DIR).map((f) => join(RULES_DIR, f)),
    scrape_configs: [
      { job_name: 'mcp-fleet-control', static_configs: [{ targets: [hostPort(monitor.metricsUrls[0]!)] }] },
      { job_name: 'mcp-fleet-agent', static_configs: [{ targets: monitor.metricsUrls.slice(1).map(hostPort) }] },
    ],
  };
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-8_000);
  };
  prometheus.stdout!.on('data', keep);
  prometheus.stderr!.on('data', keep);
  await waitFor(
    'Prometheus to be ready',
    async () => {
      if (prometheus.exitCode !== null) throw new Error(`Prometheus exited (${prometheus.exitCode}):\n${output}`);
      return fetch(`${base}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
    },
    30_000,
  );
}, 90_000);

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((r) => prometheus.once('exit', r));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await monitor?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Prometheus with our rules, scraping a live monitor', () => {
  it('scrapes control and both agents', async () => {
    await waitFor(
      'every target to be up',
      async () => {
        const up = await query('up');
        return up.result.length === 3 && up.result.every((s) => s.value[1] === '1');
      },
      30_000,
    );
  });

  it('puts McpFleetHandshakeFailing in pending for the failing server in each region, and only for it', async () => {
    const alerts = await waitFor(
      'McpFleetHandshakeFailing for the 503 target in every region',
      async () => {
        const { alerts } = await api<{ alerts: Alert[] }>('/api/v1/alerts');
        const failing = alerts.filter((a) => a.labels.alertname === 'McpFleetHandshakeFailing');
        const regions = failing.filter((a) => a.labels.server === 'unavailable').map((a) => a.labels.region);
        return REGIONS.every((r) => regions.includes(r)) && failing;
      },
      60_000,
    );
    for (const a of alerts) {
      expect(a.labels.server).toBe('unavailable');
      expect(['pending', 'firing']).toContain(a.state);
      expect(a.labels.severity).toBeDefined();
    }
    // The rule's own definition is what Prometheus loaded, from our file.
    const rules = readFileSync(join(RULES_DIR, 'mcp-fleet-alerts.yml'), 'utf8');
    expect(rules).toContain('alert: McpFleetHandshakeFailing');
  });

  // The page is on consensus (docs/regions.md): the 503 target fails in both regions, a quorum (ingest
  // counts each region's failed runs in a row).
  it('puts McpFleetTestFailing in pending for the failing server by consensus, and only for it', async () => {
    const alerts = await waitFor(
      "McpFleetTestFailing for the 503 target's newest test",
      async () => {
        const { alerts } = await api<{ alerts: Alert[] }>('/api/v1/alerts');
        const failing = alerts.filter((a) => a.labels.alertname === 'McpFleetTestFailing');
        return failing.some((a) => a.labels.server === 'unavailable') && failing;
      },
      45_000,
    );
    for (const a of alerts) {
      expect(a.labels).toMatchObject({ server: 'unavailable', test: 'newest/handshake', revision: 'newest' });
      expect(a.labels.severity).toBe('critical');
      expect(['pending', 'firing']).toContain(a.state);
    }
  });

  it('has the drift series: revisions per server from control, and the recorded counts per revision', async () => {
    const info = await query('mcp_server_revision_info');
    const spoken = info.result
      .map((s) => `${s.metric.server}@${s.metric.region}=${s.metric.negotiated_version}`)
      .sort();
    expect(spoken).toEqual(
      REGIONS.flatMap((r) => [`modern@${r}=2026-07-28`, `sessions-2025-11-25@${r}=2025-11-25`]).sort(),
    );
    const recording = parse(readFileSync(join(RULES_DIR, 'mcp-fleet-recording.yml'), 'utf8')) as {
      groups: { rules: { record?: string; expr: string }[] }[];
    };
    const drift = recording.groups
      .flatMap((g) => g.rules)
      .filter((r) => r.record && /\bmcp_server_revision_info\b/.test(r.expr) && r.record.includes('revision'));
    expect(drift.length).toBeGreaterThan(0);
    for (const rule of drift) {
      const recorded = await waitFor(
        `${rule.record} to be evaluated`,
        async () => {
          const r = await query(rule.record!);
          return r.result.length > 0 && r.result;
        },
        30_000,
      );
      const revisions = new Set(recorded.map((s) => s.metric.negotiated_version).filter(Boolean));
      if (revisions.size > 0) expect([...revisions].sort()).toEqual(['2025-11-25', '2026-07-28']);
    }
    // And the failure itself, as agents count it.
    const errors = await query('sum by (region) (mcp_handshake_total{outcome="server_error"})');
    expect(errors.result.map((s) => s.metric.region).sort()).toEqual(REGIONS);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
