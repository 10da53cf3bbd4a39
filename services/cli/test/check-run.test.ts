// mcp-fleet check as a user runs it: a child process against fleet-sim's real servers (official
// SDK servers and a closed port), its exit status, its outputs and its report file.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defectTargetName, SIM_BEARER_TOKEN, type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { CONFORMANCE_CHECKS, checksFor } from '@mcp-fleet/probe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));

function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

let sim: Sim;
beforeAll(async () => {
  sim = await startSim({
    only: [
      'modern',
      'sessions-2025-11-25',
      'bearer',
      'closed',
      'hostile-unicode-escapes',
      defectTargetName('result_type_present'),
      defectTargetName('unknown_tool_protocol_error'),
    ],
  });
});
afterAll(async () => {
  await sim.close();
});
const url = (name: string) => sim.target(name).url;

const RAW = new Set<string>(CONFORMANCE_CHECKS.filter((c) => 'raw' in c && c.raw).map((c) => c.id));

describe('mcp-fleet check against real servers', () => {
  it('modern (the official SDK server): exit 0, --json pass true, the modern checks', async () => {
    const r = await run('check', url('modern'), '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.target).toBe(url('modern'));
    expect(json.protocol).toEqual({ requested: 'auto', negotiated: '2026-07-28', era: 'modern' });
    expect(json.pass).toBe(true);
    expect(json.checks.map((c: { id: string }) => c.id).sort()).toEqual(
      checksFor('modern')
        .map((c) => c.id)
        .sort(),
    );
    for (const c of json.checks) {
      expect(['MUST', 'SHOULD']).toContain(c.level);
      expect(['pass', 'fail', 'skip']).toContain(c.status);
      expect(typeof c.message).toBe('string');
      expect(c.status === 'fail' && c.level === 'MUST').toBe(false);
    }
  });

  it('modern, the table: header, a PASS verdict with counts, then Check · Level · Result · Message', async () => {
    const r = await run('check', url('modern'));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Protocol {2}auto → 2026-07-28 \(modern\)$/m);
    expect(r.stdout).toMatch(
      /^Verdict {3}PASS · \d+ passed · 0 MUST failed · \d+ warnings? · \d+ skipped · \d+ requests? in \d+ ms$/m,
    );
    expect(r.stdout).toMatch(/^Check\s+Level\s+Result\s+Message$/m);
    expect(r.stdout).toMatch(/^discover_succeeds\s+MUST\s+pass\s/m);
  });

  it('a legacy server on auto falls back to initialize and is judged by the legacy checks', async () => {
    const r = await run('check', url('sessions-2025-11-25'), '--json');
    const json = JSON.parse(r.stdout);
    expect(json.protocol).toEqual({ requested: 'auto', negotiated: '2025-11-25', era: 'legacy' });
    expect(json.checks.map((c: { id: string }) => c.id).sort()).toEqual(
      checksFor('legacy')
        .map((c) => c.id)
        .sort(),
    );
    expect(r.code).toBe(json.pass ? 0 : 1);
  });

  it('--protocol legacy on a modern server speaks its newest legacy revision', async () => {
    const r = await run('check', url('modern'), '--protocol', 'legacy', '--json');
    const json = JSON.parse(r.stdout);
    expect(json.protocol.requested).toBe('legacy');
    expect(json.protocol.era).toBe('legacy');
  });

  it('--no-probe: every raw check is skipped, and says why', async () => {
    const r = await run('check', url('modern'), '--no-probe', '--json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    const raw = json.checks.filter((c: { id: string }) => RAW.has(c.id));
    expect(raw.length).toBeGreaterThan(0);
    for (const c of raw) {
      expect(c.status).toBe('skip');
      expect(c.message).toMatch(/--no-probe/);
    }
  });

  it('--junit writes one testsuite with a testcase per check; --format conformance the suite shape', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-fleet-check-'));
    const file = join(dir, 'conformance.xml');
    const r = await run('check', url('modern'), '--junit', file, '--format', 'conformance');
    expect(r.code).toBe(0);
    const checks = JSON.parse(r.stdout);
    expect(checks.length).toBe(checksFor('modern').length);
    for (const c of checks) {
      expect(['SUCCESS', 'WARNING', 'SKIPPED']).toContain(c.status);
      expect(c.name).toBe(c.id);
      expect(c.specReferences[0].id).toEqual(expect.any(String));
    }
    const xml = readFileSync(file, 'utf8');
    expect(xml.match(/<testsuite /g)).toHaveLength(1);
    expect(xml.match(/<testcase classname="modern" /g)).toHaveLength(checksFor('modern').length);
    expect(xml).toMatch(/<testsuite [^>]* failures="0"/);
    expect(xml).not.toContain('<failure');
  });

  it('a closed port: exit 1, the cause and what to do, no table', async () => {
    const r = await run('check', url('closed'));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^Cause {5}unreachable: .*refused/m);
    expect(r.stdout).toMatch(/^ {10}Is the server running/m);
    expect(r.stdout).toMatch(/^Verdict {3}FAIL · could not connect, no check ran/m);
    expect(r.stdout).not.toMatch(/^Check/m);
    const file = join(mkdtempSync(join(tmpdir(), 'mcp-fleet-check-')), 'report.xml');
    const json = await run('check', url('closed'), '--json', '--junit', file);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ pass: false, outcome: 'unreachable', checks: [] });
    // CI reads a failing testcase, not "0 tests".
    expect(readFileSync(file, 'utf8')).toMatch(
      /tests="1" failures="1"[\s\S]*<testcase classname="connection" name="connect" [^>]*>\n\s+<failure message="unreachable: /,
    );
  });

  it('sends --header credentials and never prints them, even when the server echoes them', async () => {
    // bearer's 401 body echoes the Authorization header it got.
    const token = 'not-the-token-5c1e77';
    const dir = mkdtempSync(join(tmpdir(), 'mcp-fleet-check-'));
    const file = join(dir, 'report.xml');
    for (const output of [[], ['--json'], ['--format', 'conformance']]) {
      const r = await run(
        'check',
        url('bearer'),
        '--header',
        `Authorization: Bearer ${token}`,
        '--junit',
        file,
        ...output,
      );
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).not.toContain(token);
      expect(readFileSync(file, 'utf8')).not.toContain(token);
    }
  });

  it('the right credential reaches every request, raw probes too: the run passes', async () => {
    const r = await run('check', url('bearer'), '--header', `Authorization: Bearer ${SIM_BEARER_TOKEN}`, '--json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.pass).toBe(true);
    // A 401 on a raw probe would have failed its check: none did.
    expect(json.checks.filter((c: { status: string }) => c.status === 'fail')).toEqual([]);
    expect(r.stdout).not.toContain(SIM_BEARER_TOKEN);
  });

  it('a server answering with NUL and lone surrogates: the table and the JUnit report carry neither', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mcp-fleet-check-')), 'report.xml');
    const r = await run('check', url('hostile-unicode-escapes'), '--junit', file);
    expect([0, 1]).toContain(r.code);
    expect(r.stderr).toBe('');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence
    const control = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
    expect(r.stdout).not.toMatch(control);
    const xml = readFileSync(file, 'utf8');
    expect(xml).not.toMatch(control);
    expect(xml).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    expect(xml.trimEnd().endsWith('</testsuites>')).toBe(true);
  });

  it('a MUST defect (results without resultType): exit 1, its FAIL row first, a <failure> in the report', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mcp-fleet-check-')), 'report.xml');
    const r = await run('check', url(defectTargetName('result_type_present')), '--junit', file);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^Verdict {3}FAIL · \d+ passed · [1-9]\d* MUST failed/m);
    const rows = r.stdout.split('\n\n')[1]!.split('\n');
    expect(rows[0]).toMatch(/^Check\s+Level\s+Result\s+Message$/);
    expect(rows[1]).toMatch(/^\w+\s+MUST\s+FAIL\s/);
    expect(r.stdout).toMatch(/^result_type_present\s+MUST\s+FAIL\s/m);
    expect(readFileSync(file, 'utf8')).toMatch(
      /<testcase classname="modern" name="result_type_present" [^>]*>\n\s+<failure message="[^"]*" type="MUST">/,
    );
  });

  it('a SHOULD defect (an unknown tool as isError): a warning, exit 0, and CI passes', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mcp-fleet-check-')), 'report.xml');
    const target = url(defectTargetName('unknown_tool_protocol_error'));
    const r = await run('check', target, '--junit', file);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^unknown_tool_protocol_error\s+SHOULD\s+WARN\s/m);
    const xml = readFileSync(file, 'utf8');
    expect(xml).toMatch(
      /<testcase classname="modern" name="unknown_tool_protocol_error" [^>]*>\n\s+<system-out>WARNING \(SHOULD\): /,
    );
    expect(xml).not.toContain('<failure');
    const official = JSON.parse((await run('check', target, '--format', 'conformance')).stdout);
    expect(official.find((c: { id: string }) => c.id === 'unknown_tool_protocol_error').status).toBe('WARNING');
  });
});
