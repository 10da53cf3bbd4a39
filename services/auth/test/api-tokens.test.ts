// The API tokens' parser and the constant-time secret set that control's API and the dashboard's
// sign-in share.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuthConfigError,
  SECRET_FILE_VARIABLES,
  SecretFileError,
  SecretSet,
  secretFromEnv,
  tokensFromEnv,
  withSecretFiles,
} from '../src/api-tokens';

const ADMIN = 'a'.repeat(40);
const READ = 'r'.repeat(32);

describe('tokensFromEnv', () => {
  it('reads the list and the single-token variables, naming where each came from', () => {
    expect(
      tokensFromEnv({ MCP_FLEET_API_TOKENS: ` read:${READ} ,, admin:${ADMIN}`, MCP_FLEET_ADMIN_TOKEN: ` ${ADMIN} ` }),
    ).toEqual([
      { scope: 'read', token: READ, from: 'MCP_FLEET_API_TOKENS entry 1' },
      { scope: 'admin', token: ADMIN, from: 'MCP_FLEET_API_TOKENS entry 3' },
      { scope: 'admin', token: ADMIN, from: 'MCP_FLEET_ADMIN_TOKEN' },
    ]);
    expect(tokensFromEnv({ MCP_FLEET_API_TOKEN: ADMIN })).toEqual([]);
    expect(tokensFromEnv({ MCP_FLEET_API_TOKEN: ADMIN }, [['MCP_FLEET_API_TOKEN', 'admin']])).toEqual([
      { scope: 'admin', token: ADMIN, from: 'MCP_FLEET_API_TOKEN' },
    ]);
  });

  it('refuses short, spaced and two-scope tokens with a sentence that never holds the value', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ MCP_FLEET_READ_TOKEN: 'x'.repeat(31) }, /^MCP_FLEET_READ_TOKEN is 31 characters; a token needs at least 32/],
      [{ MCP_FLEET_API_TOKENS: `${READ}` }, /^MCP_FLEET_API_TOKENS entry 1 is not "read:<token>"/],
      [{ MCP_FLEET_ADMIN_TOKEN: `${ADMIN}é` }, /printable ASCII/],
      [
        { MCP_FLEET_API_TOKENS: `admin:${READ}`, MCP_FLEET_READ_TOKEN: READ },
        /^MCP_FLEET_API_TOKENS entry 1 and MCP_FLEET_READ_TOKEN are the same token with different scopes$/,
      ],
    ];
    for (const [env, message] of cases) {
      let err: unknown;
      try {
        tokensFromEnv(env);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AuthConfigError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).not.toContain(READ);
      expect((err as Error).message).not.toContain('x'.repeat(31));
    }
  });
});

describe('SecretSet', () => {
  it('says what a secret opens, and nothing for an unknown, empty or prefixed one', () => {
    const set = new SecretSet([
      { value: 'read', secret: READ, from: 'r' },
      { value: 'admin', secret: ADMIN, from: 'a' },
    ]);
    expect(set.size).toBe(2);
    expect([READ, ADMIN, ADMIN.slice(0, 39), `${READ}x`, '', null, undefined].map((s) => set.identify(s))).toEqual([
      'read',
      'admin',
      null,
      null,
      null,
      null,
      null,
    ]);
  });

  it('has a fingerprint that changes with any secret or its scope', () => {
    const fp = (entries: [string, string][]) =>
      new SecretSet(entries.map(([value, secret]) => ({ value, secret, from: value }))).fingerprint().toString('hex');
    const base = fp([['admin', ADMIN]]);
    expect(fp([['admin', ADMIN]])).toBe(base);
    expect(fp([['admin', `${ADMIN}b`]])).not.toBe(base);
    expect(fp([['read', ADMIN]])).not.toBe(base);
    expect(fp([])).not.toBe(base);
  });
});

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
    for (const name of SECRET_FILE_VARIABLES) env[`${name}_FILE`] = file(name, `value of ${name}\n`);
    const resolved = withSecretFiles(env);
    for (const name of SECRET_FILE_VARIABLES) expect(resolved[name], name).toBe(`value of ${name}`);
    // Only the listed variables: a file for anything else is not read.
    expect(resolved.OTHER).toBeUndefined();
    // A copy: the environment given is left as it was.
    expect(env.MCP_FLEET_ADMIN_TOKEN).toBeUndefined();
    // The token parser then sees the file's token, as control's API and the dashboard do.
    const admin = 'f'.repeat(40);
    expect(tokensFromEnv(withSecretFiles({ MCP_FLEET_ADMIN_TOKEN_FILE: file('admin', `${admin}\r\n`) }))).toEqual([
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
        withSecretFiles({ MCP_FLEET_SESSION_KEY_FILE: path });
      } catch (e) {
        err = e;
      }
      expect(err, path).toBeInstanceOf(SecretFileError);
      expect(err, path).toBeInstanceOf(AuthConfigError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).not.toContain('never-in-an-error');
    }
  });
});
