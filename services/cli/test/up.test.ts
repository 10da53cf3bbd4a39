// `mcp-fleet up` as an operator runs it: one command, the whole monitor, the demo fleet with
// drift; Ctrl-C stops everything cleanly. Embedded defaults, and Postgres + NATS from the environment.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, freePortRun, parseMetrics, seriesValue, waitFor } from '@mcp-fleet/testkit';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));
describe.each([['embedded'], ['postgres+nats']])('mcp-fleet up (%s)', (flavour) => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-up-'));
  let child: ChildProcess | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    child?.kill('SIGKILL');
    for (const c of cleanups) await c();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the monitor on the demo fleet, shows runs in the API, metrics and dashboard, and stops on SIGINT', async () => {
    const apiPort = await freePortRun();
    const webPort = apiPort + 5;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(webPort),
      MCP_FLEET_API_PORT: String(apiPort),
      MCP_FLEET_AGENT_PORT: String(apiPort + 1),
      LOG_LEVEL: 'warn',
    };
    if (flavour === 'postgres+nats') {
      const db = await createTestDatabase('mcpfleet_up');
      cleanups.push(db.drop);
      env.DATABASE_URL = db.url;
      env.NATS_URL = 'nats://127.0.0.1:4222';
      env.MCP_FLEET_NATS_NAMESPACE = `up${Math.random().toString(36).slice(2, 8)}`;
    }
    child = spawn(process.execPath, [BIN, 'up', '--demo-interval', '2'], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    await waitFor('mcp-fleet to be up', () => stdout.includes('mcp-fleet is up.'), 40_000).catch((err) => {
      throw new Error(`${err.message}\nstdout: ${stdout.slice(-2000)}\nstderr: ${stderr.slice(-2000)}`);
    });
    expect(stdout).toContain(`http://127.0.0.1:${apiPort}/api/servers`);
    expect(stdout).toMatch(flavour === 'embedded' ? /Database\s+pglite/ : /Database\s+postgres/);
    expect(stdout).toMatch(flavour === 'embedded' ? /Queue\s+in-process/ : /Queue\s+NATS JetStream/);

    const api = `http://127.0.0.1:${apiPort}`;
    await waitFor(
      'every demo server to have a revision in both regions, and the failing ones an outcome',
      async () => {
        const { servers } = (await (await fetch(`${api}/api/servers`)).json()) as {
          servers: { name: string; byRegion: { currentRevision: string | null; lastOutcome: string | null }[] }[];
        };
        const failing = ['rate-limited', 'unavailable'];
        const probed = servers.filter((s) => !failing.includes(s.name));
        return (
          // 15 simulated servers over HTTP, one over stdio (stdio-v2), and the monitor's own /mcp (mcp-fleet).
          servers.length === 17 &&
          probed.every((s) => s.byRegion.length === 2 && s.byRegion.every((r) => r.currentRevision)) &&
          servers
            .filter((s) => failing.includes(s.name))
            .every((s) => s.byRegion.length === 2 && s.byRegion.every((r) => r.lastOutcome))
        );
      },
      40_000,
    );
    const agentMetrics = parseMetrics(await (await fetch(`http://127.0.0.1:${apiPort + 1}/metrics`)).text());
    expect(seriesValue(agentMetrics, 'mcp_handshake_total', { region: 'eu-west', outcome: 'success' })).toBeGreaterThan(
      0,
    );
    expect(
      seriesValue(agentMetrics, 'mcp_handshake_total', { region: 'eu-west', outcome: 'rate_limited' }),
    ).toBeGreaterThan(0);

    // The dashboard runs in the same process and reads the same database (embedded PGlite included).
    const web = `http://127.0.0.1:${webPort}`;
    expect(stdout).toMatch(new RegExp(`Dashboard\\s+${web}`));
    const overview = await fetch(`${web}/?range=1h`);
    expect(overview.status).toBe(200);
    const html = await overview.text();
    expect(html).toContain('Fleet overview');
    expect(html).toMatch(/data-testid="fig-servers"><div class="value">17</);
    const serversPage = await (await fetch(`${web}/servers`)).text();
    // React separates text nodes with comments: "16<!-- --> <!-- -->servers".
    expect(serversPage.replace(/<!-- -->/g, '')).toContain('17 servers');
    // The monitor watches itself: its own /mcp speaks the newest revision in both regions.
    const { servers } = (await (await fetch(`${api}/api/servers`)).json()) as {
      servers: { name: string; url: string; byRegion: { currentRevision: string | null }[] }[];
    };
    const self = servers.find((s) => s.name === 'mcp-fleet');
    expect(self?.url).toBe(`${api}/mcp`);
    expect(self?.byRegion.map((r) => r.currentRevision)).toEqual(['2026-07-28', '2026-07-28']);
    // The demo's stdio server, a process per probe, started by the launcher its agents allowlist
    // (and nothing else: GET /api/stdio-commands is what the editor's Command mode offers).
    const stdio = servers.find((s) => s.name === 'stdio-v2');
    expect(stdio?.url).toMatch(/^stdio: \/.*\/mcp-fleet-sim-stdio-v2$/);
    expect(stdio?.byRegion.map((r) => r.currentRevision)).toEqual(['2026-07-28', '2026-07-28']);
    const launcher = stdio!.url.slice('stdio: '.length);
    const allowed = (await (await fetch(`${api}/api/stdio-commands`)).json()) as unknown;
    expect(JSON.stringify(allowed)).toContain(JSON.stringify(launcher));
    expect(JSON.stringify(allowed)).not.toContain(JSON.stringify(process.execPath));

    // The probe floor of control and the agents is the fleet given at start (the demo's 127.0.0.0/8):
    // a fleet applied over the API may allow more (::1 here), and control's own probes still refuse it.
    expect(stdout).toMatch(/Probe floor\s+allow public addresses and 127\.0\.0\.0\/8; deny none; schemes http, https/);
    const wider = await fetch(`${api}/api/fleet`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: 'regions: [eu-west, us-east]\nservers: []\npolicy: { allow: ["127.0.0.0/8", "::1/128"] }\n',
    });
    expect(wider.status).toBe(200);
    const detect = await fetch(`${api}/api/detect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://[::1]:${apiPort}/mcp` }),
    });
    expect(detect.status).toBe(400);
    expect(((await detect.json()) as { error: string }).error).toBe(
      'url: ::1 is loopback, private or link-local and the probe floor (MCP_FLEET_PROBE_ALLOW) does not cover it',
    );

    // Issue 13 point 1: the demo fleet has no file to reload, and SIGHUP says so instead of nothing.
    child.kill('SIGHUP');
    await waitFor(
      'SIGHUP to be answered',
      () => /SIGHUP ignored: the demo fleet is not read from a file/.test(stdout + stderr),
      10_000,
    );
    expect(child.exitCode).toBeNull();

    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});
