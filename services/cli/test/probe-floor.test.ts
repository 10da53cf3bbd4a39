// A probing process's own floor, read at the edge: MCP_FLEET_PROBE_* and an agent's --allow,
// --deny, --schemes. Bad entries are usage errors naming where they came from; a started agent
// says its floor.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { agentEnv, ConfigError, type Env, parseEnv } from '@mcp-fleet/config';
import type { TargetPolicyRanges } from '@mcp-fleet/probe';
import { freePort, startNatsServer, waitFor } from '@mcp-fleet/testkit';
import { describe, expect, it } from 'vitest';
import { probeFloor as floorOf } from '../src/probe-floor';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));
const NATS_URL = process.env.MCP_FLEET_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 60_000, env }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

/** The floor an agent with `env` and `flags` gets (its environment parsed as the agent verb does). */
function probeFloor(env: Env, flags: Parameters<typeof floorOf>[1] = {}, fallback?: TargetPolicyRanges) {
  return floorOf(parseEnv(agentEnv, env).probeFloor, flags, fallback);
}

describe('probeFloor', () => {
  it('is public addresses only, http and https, when nothing is set (empty variables count as unset)', () => {
    expect(probeFloor({})).toEqual({ allow: [], deny: [], schemes: ['http', 'https'] });
    expect(probeFloor({ MCP_FLEET_PROBE_ALLOW: ' ', MCP_FLEET_PROBE_SCHEMES: '' })).toEqual({
      allow: [],
      deny: [],
      schemes: ['http', 'https'],
    });
  });

  it('reads comma-separated variables, and flags override them', () => {
    const env = {
      MCP_FLEET_PROBE_ALLOW: '10.20.0.0/16, 127.0.0.0/8',
      MCP_FLEET_PROBE_DENY: '10.20.1.0/24',
      MCP_FLEET_PROBE_SCHEMES: 'HTTPS',
    };
    expect(probeFloor(env)).toEqual({
      allow: ['10.20.0.0/16', '127.0.0.0/8'],
      deny: ['10.20.1.0/24'],
      schemes: ['https'],
    });
    expect(probeFloor(env, { allow: '192.168.0.0/16', schemes: 'http,https' })).toEqual({
      allow: ['192.168.0.0/16'],
      deny: ['10.20.1.0/24'],
      schemes: ['http', 'https'],
    });
    // An empty flag is a choice: nothing beyond public addresses.
    expect(probeFloor(env, { allow: '' }).allow).toEqual([]);
  });

  it('takes unset parts from a fallback (mcp-fleet up: the fleet given at start)', () => {
    const fleet = { allow: ['127.0.0.0/8'], deny: ['127.0.0.9/32'], schemes: ['http'] };
    expect(probeFloor({}, {}, fleet)).toEqual(fleet);
    expect(probeFloor({ MCP_FLEET_PROBE_DENY: '127.0.0.0/24' }, {}, fleet)).toEqual({
      allow: ['127.0.0.0/8'],
      deny: ['127.0.0.0/24'],
      schemes: ['http'],
    });
  });

  it('refuses what is not a CIDR or a scheme probes speak, naming the variable or flag', () => {
    expect(() => probeFloor({ MCP_FLEET_PROBE_ALLOW: '127.0.0.0/8,intranet' })).toThrow(
      new ConfigError('MCP_FLEET_PROBE_ALLOW: "intranet" is not a CIDR like 10.20.0.0/16 or an address'),
    );
    expect(() => probeFloor({}, { deny: '10.0.0.0/33' })).toThrow(/^--deny: "10\.0\.0\.0\/33" is not a CIDR/);
    expect(() => probeFloor({ MCP_FLEET_PROBE_SCHEMES: 'http,file' })).toThrow(
      'MCP_FLEET_PROBE_SCHEMES: "file" is not a scheme probes speak (http, https)',
    );
    expect(() => probeFloor({}, { schemes: ',' })).toThrow('--schemes: at least one scheme (http, https)');
  });
});

describe('the commands', () => {
  it('exit 2 on a bad floor, before connecting anywhere', async () => {
    const base = { ...process.env, NATS_URL, MCP_FLEET_NATS_NAMESPACE: `t${randomBytes(4).toString('hex')}` };
    const agent = await run(['agent', '--region', 'eu-west', '--allow', 'everything'], base);
    expect(agent.code).toBe(2);
    expect(agent.stderr).toContain('--allow: "everything" is not a CIDR');
    const control = await run(['control'], { ...base, MCP_FLEET_PROBE_DENY: '300.1.1.1' });
    expect(control.code).toBe(2);
    expect(control.stderr).toContain('MCP_FLEET_PROBE_DENY: "300.1.1.1" is not a CIDR');
  });

  it('an agent says its floor when it starts', async () => {
    // A private broker: the agent declares its streams there, and they go with it.
    const nats = await startNatsServer();
    const port = await freePort();
    const child: ChildProcess = spawn(
      process.execPath,
      [BIN, 'agent', '--region', 'eu-west', '--metrics-port', String(port), '--allow', '127.0.0.0/8'],
      {
        env: {
          ...process.env,
          NATS_URL: nats.url,
          MCP_FLEET_PROBE_DENY: '127.0.0.2',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout!.on('data', (chunk) => {
      output += chunk;
    });
    try {
      await waitFor('the start line', () => output.includes('SIGTERM or Ctrl-C'), 30_000);
      expect(output).toContain(
        'probe floor: allow public addresses and 127.0.0.0/8; deny 127.0.0.2; schemes http, https',
      );
      const logged = output
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg?: string; floor?: unknown });
      expect(logged.find((l) => l.floor)).toMatchObject({
        floor: { allow: ['127.0.0.0/8'], deny: ['127.0.0.2'], schemes: ['http', 'https'] },
      });
    } finally {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await nats.close();
    }
  });
});
