// The services image's entrypoint (bin/mcp-fleet.sh): an agent runs under node with the V8 flags
// the launcher names for it, in the launcher's own process (exec: process 1 of its container gets
// the signals); other verbs run with node's defaults. The flags are node's to accept: a misspelt
// one fails here, not in a deployed pod.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort, startNatsServer, waitFor } from '@mcp-fleet/testkit';
import { describe, expect, it } from 'vitest';
import { launcherFlags } from '../src/launcher-flags';

const LAUNCHER = fileURLToPath(new URL('../bin/mcp-fleet.sh', import.meta.url));

/** The process's command line, as /proc has it (Linux, as the image). */
const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

describe('the launcher', () => {
  it('names flags for the agent', () => {
    expect(launcherFlags('agent')).toEqual(expect.arrayContaining([expect.stringMatching(/^--max-semi-space-size=/)]));
    expect(launcherFlags('control')).toEqual([]);
  });

  it('runs an agent with them, as the process it started', async () => {
    const nats = await startNatsServer();
    const port = await freePort();
    const args = ['agent', '--region', 'eu-west', '--metrics-port', String(port)];
    const child: ChildProcess = spawn('/bin/sh', [LAUNCHER, ...args], {
      env: { ...process.env, NATS_URL: nats.url, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr!.on('data', (chunk) => {
      output += chunk;
    });
    try {
      // Or its end: node refuses a flag it does not know ("bad option") and exits at once.
      await waitFor('the start line', () => output.includes('SIGTERM or Ctrl-C') || child.exitCode !== null, 60_000);
      expect(output).toContain('SIGTERM or Ctrl-C');
      const argv = cmdline(child.pid!);
      expect(argv[0]).toMatch(/node$/);
      expect(argv.slice(1, -args.length)).toEqual([...launcherFlags('agent'), expect.stringMatching(/mcp-fleet\.js$/)]);
      expect(argv.slice(-args.length)).toEqual(args);
    } finally {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await nats.close();
    }
  });

  it('runs the other verbs too', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile('/bin/sh', [LAUNCHER, '--version'], { timeout: 60_000 }, (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    expect(out).toMatch(/^mcp-fleet \d+\.\d+\.\d+/);
  });
});
