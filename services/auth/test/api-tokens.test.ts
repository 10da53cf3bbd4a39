import { describe, expect, it } from 'vitest';
import { AuthConfigError, SecretSet, tokensFromEnv } from '../src/api-tokens';

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
