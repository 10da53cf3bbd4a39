// `mcp-fleet detect|handshake|check --stdio -- <command…>` as a user runs them: the CLI in a child
// process, probing fleet-sim's stdio servers (official SDKs, and hostile ones) in processes of
// their own. Exit codes, the JSON contract, the environment the server gets, and what is printed.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { type StdioServerKind, stdioServer } from '@mcp-fleet/fleet-sim';
import { leftovers } from '@mcp-fleet/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT } from '../src/usage';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));

function run(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 120_000, env }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

let marker = '';
/** The command line of a fleet-sim stdio server, after `--`. */
function server(kind: StdioServerKind): string[] {
  marker = `mcp-fleet-cli-test-${randomUUID()}`;
  const spec = stdioServer(kind, { marker });
  return [spec.command, ...spec.args];
}

afterEach(() => {
  if (marker) expect(leftovers(marker)).toEqual([]);
  marker = '';
});

describe('detect --stdio', () => {
  it('--json: the detection contract, plus what the processes did; exit 0', async () => {
    const r = await run(['detect', '--stdio', '--json', '--', ...server('v1')]);
    expect(r.code, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(d.outcome).toBe('DETECTED');
    expect(d.newestSupported).toBe('2025-11-25');
    expect(d.revisions.map((x: { supported: boolean }) => x.supported)).toEqual([true, true, true, true, false]);
    expect(d.stdio).toEqual({ processes: 5, stdoutNotJson: 0, findings: [], stderr: null });
  });

  it('a process that exits at once: unreachable on every revision, its stderr shown; exit code of unreachable', async () => {
    const r = await run(['detect', '--stdio', '--', ...server('exits-at-once')]);
    expect(r.code).toBe(EXIT.unreachable);
    expect(r.stdout).toMatch(/^Target {3}stdio: .*server\.mjs exits-at-once/m);
    expect(r.stdout).toContain(
      'Cause    unreachable: the process exited before answering (exit code 3) on every revision',
    );
    expect(r.stdout).toContain('Does the command start and keep running?');
    expect(r.stdout).toContain('Stderr   stdio-exits-at-once: missing configuration, giving up');
  });
});

describe('handshake --stdio', () => {
  it('logs on stdout: success, and the finding is printed', async () => {
    const r = await run(['handshake', '--stdio', '--revision', 'newest', '--', ...server('logs-on-stdout')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Negotiated +2025-11-25$/m);
    expect(r.stdout).toMatch(/^Finding +stdout_only_protocol: \d+ lines on stdout were not JSON-RPC/m);
  });

  it('the server gets PATH and the --env variables only, never the CLI’s own environment', async () => {
    marker = `mcp-fleet-cli-test-${randomUUID()}`;
    // A one-line legacy server whose serverInfo name lists the variables it was given.
    const js = `process.stdin.once('data',d=>{const id=JSON.parse(String(d).split('\\n')[0]).id;process.stdout.write(JSON.stringify({jsonrpc:'2.0',id,result:{protocolVersion:'2025-11-25',capabilities:{},serverInfo:{name:Object.keys(process.env).sort().join(','),version:process.env.GIVEN+'/'+process.env.FROM_SHELL}}})+'\\n')})`;
    const r = await run(
      [
        'handshake',
        '--stdio',
        '--revision',
        '2025-11-25',
        '--env',
        'GIVEN=yes',
        '--env',
        'FROM_SHELL',
        '--json',
        '--',
        process.execPath,
        '-e',
        js,
        marker,
      ],
      { ...process.env, FROM_SHELL: 'passed-by-name', NOT_GIVEN: 'must-not-leak' },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    // Every value given is treated as a credential: echoed back, it is redacted (`yes` is too short to be one).
    expect(out.serverInfo).toEqual({ name: 'FROM_SHELL,GIVEN,PATH', version: 'yes/[redacted]' });
  });

  it('an --env value (a credential) never appears in what is printed', async () => {
    marker = `mcp-fleet-cli-test-${randomUUID()}`;
    const secret = 'sk-cli-test-abcdef0123456789';
    const js = `process.stderr.write('token '+process.env.TOKEN+'\\n');process.exit(1)`;
    for (const json of [true, false]) {
      const args = ['handshake', '--stdio', '--revision', 'newest', '--env', `TOKEN=${secret}`];
      const r = await run([...args, ...(json ? ['--json'] : []), '--', process.execPath, '-e', js, marker]);
      expect(r.code).toBe(EXIT.unreachable);
      expect(r.stdout + r.stderr).not.toContain(secret);
      expect(r.stdout).toContain('token [redacted]');
    }
  });
});

describe('check --stdio', () => {
  it('SDK 2.4 passes; the HTTP-only rules are skipped with the reason; exit 0', async () => {
    const r = await run(['check', '--stdio', '--json', '--', ...server('v2')]);
    expect(r.code, r.stdout).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.protocol).toEqual({ requested: 'auto', negotiated: '2026-07-28', era: 'modern' });
    const skipped = out.checks.filter((c: { message: string }) => c.message.startsWith('an HTTP-only rule'));
    expect(skipped.map((c: { id: string }) => c.id)).toEqual([
      'header_mismatch_rejected',
      'unknown_method_not_found',
      'no_session_id',
    ]);
    expect(out.checks.find((c: { id: string }) => c.id === 'stdout_only_protocol').status).toBe('pass');
  });

  it('logs on stdout fails the MUST rule stdout_only_protocol; exit 1', async () => {
    const r = await run(['check', '--stdio', '--protocol', 'legacy', '--', ...server('logs-on-stdout')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/stdout_only_protocol +MUST +FAIL/);
  });
});

describe('--stdio usage', () => {
  it.each([
    [['detect', '--stdio'], 'detect --stdio needs a command'],
    [['handshake', '--stdio', '--revision', 'newest', '-H', 'Authorization: x', '--', 'node'], '--header is for HTTP'],
    [['detect', '--stdio', '--env', '1BAD=x', '--', 'node'], '--env takes NAME=value or NAME'],
    [['detect', '--stdio', '--env', 'MCP_FLEET_SURELY_UNSET', '--', 'node'], 'not set in this shell'],
    [['detect', '--env', 'A=b', 'http://127.0.0.1:1/mcp'], '--env and --cwd go with --stdio'],
    [['check', '--stdio', '--cross-era', '--', 'node'], '--cross-era is not available over --stdio'],
  ])('%j is a usage error (exit 2)', async (args, words) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(words);
  });
});
