// `mcp-fleet apply` as an operator runs it: a child process with its own environment, against a
// control (with agents) started here. `${NAME}` is expanded where the file is read — the operator's
// side — and travels as JSON that control takes literally; control's environment is never read.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Recorder, startRecorder, waitFor } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Monitor, startMonitor } from '../../control/test/support';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));
const VAR = 'MCP_FLEET_APPLY_TEST_SECRET';

function apply(file: string, api: string, env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, 'apply', '--fleet', file, '--api', api],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

let m: Monitor;
let target: Recorder;
let dir: string;
beforeAll(async () => {
  m = await startMonitor('pglite+memory', [{ name: 'modern' }], { interval: '2s' });
  target = await startRecorder();
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-apply-'));
});
afterAll(async () => {
  await m?.close();
  await target?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const fleetFile = (headers: string) => {
  const file = join(dir, `fleet-${randomBytes(4).toString('hex')}.yaml`);
  writeFileSync(
    file,
    `regions: [eu-west, us-east]
defaults: { interval: 2s, timeout: 1500ms }
servers:
  - name: echo
    url: ${target.url('/echo')}
    headers: { ${headers} }
policy: { allow: ["127.0.0.0/8"] }
`,
  );
  return file;
};

describe('mcp-fleet apply', () => {
  it(`expands \${NAME} from the operator's environment (control does not have it), and the value reaches the target`, async () => {
    expect(process.env[VAR]).toBeUndefined();
    // A secret that itself holds `${…}` travels as it is: the JSON form is never expanded again.
    const value = `op-secret-${randomBytes(8).toString('hex')}-\${NOT_EXPANDED}`;
    const r = await apply(fleetFile(`X-Operator: "Bearer \${${VAR}}"`), m.control.url, { [VAR]: value });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: ['echo'], retired: ['modern'] });
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
        `mcp-fleet: ${missing}: invalid fleet definition, nothing applied:\n  line 6: servers[0].headers.X-Operator: the environment variable ${VAR} is not set\n`,
      );
      const host = fleetFile('Host: metadata.internal');
      const h = await apply(host, fake.url(''), { [VAR]: 'x' });
      expect(h.code).toBe(2);
      expect(h.stderr).toMatch(/line 6: servers\[0\]\.headers\.Host: Host is set by the probe itself/);
      expect(fake.requests).toEqual([]);
    } finally {
      await fake.close();
    }
  });
});
