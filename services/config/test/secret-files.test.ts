// The secret-file rule (<VAR>_FILE: a mounted secret) every role's environment follows.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, controlEnv, parseEnv, secretEnv, secretFromEnv } from '../src';

/** Every secret that may come from a file, as the README's table says. */
const SECRETS = [
  'MCP_FLEET_ADMIN_TOKEN',
  'MCP_FLEET_READ_TOKEN',
  'MCP_FLEET_API_TOKEN',
  'MCP_FLEET_WEB_PASSWORD',
  'MCP_FLEET_METRICS_TOKEN',
  'MCP_FLEET_SESSION_KEY',
  'MCP_FLEET_SECRET_KEY_PREVIOUS',
  'NATS_PASSWORD',
  'PGPASSWORD',
];

describe('secret files (<VAR>_FILE)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-fleet-secret-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };

  it('reads every listed variable from its file when the variable itself is unset, dropping one newline', () => {
    const env: Record<string, string> = { OTHER_FILE: file('other', 'x') };
    for (const name of SECRETS) env[`${name}_FILE`] = file(name, `value of ${name}\n`);
    const resolved = secretEnv(env);
    for (const name of SECRETS) expect(resolved[name], name).toBe(`value of ${name}`);
    // Only the listed variables: a file for anything else is not read.
    expect(resolved.OTHER).toBeUndefined();
    // A copy: the environment given is left as it was.
    expect(env.MCP_FLEET_ADMIN_TOKEN).toBeUndefined();
    // The token parser then sees the file's token, as control's API and the dashboard do.
    const admin = 'f'.repeat(40);
    expect(parseEnv(controlEnv, { MCP_FLEET_ADMIN_TOKEN_FILE: file('admin', `${admin}\r\n`) }).auth.tokens).toEqual([
      { scope: 'admin', token: admin, from: 'MCP_FLEET_ADMIN_TOKEN' },
    ]);
  });

  it('lets the variable win over its file, and an empty variable fall back to the file', () => {
    const path = file('pw', 'from-file');
    expect(
      secretFromEnv('MCP_FLEET_WEB_PASSWORD', { MCP_FLEET_WEB_PASSWORD: 'inline', MCP_FLEET_WEB_PASSWORD_FILE: path }),
    ).toBe('inline');
    expect(
      secretFromEnv('MCP_FLEET_WEB_PASSWORD', { MCP_FLEET_WEB_PASSWORD: '', MCP_FLEET_WEB_PASSWORD_FILE: path }),
    ).toBe('from-file');
    expect(secretFromEnv('MCP_FLEET_WEB_PASSWORD', { MCP_FLEET_WEB_PASSWORD_FILE: ' ' })).toBeUndefined();
    expect(secretFromEnv('MCP_FLEET_WEB_PASSWORD', {})).toBeUndefined();
  });

  it('refuses a missing, unreadable, oversized or endless file, naming the variable and path, never the contents', () => {
    const secret = 'never-in-an-error-'.repeat(3);
    const unreadable = file('unreadable', secret);
    chmodSync(unreadable, 0o000);
    const big = file('big', `${secret}${'x'.repeat(70_000)}`);
    const cases: [string, RegExp][] = [
      [join(dir, 'missing'), /^cannot read MCP_FLEET_SESSION_KEY_FILE .*missing: ENOENT$/],
      [dir, /^cannot read MCP_FLEET_SESSION_KEY_FILE .*: EISDIR$/],
      [big, /^MCP_FLEET_SESSION_KEY_FILE .*big is larger than 65536 bytes: not a secret file$/],
      // A device that never ends is cut off, not read forever.
      ['/dev/zero', /^MCP_FLEET_SESSION_KEY_FILE \/dev\/zero is larger than 65536 bytes/],
    ];
    // Root reads a 000 file anyway; elsewhere it is refused too.
    if (process.getuid?.() !== 0)
      cases.push([unreadable, /^cannot read MCP_FLEET_SESSION_KEY_FILE .*unreadable: EACCES$/]);
    for (const [path, message] of cases) {
      let err: unknown;
      try {
        secretEnv({ MCP_FLEET_SESSION_KEY_FILE: path });
      } catch (e) {
        err = e;
      }
      expect(err, path).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).not.toContain('never-in-an-error');
    }
  });
});
