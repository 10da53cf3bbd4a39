// `mcp-fleet apply` as an operator runs it: a child process with its own environment, against a
// control (with agents) started here. `${NAME}` is expanded where the file is read — the operator's
// side — and travels as JSON that control takes literally; control's environment is never read.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestMonitor, type TestMonitor } from '@mcp-fleet/monitor/testing';
import { type Recorder, startRecorder, waitFor } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));
const VAR = 'MCP_FLEET_APPLY_TEST_SECRET';

function run(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

const apply = (file: string, api: string, env: Record<string, string> = {}, flags: string[] = ['--yes', '--json']) =>
  run(['apply', '--fleet', file, '--api', api, ...flags], env);

/**
 * The CLI on a terminal: `script` (util-linux) gives it a pseudo-terminal as stdin, and what is
 * written to script's stdin is what the operator types.
 */
function onTerminal(args: string[], typed: string) {
  return new Promise<{ code: number; output: string }>((resolve) => {
    const command = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
      // Typed once the question is on the screen, as a person would, and then the keyboard is left alone.
      if (output.includes('Type yes to apply: ') && child.stdin.writable) child.stdin.end(typed);
    });
    child.stderr.on('data', (d) => (output += d));
    child.on('exit', (code) => resolve({ code: code ?? 1, output: output.replaceAll('\r', '') }));
  });
}

let m: TestMonitor;
let target: Recorder;
let dir: string;
beforeAll(async () => {
  m = await startTestMonitor('postgres+nats', [{ name: 'modern' }, { name: 'legacy-sse' }], { interval: '2s' });
  target = await startRecorder();
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-apply-'));
});
afterAll(async () => {
  await m?.close();
  await target?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const write = (text: string) => {
  const file = join(dir, `fleet-${randomBytes(4).toString('hex')}.yaml`);
  writeFileSync(file, text);
  return file;
};

const fleetFile = (headers: string) =>
  write(
    `regions: [eu-west, us-east]
defaults: { interval: 2s, timeout: 1500ms }
servers:
  - name: echo
    url: ${target.url('/echo')}
    headers: { ${headers} }
policy: { allow: ["127.0.0.0/8"] }
`,
  );

const liveServers = async () =>
  ((await m.api<{ servers: { name: string }[] }>('/api/servers')).body.servers ?? []).map((x) => x.name).sort();

const newcomer = () =>
  write(`regions: [eu-west, us-east]
servers:
  - name: newcomer
    url: ${target.url('/new')}
policy: { allow: ["127.0.0.0/8"] }
`);

describe('mcp-fleet apply asks before it retires (issue 13 point 1)', () => {
  it('--dry-run prints the plan, server by server, and changes nothing', async () => {
    const file = newcomer();
    const r = await apply(file, m.control.url, {}, ['--dry-run']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `Plan for ${file} (dry run, nothing applied):
  +  newcomer    create; test newest added
  -  legacy-sse  retire (its history is kept)
  -  modern      retire (its history is kept)
Servers: 1 to create, 2 to retire, 0 unchanged.
`,
    );
    expect(await liveServers()).toEqual(['legacy-sse', 'modern']);
    const json = await apply(file, m.control.url, {}, ['--dry-run', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      dryRun: true,
      created: ['newcomer'],
      retired: ['legacy-sse', 'modern'],
    });
  });

  it('without a terminal and without --yes, a fleet that retires servers is refused: exit 2, nothing applied', async () => {
    const file = newcomer();
    const r = await apply(file, m.control.url, {}, []);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `mcp-fleet: applying ${file} would retire 2 servers (legacy-sse, modern); nothing applied.
Run it with --yes to apply it anyway (from a script), or with --dry-run to see the whole plan.
`,
    );
    expect(await liveServers()).toEqual(['legacy-sse', 'modern']);
  });

  it('on a terminal it shows the plan and asks; anything but yes applies nothing', async () => {
    const file = newcomer();
    const r = await onTerminal(['apply', file, '--api', m.control.url], 'no\n');
    expect(r.output).toContain(`Plan for ${file}:\n  +  newcomer`);
    expect(r.output).toContain('Retire 2 servers (legacy-sse, modern)? Type yes to apply: ');
    expect(r.output).toContain('Nothing applied.');
    expect(r.code).toBe(1);
    expect(await liveServers()).toEqual(['legacy-sse', 'modern']);
  });

  it('names the file when control cannot take it', async () => {
    const file = newcomer();
    const r = await apply(file, 'http://127.0.0.1:9', {}, ['--yes']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `mcp-fleet: ${file} not applied: control is not answering at http://127.0.0.1:9 (is mcp-fleet up or control running?)\n`,
    );
  });
});

describe('mcp-fleet validate (issue 13 point 1)', () => {
  it('checks a fleet file offline: exit 0 when valid, 2 with file:line:column lines when not', async () => {
    const good = newcomer();
    // No control anywhere: validate never asks one.
    const ok = await run(['validate', good], { MCP_FLEET_API_PORT: '9' });
    expect(ok).toEqual({ code: 0, stdout: `${good}: valid: 2 regions, 1 server, 1 test\n`, stderr: '' });
    const bad = write(`regions: [eu-west]
servers:
  - name: x
    url: https://x.example.com/mcp
    timeout: 10
    tests:
      - revison: newest
`);
    const r = await run(['validate', bad]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe(
      `${bad}:5:14: servers[0].timeout: 10 has no unit: write a duration such as 10s (ms, s, m or h)
${bad}:7:9: servers[0].tests[0]: unknown key \`revison\`: did you mean \`revision\`?
${bad}: invalid: 2 problems
`,
    );
    const empty = write('# to do\n');
    expect((await run(['validate', empty])).stdout).toMatch(
      new RegExp(`^${empty.replaceAll('.', '\\.')}: the fleet is empty: it needs at least \`servers:\``),
    );
    const syntax = write('servers:\n  - name: x\n  url: y\n');
    expect((await run(['validate', syntax])).stdout).toContain(
      `${syntax}:3:1: All mapping items must start at the same column`,
    );
  });
});

describe('mcp-fleet apply', () => {
  it(`expands \${NAME} from the operator's environment (control does not have it), and the value reaches the target`, async () => {
    expect(process.env[VAR]).toBeUndefined();
    // A secret that itself holds `${…}` travels as it is: the JSON form is never expanded again.
    const value = `op-secret-${randomBytes(8).toString('hex')}-\${NOT_EXPANDED}`;
    const r = await apply(fleetFile(`X-Operator: "Bearer \${${VAR}}"`), m.control.url, { [VAR]: value });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: ['echo'], retired: ['legacy-sse', 'modern'] });
    await waitFor(
      'the target to get the expanded header',
      () => target.requests.some((q) => q.url === '/echo' && q.headers['x-operator'] === `Bearer ${value}`),
      20_000,
    );
    expect(target.requests.every((q) => q.headers['x-operator'] === `Bearer ${value}`)).toBe(true);
  });

  it("checks the file on the operator's side: a missing variable or a refused header exits 2 naming file, line and field, and sends nothing", async () => {
    // It stands in for control: whatever apply sends arrives here.
    const fake = await startRecorder();
    try {
      const missing = fleetFile(`X-Operator: "Bearer \${${VAR}}"`);
      const r = await apply(missing, fake.url(''));
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `mcp-fleet: invalid fleet definition, nothing applied:\n  ${missing}:6:28: servers[0].headers.X-Operator: the environment variable ${VAR} is not set\n`,
      );
      const host = fleetFile('Host: metadata.internal');
      const h = await apply(host, fake.url(''), { [VAR]: 'x' });
      expect(h.code).toBe(2);
      expect(h.stderr).toContain(`${host}:6:22: servers[0].headers.Host: Host is set by the probe itself`);
      expect(fake.requests).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('on a terminal, yes applies the plan it showed', async () => {
    const file = newcomer();
    const r = await onTerminal(['apply', file, '--api', m.control.url], 'yes\n');
    expect(r.output).toContain('Retire 1 server (echo)? Type yes to apply: ');
    expect(r.output).toContain(`Applied ${file}:\nServers: 1 created, 1 retired, 0 unchanged.`);
    expect(r.code).toBe(0);
    expect(await liveServers()).toEqual(['newcomer']);
  });
});
