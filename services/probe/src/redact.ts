// Credentials the operator gave us must never come back out: not in evidence, messages, spans or output.
import { maskUrl, urlSecretParts } from './url-credentials';

const MIN_SECRET_LENGTH = 4;

/**
 * The strings to hide for a set of request headers and the target URL: each header value, each
 * word of it (e.g. the token after `Bearer`), the password inside a `Basic` credential, the URL's
 * user name, password and query values (url-credentials.ts), and each of those as a server might
 * echo it encoded: URL-encoded, JSON-escaped, base64 and base64url. (A secret encoded together with
 * other text, e.g. base64 of a whole header line, is not caught: its bytes do not line up.)
 */
export function secretsOf(headers: Record<string, string>, url?: string | URL): string[] {
  const plain = new Set<string>();
  const add = (s: string) => {
    if (s.length >= MIN_SECRET_LENGTH) plain.add(s);
  };
  if (url !== undefined) for (const part of urlSecretParts(url)) add(part);
  for (const value of Object.values(headers)) {
    const v = value.trim();
    add(v);
    for (const word of v.split(/\s+/)) if (!/^(bearer|basic|token)$/i.test(word)) add(word);
    const basic = v.match(/^basic\s+([A-Za-z0-9+/=_-]+)$/i);
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      if (/^[\x20-\x7e]+$/.test(decoded)) {
        add(decoded);
        if (decoded.includes(':')) add(decoded.slice(decoded.indexOf(':') + 1));
      }
    }
  }
  const out = new Set<string>();
  for (const p of plain) {
    out.add(p);
    out.add(encodeURIComponent(p));
    out.add(JSON.stringify(p).slice(1, -1));
    // Unpadded: it matches an echo with or without the trailing `=`.
    out.add(Buffer.from(p, 'utf8').toString('base64').replace(/=+$/, ''));
    out.add(Buffer.from(p, 'utf8').toString('base64url'));
  }
  // Longest first, so a whole value is hidden before its parts.
  return [...out].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * Every string in a value a server supplied (its serverInfo, the version it answered, a header it
 * sent), redacted: a hostile server may answer with the credentials it was sent anywhere it can.
 */
export function redactStrings<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') return redact(value, secrets) as T;
  if (Array.isArray(value)) return value.map((v) => redactStrings(v, secrets)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactStrings(v, secrets)])) as T;
  return value;
}

/** A URL fit to print: no user name or password, its query values masked. */
export function displayUrl(url: URL | string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return maskUrl(u.href);
}
