// Probes over stdio against real processes: fleet-sim's stdio servers, built with the official
// SDKs (1.32 legacy, 2.4 serveStdio in both eras), and its hostile ones. Each hostile process gets
// its test (the attack, not only the happy path), and every test ends with no process left
// running and no zombie (read from /proc).
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { type StdioServerKind, stdioServer } from '@mcp-fleet/fleet-sim';
import { leftovers } from '@mcp-fleet/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type CommandSpec, conformance, detect, handshake, REVISION_NAMES } from '../src';
import { ChildServer } from '../src/stdio/child';

let marker = '';
const server = (kind: StdioServerKind, env?: Record<string, string>) => {
  marker = `mcp-fleet-test-${randomUUID()}`;
  return stdioServer(kind, { marker, ...(env ? { env } : {}) });
};

afterEach(() => {
  // The probe has returned: every process it started has exited and been reaped.
  expect(leftovers(marker)).toEqual([]);
});

describe('official SDK servers over stdio', () => {
  it('detect lists the revisions a legacy SDK 1.32 process accepts: every legacy one, not 2026-07-28', async () => {
    const d = await detect(server('v1'), { timeoutMs: 10_000 });
    expect(d.outcome).toBe('DETECTED');
    expect(d.newestSupported).toBe('2025-11-25');
    expect(d.revisions.filter((r) => r.supported).map((r) => r.revision)).toEqual(REVISION_NAMES.slice(0, 4));
    const modern = d.revisions.at(-1)!;
    expect(modern.evidence?.jsonRpcErrorCode).toBe(-32601);
    expect(modern.sentence).toContain('over stdio');
    // One process per revision, each shut down by closing its stdin.
    expect(d.stdio).toEqual({ processes: 5, stdoutNotJson: 0, findings: [], stderr: null });
    expect(d.requests).toBe(5);
  });

  it('detect finds both eras on SDK 2.4 serveStdio, and only the modern one with legacy: reject', async () => {
    const both = await detect(server('v2'));
    expect(both.revisions.every((r) => r.supported)).toBe(true);
    expect(both.serverInfo?.name).toBe('stdio-v2');
    const modernOnly = await detect(server('v2-modern-only'));
    expect(modernOnly.revisions.filter((r) => r.supported).map((r) => r.revision)).toEqual(['2026-07-28']);
    expect(modernOnly.revisions[3]!.evidence?.jsonRpcErrorCode).toBe(-32022);
  });

  it('a newest-supported handshake discovers the modern era, or falls back to initialize on a legacy process', async () => {
    const modern = await handshake(server('v2'), { revision: 'newest' });
    expect([modern.outcome, modern.negotiated, modern.era]).toEqual(['success', '2026-07-28', 'modern']);
    const legacy = await handshake(server('v1'), { revision: 'newest' });
    expect([legacy.outcome, legacy.negotiated, legacy.era]).toEqual(['success', '2025-11-25', 'legacy']);
    // server/discover's -32601 said legacy: a lookup heard initialize answer (then initialized), and
    // the run adopted that process's conversation rather than starting a third process.
    expect(legacy.lookup).toEqual({ performed: true, found: '2025-11-25', requests: 3 });
    expect(legacy.stdio).toEqual({ processes: 2, stdoutNotJson: 0, findings: [], stderr: null });
    expect(modern.stdio?.processes).toBe(1);
  });

  it('a pin the process does not speak fails mcp.protocol.revision, naming what it speaks', async () => {
    const run = await handshake(server('v1'), { revision: '2026-07-28' });
    expect(run.outcome).toBe('unsupported_version');
    expect(run.assertion).toMatchObject({
      name: 'mcp.protocol.revision',
      expected: '2026-07-28',
      actual: '2025-11-25',
    });
  });

  it('conformance over stdio: the HTTP-only rules skip with the reason, the stdio rules pass', async () => {
    const run = await conformance(server('v2'), { protocol: 'auto', timeoutMs: 2_000 });
    expect(run.target).toMatch(/^stdio: .*server\.mjs v2 mcp-fleet-test-/);
    expect(run.protocol).toEqual({ requested: 'auto', negotiated: '2026-07-28', era: 'modern' });
    const byId = Object.fromEntries(run.checks.map((c) => [c.id, c]));
    for (const id of ['header_mismatch_rejected', 'unknown_method_not_found', 'no_session_id'])
      expect(byId[id]).toMatchObject({ status: 'skip', message: 'an HTTP-only rule, and this server is not on HTTP' });
    expect(byId.stdout_only_protocol?.status).toBe('pass');
    expect(byId.exits_on_stdin_close?.status).toBe('pass');
    // Malformed lines did not crash the process: a valid request succeeded after each.
    expect(byId.server_alive_after_bad_input?.status).toBe('pass');
    // The version is negotiated by a process's opening: an unknown one is turned away there.
    expect(byId.unsupported_version_rejected?.status).toBe('pass');
    expect(byId.tools_list_stable_across_connections?.message).toContain('second connection');
    expect(run.pass).toBe(true);
  });

  it('conformance on a legacy SDK 1.32 process runs the legacy rules over stdio', async () => {
    const run = await conformance(server('v1'), { protocol: 'legacy', timeoutMs: 2_000 });
    expect(run.protocol.era).toBe('legacy');
    const byId = Object.fromEntries(run.checks.map((c) => [c.id, c.status]));
    expect(byId).toMatchObject({ server_info_present: 'pass', ping_succeeds: 'pass', method_not_found: 'pass' });
    expect(byId.stdout_only_protocol).toBe('pass');
    expect(run.pass).toBe(true);
  });
});

describe('hostile processes', () => {
  it('logs on stdout: the handshake succeeds, and the lines are a stdout_only_protocol finding', async () => {
    const run = await handshake(server('logs-on-stdout'), { revision: 'newest' });
    expect(run.outcome).toBe('success');
    expect(run.stdio?.findings.map((f) => f.id)).toEqual(['stdout_only_protocol']);
    expect(run.stdio?.findings[0]?.message).toContain('stdio-logs-on-stdout: starting up');
    const check = await conformance(server('logs-on-stdout'), { protocol: 'legacy', timeoutMs: 2_000 });
    expect(check.checks.find((c) => c.id === 'stdout_only_protocol')).toMatchObject({ status: 'fail', level: 'MUST' });
    expect(check.pass).toBe(false);
  });

  it('never answers: a timeout, after the discover probe said legacy and initialize got nothing either', async () => {
    const run = await handshake(server('silent'), { revision: 'newest', timeoutMs: 1_500 });
    expect(run.outcome).toBe('timeout');
    expect(run.evidence?.reachabilityFailure).toBe('timeout');
    expect(run.stdio?.processes).toBe(2);
  });

  it('floods stdout: reading stops at the byte cap and the process is killed', async () => {
    const cap = 512 * 1024;
    const run = await handshake(server('floods-stdout'), { revision: 'newest', stdio: { maxStdoutBytes: cap } });
    expect(run.outcome).toBe('protocol_error');
    expect(run.evidence?.reachabilityFailure).toBe('stdout_flood');
    expect(run.message).toContain(`more than ${cap} bytes`);
    expect(run.stdio?.findings.map((f) => f.id)).toContain('stdout_only_protocol');
  });

  it('exits at once: exited early, with its stderr as evidence (never judged an error by itself)', async () => {
    const run = await handshake(server('exits-at-once'), { revision: 'newest' });
    expect(run.outcome).toBe('unreachable');
    expect(run.evidence?.reachabilityFailure).toBe('exited_early');
    expect(run.message).toContain('exit code 3');
    expect(run.evidence?.stderr).toBe('stdio-exits-at-once: missing configuration, giving up');
  });

  it('ignores SIGTERM: after stdin closes and SIGTERM, SIGKILL ends it within the bounded waits', async () => {
    const run = await handshake(server('ignores-sigterm'), {
      revision: '2025-11-25',
      stdio: { stdinCloseWaitMs: 300, sigtermWaitMs: 300 },
    });
    expect(run.outcome).toBe('success');
    expect(run.stdio?.findings).toEqual([
      { id: 'exits_on_stdin_close', message: '1 of 1 processes did not exit when stdin closed (ended by SIGKILL)' },
    ]);
    expect(run.stdio?.stderr).toContain('SIGTERM ignored');
    const check = await conformance(server('ignores-sigterm'), {
      protocol: 'legacy',
      timeoutMs: 2_000,
      stdio: { stdinCloseWaitMs: 300, sigtermWaitMs: 300 },
    });
    expect(check.checks.find((c) => c.id === 'exits_on_stdin_close')).toMatchObject({
      status: 'fail',
      message: 'the process did not end when stdin closed: it took SIGKILL (signal SIGKILL)',
    });
  });

  it('a command that cannot start is spawn_failed, not a crash', async () => {
    marker = `mcp-fleet-test-${randomUUID()}`;
    const run = await handshake({ command: `/nonexistent/${marker}`, args: [], env: {} }, { revision: 'newest' });
    expect(run.outcome).toBe('unreachable');
    expect(run.evidence?.reachabilityFailure).toBe('spawn_failed');
    expect(run.message).toContain('ENOENT');
  });
});

describe('the spawn module', () => {
  // A one-line server: answers its first line with its environment and working directory.
  const reporter = (env: Record<string, string>, cwd?: string): CommandSpec => {
    marker = `mcp-fleet-test-${randomUUID()}`;
    const js =
      "process.stdin.once('data',()=>process.stdout.write(JSON.stringify({jsonrpc:'2.0',id:1,result:{env:process.env,cwd:process.cwd()}})+'\\n'))";
    return { command: process.execPath, args: ['-e', js, marker], env, ...(cwd ? { cwd } : {}) };
  };

  it('gives the process only the listed environment and a fresh working directory, removed afterwards', async () => {
    process.env.MCP_FLEET_TEST_NOT_PASSED = 'the prober’s own';
    try {
      const child = await ChildServer.start(reporter({ ONLY: 'this' }));
      const answer = await child.request('{"jsonrpc":"2.0","id":1,"method":"ping"}', 1, 10_000);
      const result = (answer.message as unknown as { result: { env: Record<string, string>; cwd: string } }).result;
      expect(result.env).toEqual({ ONLY: 'this' });
      expect(result.cwd).toMatch(/mcp-fleet-stdio-/);
      expect(existsSync(result.cwd)).toBe(true);
      expect(await child.close()).toMatchObject({ by: 'stdin_close', code: 0 });
      expect(existsSync(result.cwd)).toBe(false);
    } finally {
      delete process.env.MCP_FLEET_TEST_NOT_PASSED;
    }
  });

  it('keeps the environment’s values (credentials) out of everything a probe reports', async () => {
    const key = 'sk-test-0123456789abcdef';
    marker = `mcp-fleet-test-${randomUUID()}`;
    const js = `process.stderr.write('using key '+process.env.API_KEY+'\\n');console.log('key='+process.env.API_KEY);process.exit(1)`;
    const run = await handshake(
      { command: process.execPath, args: ['-e', js, marker], env: { API_KEY: key } },
      { revision: 'newest' },
    );
    expect(run.evidence?.stderr).toBe('using key [redacted]');
    expect(JSON.stringify(run)).not.toContain(key);
    expect(run.stdio?.findings[0]?.message).toContain('key=[redacted]');
  });
});
