// Credentials a target URL carries: its user name and password (userinfo) and the values of its
// query string (`?token=…`, `?api_key=…`). One rule for every part that hides them: the probe's
// redaction (secretsOf), the store's sealing and display form, the API's and the dashboard's mask.
// A value without `=` (`?debug`) or an empty one carries nothing; the fragment is never sent.
//
// Written here rather than with a library: WHATWG URL (built in) parses; what is left is to name
// the parts and rebuild a display form, which no URL library offers as such.

/** What the API and the dashboard show in place of a URL's credential parts. */
export const URL_MASK = '••••••';

interface QueryPart {
  /** As written (percent-encoded), including `=value` when there is one. */
  raw: string;
  name: string;
  /** null: no `=`. */
  value: string | null;
}

function queryParts(u: URL): QueryPart[] {
  if (u.search.length <= 1) return [];
  return u.search
    .slice(1)
    .split('&')
    .map((raw) => {
      const at = raw.indexOf('=');
      return at < 0 ? { raw, name: raw, value: null } : { raw, name: raw.slice(0, at), value: raw.slice(at + 1) };
    });
}

function parse(url: string | URL): URL | null {
  if (url instanceof URL) return url;
  return URL.canParse(url) ? new URL(url) : null;
}

/** A part percent-decoded; in a query, `+` is a space too. */
function decoded(part: string, query = true): string {
  try {
    return decodeURIComponent(query ? part.replace(/\+/g, ' ') : part);
  } catch {
    return part;
  }
}

function isMask(part: string | null): boolean {
  return part !== null && part !== '' && decoded(part, false) === URL_MASK;
}

/** Whether a URL carries credentials: a user name, a password or a query value. */
export function hasUrlCredentials(url: string | URL): boolean {
  const u = parse(url);
  if (!u) return false;
  return u.username !== '' || u.password !== '' || queryParts(u).some((p) => p.value !== null && p.value !== '');
}

/**
 * The URL with each credential part replaced by the mask, fit to show and to store in the clear:
 * `https://••••••:••••••@host/mcp?token=••••••`. A URL with no credentials comes back as written.
 */
export function maskUrl(url: string): string {
  const u = parse(url);
  if (!u || !hasUrlCredentials(u)) return url;
  const userinfo = u.username || u.password ? `${u.username ? URL_MASK : ''}${u.password ? `:${URL_MASK}` : ''}@` : '';
  const parts = queryParts(u).map((p) => (p.value ? `${p.name}=${URL_MASK}` : p.raw));
  const search = parts.length ? `?${parts.join('&')}` : '';
  return `${u.protocol}//${userinfo}${u.host}${u.pathname}${search}${u.hash}`;
}

/** Names of the masked parts a URL carries (`password`, `query token`), empty when it shows none. */
export function maskedParts(url: string): string[] {
  const u = parse(url);
  if (!u) return [];
  const out: string[] = [];
  if (isMask(u.username)) out.push('user name');
  if (isMask(u.password)) out.push('password');
  for (const p of queryParts(u)) if (isMask(p.value)) out.push(`query ${decoded(p.name)}`);
  return out;
}

/**
 * The submitted URL with each masked part put back from `stored` (the same part: user name,
 * password, or the query value of the same name and occurrence). `missing` names the masked parts
 * `stored` has no value for. Whether `stored` may be used at all (its origin) is the caller's rule.
 */
export function unmaskUrl(submitted: string, stored: string): { url: string; missing: string[] } {
  const s = parse(submitted);
  const t = parse(stored);
  if (!s || maskedParts(submitted).length === 0) return { url: submitted, missing: [] };
  const missing: string[] = [];
  if (isMask(s.username)) {
    if (t?.username) s.username = t.username;
    else missing.push('user name');
  }
  if (isMask(s.password)) {
    if (t?.password) s.password = t.password;
    else missing.push('password');
  }
  const storedQuery = t ? queryParts(t) : [];
  const seen = new Map<string, number>();
  const parts = queryParts(s).map((p) => {
    const nth = seen.get(p.name) ?? 0;
    seen.set(p.name, nth + 1);
    if (!isMask(p.value)) return p.raw;
    const value = storedQuery.filter((q) => q.name === p.name)[nth]?.value;
    if (!value) {
      missing.push(`query ${decoded(p.name)}`);
      return p.raw;
    }
    return `${p.name}=${value}`;
  });
  if (parts.length) s.search = `?${parts.join('&')}`;
  return { url: s.href, missing };
}

/**
 * The credential strings of a URL for redaction: user name, password, `user:password` (whose
 * base64 is a Basic credential), each query value, as written and decoded.
 */
export function urlSecretParts(url: string | URL): string[] {
  const u = parse(url);
  if (!u) return [];
  const out: string[] = [];
  const both = (part: string, query: boolean) => {
    if (!part) return;
    out.push(part, decoded(part, query));
  };
  both(u.username, false);
  both(u.password, false);
  if (u.username && u.password) out.push(`${decoded(u.username, false)}:${decoded(u.password, false)}`);
  for (const p of queryParts(u)) if (p.value) both(p.value, true);
  return out;
}
