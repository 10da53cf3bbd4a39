// What a probe hides of the credentials it was given, in whatever a server sends back.
import { describe, expect, it } from 'vitest';
import { displayUrl, redact, secretsOf } from '../src/redact';
import { hasUrlCredentials, maskedParts, maskUrl, URL_MASK, unmaskUrl } from '../src/url-credentials';

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

describe('a URL’s credentials', () => {
  const URL_WITH = 'https://fleet-user:p%40ss-word@mcp.example.com:8443/mcp?token=t0k%2Ben&v=1&flag&empty=#frag';

  it('are its user name, password and query values: masked for display, the rest as it was', () => {
    expect(hasUrlCredentials(URL_WITH)).toBe(true);
    expect(maskUrl(URL_WITH)).toBe(
      `https://${URL_MASK}:${URL_MASK}@mcp.example.com:8443/mcp?token=${URL_MASK}&v=${URL_MASK}&flag&empty=#frag`,
    );
    expect(maskUrl('https://u@h.example.com/')).toBe(`https://${URL_MASK}@h.example.com/`);
    expect(maskUrl('https://:pw@h.example.com/')).toBe(`https://:${URL_MASK}@h.example.com/`);
    // Nothing to hide: as written.
    for (const plain of ['https://h.example.com/mcp', 'https://h.example.com/mcp?flag', 'http://h/x?a=#t=1']) {
      expect(hasUrlCredentials(plain), plain).toBe(false);
      expect(maskUrl(plain)).toBe(plain);
    }
    expect(displayUrl(URL_WITH)).toBe(
      `https://mcp.example.com:8443/mcp?token=${URL_MASK}&v=${URL_MASK}&flag&empty=#frag`,
    );
  });

  it('come back from the stored URL where the submitted one shows the mask, part by part', () => {
    const stored = 'https://u1:pw1@h.example.com/mcp?a=1&token=first&token=second';
    expect(unmaskUrl(maskUrl(stored), stored)).toEqual({
      url: 'https://u1:pw1@h.example.com/mcp?a=1&token=first&token=second',
      missing: [],
    });
    // A part typed again wins; the masked ones are kept (percent-encoded as a browser may send them).
    const edited = `https://u2:${encodeURIComponent(URL_MASK)}@h.example.com/v2?token=${URL_MASK}&token=new&b=${URL_MASK}`;
    expect(maskedParts(edited)).toEqual(['password', 'query token', 'query b']);
    expect(unmaskUrl(edited, stored)).toEqual({
      url: 'https://u2:pw1@h.example.com/v2?token=first&token=new&b=%E2%80%A2%E2%80%A2%E2%80%A2%E2%80%A2%E2%80%A2%E2%80%A2',
      missing: ['query b'],
    });
    // No mask: the URL as written.
    expect(unmaskUrl('https://x:y@h.example.com/', stored)).toEqual({ url: 'https://x:y@h.example.com/', missing: [] });
  });

  it('are secrets of a probe: hidden as written, decoded, encoded and as the Basic credential they make', () => {
    const secrets = secretsOf({}, URL_WITH);
    const echoes = [
      'fleet-user',
      'p@ss-word',
      'p%40ss-word',
      't0k+en',
      't0k%2Ben',
      b64('fleet-user:p@ss-word'),
      b64('t0k+en'),
    ];
    for (const echo of echoes) expect(redact(`<${echo}>`, secrets), echo).toMatch(/^<\[redacted\]=*>$/);
    // Values shorter than a secret are left (v=1).
    expect(redact('v=1', secrets)).toBe('v=1');
    // Headers and URL together.
    const both = secretsOf({ Authorization: 'Bearer header-secret' }, new URL(URL_WITH));
    expect(redact('header-secret t0k+en', both)).toBe('[redacted] [redacted]');
  });
});
