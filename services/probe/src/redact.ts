// Credentials the operator gave us must never come back out: not in evidence, messages or output.

const MIN_SECRET_LENGTH = 4;

/** The strings to hide for a set of request headers: each value, and each word of it (e.g. the token after `Bearer`). */
export function secretsOf(headers: Record<string, string>): string[] {
  const out = new Set<string>();
  for (const value of Object.values(headers)) {
    const v = value.trim();
    if (v.length >= MIN_SECRET_LENGTH) out.add(v);
    for (const word of v.split(/\s+/))
      if (word.length >= MIN_SECRET_LENGTH && !/^(bearer|basic|token)$/i.test(word)) out.add(word);
  }
  // Longest first, so a whole value is hidden before its parts.
  return [...out].sort((a, b) => b.length - a.length);
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

/** A URL fit to print: no user name or password. */
export function displayUrl(url: URL | string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.href;
}
