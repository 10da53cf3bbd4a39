// The key ring: header values and URLs are sealed (AES-256-GCM, a versioned envelope naming the
// key) and unsealed again; keys are read as hex or base64 from the environment or a file, with
// previous keys for reading, and one is generated beside an embedded database.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CredentialsUnreadableError,
  isSealed,
  Keyring,
  keyId,
  loadKeyring,
  parseSecretKey,
  SecretKeyError,
  sealedBy,
} from '../src';

const key = () => randomBytes(32);
const ENVELOPE = /^mcpfleet:v1:[0-9a-f]{16}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]*$/;

describe('the keyring', () => {
  it('seals each value under a fresh IV in a versioned envelope naming the key, and unseals it again', () => {
    const k = key();
    const ring = new Keyring(k);
    const a = ring.seal('Bearer hunter2', 'ctx');
    const b = ring.seal('Bearer hunter2', 'ctx');
    expect(a).toMatch(ENVELOPE);
    expect(a).not.toBe(b);
    expect(a).not.toContain('hunter2');
    expect(sealedBy(a)).toBe(keyId(k));
    expect(ring.id).toBe(keyId(k));
    expect(ring.unseal(a, 'ctx')).toBe('Bearer hunter2');
    expect(ring.unseal(ring.seal('', 'ctx'), 'ctx')).toBe('');
    expect(isSealed(a)).toBe(true);
    expect(isSealed('Bearer hunter2')).toBe(false);
  });

  it('refuses an altered value, another context, or a key it does not hold', () => {
    const k = key();
    const ring = new Keyring(k);
    const sealed = ring.seal('Bearer hunter2', 'ctx');
    const parts = sealed.split(':');
    const flip = (s: string) => (s[0] === 'A' ? `B${s.slice(1)}` : `A${s.slice(1)}`);
    for (const i of [3, 4, 5]) {
      const altered = parts.map((p, j) => (j === i ? flip(p) : p)).join(':');
      expect(() => ring.unseal(altered, 'ctx')).toThrow(CredentialsUnreadableError);
    }
    expect(() => ring.unseal(sealed, 'other')).toThrow(/does not authenticate/);
    const other = new Keyring(key());
    expect(() => other.unseal(sealed, 'ctx')).toThrow(`sealed under key ${ring.id}, which is neither`);
    // A previous key unseals what it sealed; the current one seals.
    const rotated = new Keyring(key(), { previous: [k] });
    expect(rotated.unseal(sealed, 'ctx')).toBe('Bearer hunter2');
    expect(rotated.isCurrent(sealed)).toBe(false);
    expect(sealedBy(rotated.seal('x', 'ctx'))).toBe(rotated.id);
  });

  it('reads keys as hex, base64 or base64url, and says what is wrong without repeating the key', () => {
    const k = key();
    expect(parseSecretKey(k.toString('hex'), 'K')).toEqual(k);
    expect(parseSecretKey(` ${k.toString('base64')}\n`, 'K')).toEqual(k);
    expect(parseSecretKey(k.toString('base64url'), 'K')).toEqual(k);
    const short = randomBytes(16).toString('base64');
    expect(() => parseSecretKey(short, 'MCP_FLEET_SECRET_KEY')).toThrow(
      /^MCP_FLEET_SECRET_KEY must be 32 random bytes as base64 or hex.*; it decodes to 16 bytes$/,
    );
    const err = (() => {
      try {
        parseSecretKey('not a key: hunter2!', 'MCP_FLEET_SECRET_KEY');
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(SecretKeyError);
    expect(err?.message).not.toContain('hunter2');
  });
});

const _ringOf = (k: Buffer, previous: Buffer[] = []) => new Keyring(k, { previous, source: 'test' });

describe('where the key comes from', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-keys-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes MCP_FLEET_SECRET_KEY, or a file, with previous keys for reading', () => {
    const k = key();
    const old = key();
    const ring = loadKeyring({
      key: k.toString('base64'),
      previous: ` ${old.toString('hex')} `,
    })!;
    expect(ring.id).toBe(keyId(k));
    expect(ring.ids).toEqual([keyId(k), keyId(old)]);
    expect(ring.source).toBe('MCP_FLEET_SECRET_KEY');
    const file = join(dir, 'mounted.key');
    writeFileSync(file, `${k.toString('hex')}\n`);
    expect(loadKeyring({ keyFile: file })!.id).toBe(keyId(k));
    expect(() => loadKeyring({ key: k.toString('hex'), keyFile: file })).toThrow(
      'set MCP_FLEET_SECRET_KEY or MCP_FLEET_SECRET_KEY_FILE, not both',
    );
    expect(() => loadKeyring({ keyFile: join(dir, 'missing') })).toThrow(
      /cannot read MCP_FLEET_SECRET_KEY_FILE .*missing: ENOENT/,
    );
    expect(() => loadKeyring({ previous: old.toString('hex') })).toThrow(
      'MCP_FLEET_SECRET_KEY_PREVIOUS is set but MCP_FLEET_SECRET_KEY is not',
    );
  });

  it('has none for Postgres without a key, and makes one (0600) beside an embedded database', () => {
    expect(loadKeyring({})).toBeNull();
    const path = join(dir, 'embedded', 'secret.key');
    const logs: string[] = [];
    const first = loadKeyring({ embeddedKeyFile: path, log: (m) => logs.push(m) })!;
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(logs.join('\n')).toContain(`generated the key that seals stored credentials: ${path}`);
    expect(logs.join('\n')).not.toContain(readFileSync(path, 'utf8').trim());
    // The same key next time.
    expect(loadKeyring({ embeddedKeyFile: path })!.id).toBe(first.id);
    // An explicit key takes over; what the generated one sealed still unseals.
    const k = key();
    const explicit = loadKeyring({ key: k.toString('hex'), embeddedKeyFile: path })!;
    expect(explicit.ids).toEqual([keyId(k), first.id]);
  });
});
