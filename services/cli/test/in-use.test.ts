// Operator mistakes are not crashes: a port in use, or a second `up` on the same data directory,
// exits 2 before anything starts — naming what is in use and what to set — and leaves nothing
// behind (no database, no "migrations applied"); the first `up` keeps running.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, freePortRun, waitFor } from '@mcp-fleet/testkit';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], cwd: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ran: Ran = { code: null, stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => (ran.stdout += d));
  child.stderr!.on('data', (d) => (ran.stderr += d));
  const exited = new Promise<Ran>((resolve) => child.once('exit', (code) => resolve({ ...ran, code })));
  return { child, ran, exited };
}

const run = (args: string[], cwd: string, env: Record<string, string>) => start(args, cwd, env).exited;

async function hold(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

/** Three free ports for up: the API, one agent (of two regions: +1 is its neighbour's), the dashboard. */
/** `up`'s fixed ports: the API, an agent per region from +1, the dashboard at +5. */
async function ports() {
  const base = await freePortRun();
  return { api: base, agent: base + 1, web: base + 5 };
}

describe('a port in use', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-inuse-'));
  const held: Server[] = [];
  afterAll(() => {
    for (const s of held) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('up: exit 2 naming the port and the variable, nothing started', async () => {
    const cases = await Promise.all(
      (['api', 'agent', 'web'] as const).map(async (taken) => {
        const p = await ports();
        held.push(await hold(p[taken]));
        const cwd = mkdtempSync(join(dir, `${taken}-`));
        const env = { MCP_FLEET_API_PORT: String(p.api), MCP_FLEET_AGENT_PORT: String(p.agent), PORT: String(p.web) };
        return { taken, p, cwd, result: await run(['up'], cwd, env) };
      }),
    );
    const setting = { api: 'MCP_FLEET_API_PORT', agent: 'MCP_FLEET_AGENT_PORT', web: 'PORT' };
    for (const { taken, p, cwd, result } of cases) {
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`127.0.0.1:${p[taken]}: the port is in use`);
      expect(result.stderr).toContain(`set ${setting[taken]}`);
      expect(result.stderr).not.toContain('internal error');
      expect(result.stdout).not.toContain('migrations applied');
      // Nothing was started: not even the embedded database's directory.
      expect(existsSync(join(cwd, '.mcp-fleet'))).toBe(false);
    }
  });

  it('control and agent: exit 2 naming the port and the setting', async () => {
    const port = await freePort();
    held.push(await hold(port));
    const [control, agent] = await Promise.all([
      run(['control'], dir, { MCP_FLEET_API_PORT: String(port) }),
      run(['agent', '--region', 'eu-west', '--metrics-port', String(port)], dir, {
        NATS_URL: 'nats://127.0.0.1:4222',
      }),
    ]);
    expect(control.code, control.stderr).toBe(2);
    expect(control.stderr).toBe(
      `mcp-fleet: control's API cannot listen on 127.0.0.1:${port}: the port is in use (another mcp-fleet, or another program). Stop it, or set MCP_FLEET_API_PORT to a free port.\n`,
    );
    expect(control.stdout).not.toContain('migrations applied');
    expect(agent.code, agent.stderr).toBe(2);
    expect(agent.stderr).toContain(`agent eu-west's /metrics cannot listen on 127.0.0.1:${port}`);
    expect(agent.stderr).toContain('set --metrics-port or MCP_FLEET_AGENT_PORT to a free port');
  });
});

describe('a second up on the same data directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-twice-'));
  let first: ChildProcess | undefined;
  afterAll(() => {
    first?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('exits 2 naming the process and --data-dir, and the first keeps running', async () => {
    const a = await ports();
    const one = start(['up', '--no-dashboard'], dir, {
      MCP_FLEET_API_PORT: String(a.api),
      MCP_FLEET_AGENT_PORT: String(a.agent),
    });
    first = one.child;
    await waitFor('the first up', () => one.ran.stdout.includes('mcp-fleet is up.'), 50_000).catch((err) => {
      throw new Error(`${err.message}\n${one.ran.stdout}\n${one.ran.stderr}`);
    });

    const b = await ports();
    const second = await run(['up', '--no-dashboard'], dir, {
      MCP_FLEET_API_PORT: String(b.api),
      MCP_FLEET_AGENT_PORT: String(b.agent),
    });
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toContain(`is in use by process ${one.child.pid}`);
    expect(second.stderr).toContain('--data-dir');
    expect(second.stdout).not.toContain('migrations applied');

    // The first is unharmed: it still answers, and stops cleanly.
    expect((await fetch(`http://127.0.0.1:${a.api}/healthz`)).status).toBe(200);
    one.child.kill('SIGINT');
    expect((await one.exited).code).toBe(0);
  });
});
