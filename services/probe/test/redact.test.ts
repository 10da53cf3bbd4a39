// What a probe hides of the credentials it was given, in whatever a server sends back.
import { describe, expect, it } from 'vitest';
import { redact, secretsOf } from '../src/redact';

const TOKEN = 'tok+en/with=odd"chars\\x';
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('secretsOf and redact', () => {
  it('hide a value, its words, and each as a server might echo it encoded', () => {
    const secrets = secretsOf({ Authorization: `Bearer ${TOKEN}`, 'X-Api-Key': 'k3y-value' });
    const echoes = [
      `Bearer ${TOKEN}`,
      TOKEN,
      encodeURIComponent(TOKEN),
      JSON.stringify({ got: TOKEN }),
      b64(TOKEN),
      b64(TOKEN).replace(/=+$/, ''),
      Buffer.from(TOKEN).toString('base64url'),
      'k3y-value',
      b64('k3y-value'),
    ];
    for (const echo of echoes) {
      const out = redact(`before ${echo} after`, secrets);
      expect(out, echo).toContain('[redacted]');
      expect(out, echo).not.toContain(TOKEN);
      expect(out, echo).not.toContain('k3y-value');
      expect(out, echo).not.toContain(encodeURIComponent(TOKEN));
      expect(out, echo).not.toContain(b64(TOKEN).slice(0, 20));
    }
    expect(redact('Bearer realm="mcp"', secrets)).toBe('Bearer realm="mcp"');
  });

  it('hide a Basic credential, decoded and its password alone', () => {
    const secrets = secretsOf({ Authorization: `Basic ${b64('fleet:s3cret-pass')}` });
    for (const echo of ['fleet:s3cret-pass', 's3cret-pass', b64('fleet:s3cret-pass'), b64('s3cret-pass')])
      expect(redact(`<${echo}>`, secrets), echo).toMatch(/^<\[redacted\]=*>$/); // padding may stay
    // The user name alone is not a secret.
    expect(redact('user fleet', secrets)).toBe('user fleet');
  });

  it('leave values too short to be secrets', () => {
    const secrets = secretsOf({ 'X-A': 'abc', 'X-B': 'Bearer x' });
    expect(secrets).toContain('Bearer x');
    expect(secrets.filter((s) => s.includes('abc') || s === 'x')).toEqual([]);
    expect(redact('abc x', secrets)).toBe('abc x');
  });
});
