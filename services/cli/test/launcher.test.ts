// The services image's entrypoint (bin/mcp-fleet.sh): an agent runs under node with the V8 flags
// the launcher names for it, in the launcher's own process (exec: process 1 of its container gets
// the signals), from the bundle when the image's build made one (bundle.ts) and from the sources
// otherwise; other verbs run with node's defaults. The flags are node's to accept: a misspelt one
// fails here, not in a deployed pod. The launcher runs from a copy, so the bundle it finds is this test's.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startNatsServer, waitFor } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundle, ENTRY } from '../src/bundle';
import { launcherFlags } from '../src/launcher-flags';

const BIN = fileURLToPath(new URL('../bin', import.meta.url));
/** A copy of bin/ beside a dist/ of its own, inside the package (so node_modules resolve as for the real one). */
let home: string;
let launcher: string;
let nats: Awaited<ReturnType<typeof startNatsServer>>;

beforeAll(async () => {
  home = mkdtempSync(join(BIN, '..', '.tmp-launcher-test-'));
  mkdirSync(join(home, 'bin'));
  launcher = join(home, 'bin', 'mcp-fleet.sh');
  copyFileSync(join(BIN, 'mcp-fleet.sh'), launcher);
  // node follows the link, so the sources' bin imports ../src as usual.
  symlinkSync(join(BIN, 'mcp-fleet.js'), join(home, 'bin', 'mcp-fleet.js'));
  nats = await startNatsServer();
});

afterAll(async () => {
  rmSync(home, { recursive: true, force: true });
  await nats?.close();
});

/** The process's command line, as /proc has it (Linux, as the image). */
const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

/** Starts an agent through the launcher copy; its command line once it said it started. */
async function agentCommandLine(): Promise<{ argv: string[]; args: string[] }> {
  const args = ['agent', '--region', 'eu-west', '--metrics-port', String(await freePort())];
  const child: ChildProcess = spawn('/bin/sh', [launcher, ...args], {
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
    return { argv: cmdline(child.pid!), args };
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

describe('the launcher', () => {
  it('names flags for the agent, none for other verbs', () => {
    expect(launcherFlags('agent')).toEqual(expect.arrayContaining([expect.stringMatching(/^--max-semi-space-size=/)]));
    expect(launcherFlags('control')).toEqual([]);
  });

  it('runs an agent with them from the sources, as the process it started', async () => {
    const { argv, args } = await agentCommandLine();
    expect(argv[0]).toMatch(/node$/);
    expect(argv.slice(1)).toEqual([...launcherFlags('agent'), join(home, 'bin', 'mcp-fleet.js'), ...args]);
  });

  it('runs an agent from the bundle when there is one', async () => {
    await bundle(ENTRY, join(home, 'dist'));
    const { argv, args } = await agentCommandLine();
    expect(argv.slice(1)).toEqual([...launcherFlags('agent'), `${home}/bin/../dist/run.js`, ...args]);
  });

  it('runs the other verbs from the sources', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile('/bin/sh', [launcher, '--version'], { timeout: 60_000 }, (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    expect(out).toMatch(/^mcp-fleet \d+\.\d+\.\d+/);
  });
});
