// `mcp-fleet secrets init`, run as a process (as compose's init service runs it): every secret
// generated once and kept, 0600, each role's directory holding only what its process reads, a
// value from the environment winning, a bad one refused before anything is written, no value ever
// printed.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh directory for the secrets. */
function fresh(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-fleet-secrets-'));
  dirs.push(dir);
  return join(dir, 'secrets');
}

/** The CLI with only the environment given (none of the test runner's MCP_FLEET_SECRET_KEY). */
async function init(dir: string, env: Record<string, string> = {}, extra: string[] = []) {
  const args = [CLI, 'secrets', 'init', '--dir', dir, '--region', 'eu-west', '--region', 'us-east', ...extra];
  try {
    const { stdout, stderr } = await run(process.execPath, args, {
      env: { PATH: process.env.PATH ?? '', ...env } as unknown as NodeJS.ProcessEnv,
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Every file under the directory, relative path → content and mode. */
function snapshot(dir: string): Record<string, { text: string; mode: number }> {
  const out: Record<string, { text: string; mode: number }> = {};
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = join(rel, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[path] = { text: readFileSync(join(dir, path), 'utf8'), mode: statSync(join(dir, path)).mode & 0o777 };
    }
  };
  walk('');
  return out;
}

const ROLES = {
  control: [
    'MCP_FLEET_ADMIN_TOKEN',
    'MCP_FLEET_READ_TOKEN',
    'MCP_FLEET_SECRET_KEY',
    'MCP_FLEET_SECRET_KEY_PREVIOUS',
    'NATS_PASSWORD',
    'PGPASSWORD',
  ],
  web: [
    'MCP_FLEET_API_TOKEN',
    'MCP_FLEET_READ_TOKEN',
    'MCP_FLEET_SECRET_KEY',
    'MCP_FLEET_SECRET_KEY_PREVIOUS',
    'MCP_FLEET_SESSION_KEY',
    'MCP_FLEET_WEB_PASSWORD',
    'PGPASSWORD',
  ],
  'agent-eu-west': ['NATS_PASSWORD'],
  'agent-us-east': ['NATS_PASSWORD'],
  nats: [
    'MCP_FLEET_NATS_AGENT_EU_WEST_PASSWORD',
    'MCP_FLEET_NATS_AGENT_US_EAST_PASSWORD',
    'MCP_FLEET_NATS_CONTROL_PASSWORD',
    'MCP_FLEET_NATS_ROUTE_PASSWORD',
  ],
  postgres: ['POSTGRES_PASSWORD'],
  grafana: ['GRAFANA_ADMIN_PASSWORD'],
};

describe('mcp-fleet secrets init', () => {
  it('generates every secret once (0600), gives each role only what its process reads, and keeps them', async () => {
    const dir = fresh();
    const first = await init(dir);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const files = snapshot(dir);
    for (const [role, names] of Object.entries(ROLES))
      expect(
        Object.keys(files)
          .filter((f) => f.startsWith(`${role}/`))
          .map((f) => f.slice(role.length + 1))
          .sort(),
        role,
      ).toEqual([...names].sort());
    for (const [path, { mode }] of Object.entries(files)) expect(mode, path).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const master = (name: string) => files[name]!.text;
    // Each copy is its secret: the dashboard's control token is the admin token, PGPASSWORD Postgres's.
    expect(files['web/MCP_FLEET_API_TOKEN']!.text).toBe(master('MCP_FLEET_ADMIN_TOKEN'));
    expect(files['control/PGPASSWORD']!.text).toBe(master('POSTGRES_PASSWORD'));
    expect(files['agent-eu-west/NATS_PASSWORD']!.text).toBe(master('MCP_FLEET_NATS_AGENT_EU_WEST_PASSWORD'));
    expect(files['control/NATS_PASSWORD']!.text).toBe(master('MCP_FLEET_NATS_CONTROL_PASSWORD'));
    expect(files['control/MCP_FLEET_SECRET_KEY_PREVIOUS']!.text).toBe('');
    // Strong and distinct, and what their readers accept: 32 bytes, a 32-byte key, NATS-safe passwords.
    const values = Object.keys(files)
      .filter((f) => !f.includes('/') && f !== 'MCP_FLEET_SECRET_KEY_PREVIOUS')
      .map(master);
    expect(new Set(values).size).toBe(values.length);
    for (const v of values) expect(v.length).toBeGreaterThanOrEqual(43);
    expect(Buffer.from(master('MCP_FLEET_SECRET_KEY'), 'base64')).toHaveLength(32);
    expect(master('MCP_FLEET_NATS_CONTROL_PASSWORD')).toMatch(/^[a-z][0-9a-f]{64}$/);
    // The cluster's route password goes into route URLs as it is: nothing in it needs escaping.
    expect(master('MCP_FLEET_NATS_ROUTE_PASSWORD')).toMatch(/^[a-z][0-9a-f]{64}$/);
    expect(new URL(`nats-route://r:${master('MCP_FLEET_NATS_ROUTE_PASSWORD')}@nats-1:6222`).password).toBe(
      master('MCP_FLEET_NATS_ROUTE_PASSWORD'),
    );
    // Named, never printed.
    expect(first.stdout).toContain('generated MCP_FLEET_ADMIN_TOKEN');
    for (const v of values) expect(first.stdout).not.toContain(v);

    const second = await init(dir);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('generated none');
    expect(snapshot(dir)).toEqual(files);
  });

  it('takes a value from the environment over the kept one, and keeps the old credentials key opening', async () => {
    const dir = fresh();
    await init(dir);
    const before = snapshot(dir);
    const admin = 'an-admin-token-from-dot-env-0123456789';
    const key = Buffer.alloc(32, 7).toString('base64');
    const run2 = await init(dir, {
      MCP_FLEET_ADMIN_TOKEN: admin,
      MCP_FLEET_SECRET_KEY: key,
      MCP_FLEET_NATS_AGENT_US_EAST_PASSWORD: 'Us-east_from_dot_env',
    });
    expect(run2.stderr).toBe('');
    expect(run2.stdout).toContain(
      'from the environment MCP_FLEET_ADMIN_TOKEN, MCP_FLEET_SECRET_KEY, MCP_FLEET_NATS_AGENT_US_EAST_PASSWORD',
    );
    expect(run2.stdout).not.toContain(admin);
    const after = snapshot(dir);
    for (const f of ['MCP_FLEET_ADMIN_TOKEN', 'control/MCP_FLEET_ADMIN_TOKEN', 'web/MCP_FLEET_API_TOKEN'])
      expect(after[f]!.text, f).toBe(admin);
    for (const f of ['MCP_FLEET_SECRET_KEY', 'control/MCP_FLEET_SECRET_KEY', 'web/MCP_FLEET_SECRET_KEY'])
      expect(after[f]!.text, f).toBe(key);
    expect(after['agent-us-east/NATS_PASSWORD']!.text).toBe('Us-east_from_dot_env');
    expect(after['nats/MCP_FLEET_NATS_AGENT_US_EAST_PASSWORD']!.text).toBe('Us-east_from_dot_env');
    // What the generated key sealed still unseals: it is the previous key now.
    for (const f of ['control/MCP_FLEET_SECRET_KEY_PREVIOUS', 'web/MCP_FLEET_SECRET_KEY_PREVIOUS'])
      expect(after[f]!.text, f).toBe(before.MCP_FLEET_SECRET_KEY!.text);
    // The rest is kept.
    expect(after['web/MCP_FLEET_WEB_PASSWORD']).toEqual(before['web/MCP_FLEET_WEB_PASSWORD']);
    expect(after['agent-eu-west/NATS_PASSWORD']).toEqual(before['agent-eu-west/NATS_PASSWORD']);
    for (const [path, { mode }] of Object.entries(after)) expect(mode, path).toBe(0o600);
    // The environment's value, once written, is kept when .env no longer sets it.
    await init(dir);
    expect(snapshot(dir)).toEqual(after);
  });

  it('refuses a bad value from the environment with a sentence naming it, writing nothing', async () => {
    const dir = fresh();
    await init(dir);
    const before = snapshot(dir);
    const same = 'the-same-token-for-both-scopes-0123456789';
    const cases: [Record<string, string>, RegExp][] = [
      [
        { MCP_FLEET_WEB_PASSWORD: 'short-pw' },
        /^mcp-fleet: MCP_FLEET_WEB_PASSWORD is 8 characters; it needs at least 12/,
      ],
      [{ MCP_FLEET_ADMIN_TOKEN: 'too-short-a-token' }, /^mcp-fleet: MCP_FLEET_ADMIN_TOKEN is 17 characters/],
      [
        { MCP_FLEET_ADMIN_TOKEN: same, MCP_FLEET_READ_TOKEN: same },
        /^mcp-fleet: MCP_FLEET_ADMIN_TOKEN and MCP_FLEET_READ_TOKEN are the same token with different scopes/,
      ],
      [{ MCP_FLEET_SESSION_KEY: 'not-32-characters' }, /^mcp-fleet: MCP_FLEET_SESSION_KEY needs at least 32/],
      [{ MCP_FLEET_SECRET_KEY: 'not-a-key-at-all!' }, /^mcp-fleet: MCP_FLEET_SECRET_KEY must be 32 random bytes/],
      [
        { MCP_FLEET_NATS_CONTROL_PASSWORD: '1starts-with-a-digit' },
        /^mcp-fleet: MCP_FLEET_NATS_CONTROL_PASSWORD must be 16 or more letters, digits, - or _, starting with a letter/,
      ],
      [{ MCP_FLEET_NATS_AGENT_EU_WEST_PASSWORD: 'has a space in it ok' }, /^mcp-fleet: MCP_FLEET_NATS_AGENT_EU_WEST/],
      [{ MCP_FLEET_NATS_AGENT_EU_WEST_PASSWORD: 'x}include "/etc"' }, /^mcp-fleet: MCP_FLEET_NATS_AGENT_EU_WEST/],
      // It would end the route URL's password and name another host.
      [
        { MCP_FLEET_NATS_ROUTE_PASSWORD: 'route-password@evil.example:6222' },
        /^mcp-fleet: MCP_FLEET_NATS_ROUTE_PASSWORD/,
      ],
    ];
    for (const [env, message] of cases) {
      const { code, stdout, stderr } = await init(dir, env);
      const what = Object.keys(env).join();
      expect(code, what).toBe(2);
      expect(stderr, what).toMatch(message);
      expect(stderr, what).toMatch(/; nothing written\n$/);
      for (const v of Object.values(env)) expect(stdout + stderr, what).not.toContain(v);
      expect(snapshot(dir), what).toEqual(before);
    }
  });

  it('owns the role files as told, and refuses a bad owner, region or action', async () => {
    const dir = fresh();
    const uid = process.getuid?.() ?? 0;
    const gid = process.getgid?.() ?? 0;
    const ok = await init(dir, {}, ['--owner', `${uid}:${gid}`, '--owner', `grafana=${uid}`]);
    expect(ok.code).toBe(0);
    expect(statSync(join(dir, 'web', 'MCP_FLEET_WEB_PASSWORD')).uid).toBe(uid);
    for (const [args, message] of [
      [['--owner', 'node'], /--owner takes <uid>\[:<gid>\] or <role>=<uid>\[:<gid>\], got node/],
      [['--region', 'EU West'], /invalid region "EU West"/],
    ] as const) {
      const bad = await init(fresh(), {}, [...args]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(message);
    }
    const noAction = await run(process.execPath, [CLI, 'secrets', '--dir', fresh()]).catch((e) => e);
    expect(noAction.code).toBe(2);
    expect(noAction.stderr).toMatch(/secrets takes one action: init/);
  });
});
