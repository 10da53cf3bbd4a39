// mcp-fleet check --cross-era as a user runs it: a child process against fleet-sim's real servers.
// A dual-era server that serves different tools per era fails naming the tool and the protocol; the
// official SDK server that serves one surface to both eras passes; --protocols pins the comparison;
// hostile and unreachable servers fail cleanly; bad flags are usage errors before any request.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DUAL_ERA_CHANGED_TOOL, DUAL_ERA_LEGACY_ONLY_TOOL, type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { CROSS_ERA_CHECK_IDS, type CrossEraRun } from '@mcp-fleet/probe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crossEraJson, formatCrossEra } from '../src/cross-era-report';

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
    only: ['modern', 'dual-era-diff', 'sessions-2025-11-25', 'hostile-wrong-id', 'hostile-surface', 'closed'],
  });
});
afterAll(async () => {
  await sim.close();
});
const url = (name: string) => sim.target(name).url;

interface Difference {
  kind: string;
  name: string;
  era: string;
  detail: string;
}
interface Check {
  id: string;
  level: string;
  status: string;
  message: string;
  differences: Difference[];
}
const byId = (json: { crossEra: { checks: Check[] } }) =>
  Object.fromEntries(json.crossEra.checks.map((c) => [c.id, c]));

describe('mcp-fleet check --cross-era', () => {
  it('dual-era-diff: tools_match and tool_definitions_match fail naming the tool and the protocol; exit 1', async () => {
    const r = await run('check', url('dual-era-diff'), '--cross-era', '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(json.pass).toBe(false);
    expect(json.crossEra.pass).toBe(false);
    expect(json.crossEra.protocols.map((p: { protocol: string }) => p.protocol)).toEqual([
      '2025-03-26',
      '2025-06-18',
      '2025-11-25',
      '2026-07-28',
    ]);
    const checks = byId(json);
    expect(Object.keys(checks)).toEqual([...CROSS_ERA_CHECK_IDS]);
    expect(checks.cross_era_connect!.status).toBe('pass');
    expect(checks.tools_match).toMatchObject({ level: 'MUST', status: 'fail' });
    expect(checks.tools_match!.differences).toEqual([
      {
        kind: 'tool',
        name: DUAL_ERA_LEGACY_ONLY_TOOL,
        era: '2026-07-28',
        detail: 'not listed in 2026-07-28 (listed in 2025-03-26, 2025-06-18, 2025-11-25)',
      },
    ]);
    expect(checks.tool_definitions_match).toMatchObject({ level: 'MUST', status: 'fail' });
    expect(checks.tool_definitions_match!.differences).toEqual([
      expect.objectContaining({ kind: 'tool', name: DUAL_ERA_CHANGED_TOOL, era: '2026-07-28' }),
    ]);
    expect(checks.tool_definitions_match!.differences[0]!.detail).toMatch(/required parameter `region` added/);
    // Everything else is the same in both eras.
    for (const id of [
      'resources_match',
      'resource_templates_match',
      'prompts_match',
      'capabilities_match',
      'auto_picks_modern',
    ]) {
      expect(checks[id]!.status, id).toBe('pass');
    }
  });

  it('dual-era-diff in the terminal: the failing checks first, each difference under its check', async () => {
    const r = await run('check', url('dual-era-diff'), '--cross-era', '--protocols', '2025-11-25,2026-07-28');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^Cross-era {2,}FAIL · 6 passed · 2 MUST failed · 0 warnings · 0 skipped · 2 protocols/m);
    expect(r.stdout).toMatch(/^2026-07-28 +2026-07-28 +modern +success +2 tools, 1 resource/m);
    expect(r.stdout).toMatch(
      /^tools_match +MUST +FAIL +tool `export_csv`: not listed in 2026-07-28 \(listed in 2025-11-25\)$/m,
    );
    expect(r.stdout).toMatch(
      /^tool_definitions_match +MUST +FAIL +tool `lookup`: differs in 2026-07-28 from 2025-11-25: required parameter `region` added$/m,
    );
    // All four protocols: the missing tool is missing from one, so its one difference is the message;
    // a check with several lists each under it.
    const all = await run('check', url('dual-era-diff'), '--cross-era');
    expect(all.stdout).not.toMatch(/└ tool export_csv/);
    const lines = r.stdout.split('\n');
    expect(lines.findIndex((l) => l.startsWith('tools_match'))).toBeLessThan(
      lines.findIndex((l) => l.startsWith('cross_era_connect')),
    );
  });

  it('modern (one surface for both eras): every cross-era check passes, exit 0', async () => {
    const r = await run('check', url('modern'), '--cross-era', '--json');
    expect(r.stderr).toBe('');
    const json = JSON.parse(r.stdout);
    expect(json.crossEra.pass).toBe(true);
    for (const c of json.crossEra.checks as Check[]) expect(c.status, `${c.id}: ${c.message}`).toBe('pass');
    expect(json.pass).toBe(true);
    expect(r.code).toBe(0);
  });

  it('pins the protocols compared: a legacy-only subset compares two legacy revisions, one protocol skips', async () => {
    const two = JSON.parse(
      (await run('check', url('dual-era-diff'), '--cross-era', '--protocols', '2025-06-18,2025-11-25', '--json'))
        .stdout,
    );
    expect(two.crossEra.protocols.map((p: { protocol: string }) => p.protocol)).toEqual(['2025-06-18', '2025-11-25']);
    expect(two.crossEra.pass).toBe(true);
    expect(byId(two).auto_picks_modern!.status).toBe('skip');

    const one = JSON.parse(
      (await run('check', url('dual-era-diff'), '--cross-era', '--protocols', '2026-07-28', '--json')).stdout,
    );
    expect(byId(one).tools_match).toMatchObject({
      status: 'skip',
      message: 'only 2026-07-28 connected: nothing to compare',
    });
    expect(one.crossEra.pass).toBe(true);
  });

  it('a pinned protocol the server does not speak fails cross_era_connect, naming it', async () => {
    const r = await run(
      'check',
      url('sessions-2025-11-25'),
      '--cross-era',
      '--protocols',
      '2025-11-25,2026-07-28',
      '--json',
    );
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    const connect = byId(json).cross_era_connect!;
    expect(connect).toMatchObject({ level: 'MUST', status: 'fail' });
    expect(connect.differences.map((d) => d.era)).toEqual(['2026-07-28']);
    expect(json.crossEra.protocols[1]).toMatchObject({ protocol: '2026-07-28', negotiated: null });
  });

  it('hostile servers fail cleanly: exit 1, JSON that parses, every check a verdict', async () => {
    for (const name of ['hostile-wrong-id', 'closed']) {
      const r = await run('check', url(name), '--cross-era', '--json');
      expect(r.stderr, name).toBe('');
      expect(r.code, name).toBe(1);
      const json = JSON.parse(r.stdout);
      expect(json.crossEra.pass, name).toBe(false);
      expect(byId(json).cross_era_connect!.status, name).toBe('fail');
      for (const c of json.crossEra.checks as Check[]) expect(['pass', 'fail', 'skip']).toContain(c.status);
    }
    // Hostile lists (duplicates, NUL, a looping cursor) in both eras: the surfaces are read and compared.
    const r = await run(
      'check',
      url('hostile-surface'),
      '--cross-era',
      '--protocols',
      '2025-11-25,2026-07-28',
      '--json',
    );
    expect(r.stderr).toBe('');
    const json = JSON.parse(r.stdout);
    expect(byId(json).cross_era_connect!.status).toBe('pass');
    expect(byId(json).tools_match!.status).toBe('pass');
    expect(r.stdout).not.toMatch(/\\u0000/);
  });

  it('refuses bad flags before any request (exit 2)', async () => {
    const cases: [string[], RegExp][] = [
      [['--protocols', '2025-11-25'], /--protocols compares protocols: add --cross-era/],
      [['--cross-era', '--protocols', '2025-11-25,1999-01-01'], /--protocols takes one of .*, got 1999-01-01/],
      [['--cross-era', '--protocols', ','], /--protocols takes a comma-separated list/],
      [['--cross-era', '--format', 'conformance'], /--cross-era reports in the table and --json only/],
    ];
    for (const [args, message] of cases) {
      const r = await run('check', url('closed'), ...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(sim.requests('closed')).toHaveLength(0);
  });
});

describe('the cross-era report', () => {
  const many: CrossEraRun = {
    pass: false,
    protocols: [
      { protocol: '2025-11-25', negotiated: '2025-11-25', era: 'legacy', outcome: 'success', message: '12 tools' },
      {
        protocol: '2026-07-28',
        negotiated: null,
        era: null,
        outcome: 'unreachable',
        message: 'the connection\nwas \u001b[31mrefused',
      },
    ],
    checks: [
      { id: 'cross_era_connect', level: 'MUST', status: 'pass', message: 'ok', differences: [] },
      {
        id: 'tools_match',
        level: 'MUST',
        status: 'fail',
        message: 'tool `t0`: not listed in 2026-07-28',
        differences: Array.from({ length: 12 }, (_, i) => ({
          kind: 'tool' as const,
          name: `t${i}`,
          era: '2026-07-28',
          detail: 'not listed',
        })),
      },
      { id: 'capabilities_match', level: 'SHOULD', status: 'fail', message: 'capability `logging`', differences: [] },
    ],
    requests: 9,
    millis: 12,
  };

  it("lists several differences under their check, ten at most, and keeps a server's words on one line", () => {
    const text = formatCrossEra(many);
    expect(text).toMatch(
      /^Cross-era {2}FAIL · 1 passed · 1 MUST failed · 1 warning · 0 skipped · 2 protocols · 9 requests in 12 ms$/m,
    );
    expect(text.match(/└ tool t\d+ · 2026-07-28 · not listed/g)).toHaveLength(10);
    expect(text).toMatch(/└ … and 2 more differences \(--json lists them\)/);
    expect(text).toMatch(/^capabilities_match +SHOULD +WARN/m);
    expect(text).not.toContain(String.fromCharCode(27));
    expect(text).toMatch(/the connection was \ufffd\[31mrefused/);
    expect(crossEraJson(many).checks[1]!.differences).toHaveLength(12);
  });
});
