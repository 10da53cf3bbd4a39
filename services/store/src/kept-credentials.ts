// The one rule for stored credentials when a server changes, used by control's API (updateServer)
// and the dashboard's editor: what a change keeps — headers it does not give again, a header value
// left blank, a URL part left masked — comes from what is stored only while the URL stays on the
// stored URL's origin. A credential never follows a URL to another host implicitly: moved to
// another origin, headers not given again are dropped, and a blank value or a masked URL part that
// asks for a stored one is refused, to be typed again.
import { maskedParts, unmaskUrl } from '@mcp-fleet/probe';

/** A change asked for a stored credential where it may not go, or where there is none. */
export class KeptCredentialsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeptCredentialsError';
  }
}

/** `https://host:port` of a URL, or null when it does not parse. */
export function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/** Whether two URLs share an origin (scheme, host, port): where stored credentials may go. */
export function sameOrigin(a: string, b: string): boolean {
  const oa = originOf(a);
  return oa !== null && oa !== 'null' && oa === originOf(b);
}

/** What is stored of a server: its URL as shown (any origin test needs only that) and the whole one. */
export interface StoredTarget {
  url: string;
  /** The whole URL, credentials included; read only when the submitted URL keeps a masked part. */
  readonly target: string;
}

/**
 * The URL a change gives, with each masked part (`••••••`, as the API and the dashboard show
 * it) put back from the stored URL: only toward the stored URL's origin, and only parts it has.
 */
export function keptUrl(stored: StoredTarget | null, submitted: string): string {
  const masked = maskedParts(submitted);
  if (masked.length === 0) return submitted;
  const what = `url: the ${masked.join(', ')} (${'••••••'}) stand${masked.length === 1 ? 's' : ''} for a stored credential`;
  if (!stored) throw new KeptCredentialsError(`${what}, and nothing is stored here: give the value itself`);
  if (!sameOrigin(stored.url, submitted))
    throw new KeptCredentialsError(
      `${what}, which is only sent to ${originOf(stored.url)}: give it again for ${originOf(submitted)}`,
    );
  const { url, missing } = unmaskUrl(submitted, stored.target);
  if (missing.length)
    throw new KeptCredentialsError(`url: the stored URL has no ${missing.join(', ')} to keep: give the value itself`);
  return url;
}

/**
 * The headers after a change. `given` undefined keeps every stored header; a given value of null
 * keeps that header's stored value. Toward another origin nothing stored is kept: headers not
 * given again are dropped (named in `dropped`) and a value asked to be kept is refused. Stored
 * values pass through as they are (sealed ones stay sealed: their seal is bound to the same origin).
 */
export function keptHeaders<V extends string>(
  stored: { url: string; headers: Record<string, V> } | null,
  url: string,
  given: Record<string, string | null> | undefined,
): { headers: Record<string, string>; dropped: string[] } {
  const same = stored !== null && sameOrigin(stored.url, url);
  if (given === undefined) {
    if (!stored) return { headers: {}, dropped: [] };
    return same
      ? { headers: { ...stored.headers }, dropped: [] }
      : { headers: {}, dropped: Object.keys(stored.headers) };
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (value !== null) {
      headers[name] = value;
      continue;
    }
    const kept = same ? stored.headers[name] : undefined;
    if (kept === undefined)
      throw new KeptCredentialsError(
        stored && !same
          ? `header ${name}: enter its value again (stored credentials are only sent to ${originOf(stored.url)})`
          : `header ${name}: enter a value`,
      );
    headers[name] = kept;
  }
  return { headers, dropped: [] };
}
