// `mcp-fleet credentials add|list|rm` as an operator runs it: a child process with its own
// environment (MCP_FLEET_API_URL, MCP_FLEET_API_TOKEN) against a control started here with tokens.
// No value it is given ever comes back out, and control's refusals come with their exit codes.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemoryBus } from '@mcp-fleet/bus';
import { ApiAuth, type Control, parseFleet, startControl } from '@mcp-fleet/control';
import { createLogger } from '@mcp-fleet/log';
import { openStore, type Store } from '@mcp-fleet/store';
import { LOOPBACK_FLOOR, testKeyring } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));
const ADMIN = 'admin-token-for-the-cli-credentials-test-012345';
const READ = 'read-token-for-the-cli-credentials-test-0123456';
const SECRET = 'cli-planted-secret-value-7f3a9c';

let dir: string;
let store: Store;
let bus: ReturnType<typeof createMemoryBus>;
let control: Control;
const log = createLogger('test', 'silent');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-cli-credentials-'));
  store = await openStore({ dataDir: join(dir, 'pgdata'), keyring: testKeyring() });
  await store.migrate();
  bus = createMemoryBus({ log });
  control = await startControl({
    store,
    bus,
    log,
    fleet: parseFleet('regions: [eu-west]\nservers: []\n', 'cli credentials test'),
    port: 0,
    probeFloor: LOOPBACK_FLOOR,
    auth: new ApiAuth({
      tokens: [
        { scope: 'admin', token: ADMIN },
        { scope: 'read', token: READ },
      ],
    }),
  });
});

afterAll(async () => {
  await control?.stop();
  await bus?.close();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function run(args: string[], token = ADMIN) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, 'credentials', ...args],
      { env: { ...process.env, MCP_FLEET_API_URL: control.url, MCP_FLEET_API_TOKEN: token }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

describe('mcp-fleet credentials', () => {
  let id: string;

  it('adds one, printing its id and header names, never its value', async () => {
    const r = await run([
      'add',
      'api-key',
      '--url',
      'https://mcp.example.com/mcp',
      '--header',
      `Authorization: Bearer ${SECRET}`,
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const c = JSON.parse(r.stdout) as { id: string; origin: string; headerNames: string[] };
    expect(c).toMatchObject({ origin: 'https://mcp.example.com', headerNames: ['Authorization'] });
    id = c.id;
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it('lists them with a read token, without values', async () => {
    const r = await run(['list'], READ);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ID\s+Name\s+Origin\s+Headers\s+Servers$/m);
    expect(r.stdout).toContain(id);
    expect(r.stdout).toContain('https://mcp.example.com');
    expect(r.stdout).not.toContain(SECRET);
  });

  it("says control's refusals with their exit codes", async () => {
    const byReader = await run(['add', 'other', '--origin', 'https://a.example', '--header', 'X: y'], READ);
    expect(byReader.code).toBe(1);
    expect(byReader.stderr).toMatch(/admin scope.*MCP_FLEET_API_TOKEN/);
    const badHeader = await run(['add', 'other', '--origin', 'https://a.example', '--header', 'Host: evil']);
    expect(badHeader.code).toBe(2);
    expect(badHeader.stderr).toMatch(/set by the probe/);
    const duplicate = await run(['add', 'api-key', '--origin', 'https://a.example', '--header', 'X: y']);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toMatch(/already exists/);
  });

  it('refuses bad arguments before asking control (exit 2)', async () => {
    for (const args of [
      [],
      ['frob'],
      ['add'],
      ['add', 'x', '--header', 'X: y'],
      ['add', 'x', '--url', 'https://a.example', '--origin', 'https://a.example', '--header', 'X: y'],
      ['add', 'x', '--url', 'https://a.example'],
      ['list', '--header', 'X: y'],
      ['rm'],
    ]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^mcp-fleet credentials: /);
    }
  });

  it('--help prints its usage', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage:\n {2}mcp-fleet credentials add <name>/);
  });

  it('removes one', async () => {
    const r = await run(['rm', id]);
    expect(r.code, r.stderr).toBe(0);
    const listed = await run(['list', '--json']);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    const again = await run(['rm', id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no credential/);
  });
});
