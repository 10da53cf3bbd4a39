// What a request says besides its body: query parameters read or refused with a 400 naming the
// parameter, and store errors turned into the status that says whose they are to fix.
import { SecretKeyError } from '@mcp-fleet/auth';
import { decodeCursor, isRangeName, KeptCredentialsError, RANGES, storableTime } from '@mcp-fleet/store';
import { HttpError } from '../http';

export function intParam(q: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = q.get(name);
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new HttpError(400, `${name}: a whole number from ${min} to ${max}`);
  return n;
}

/** A yes/no query parameter: absent, 0 or false is no; present empty, 1 or true is yes. */
export function flagParam(q: URLSearchParams, name: string): boolean {
  const raw = q.get(name);
  if (raw === null || raw === '0' || raw === 'false') return false;
  if (raw === '' || raw === '1' || raw === 'true') return true;
  throw new HttpError(400, `${name}: 1 or 0`);
}

/** `since` is an ISO time or a range (1h, 24h, 7d, 30d). */
export function sinceParam(q: URLSearchParams): Date | undefined {
  const raw = q.get('since') ?? q.get('range');
  if (raw === null) return undefined;
  if (isRangeName(raw)) return new Date(Date.now() - RANGES[raw].ms);
  const d = new Date(raw);
  if (!storableTime(d)) throw new HttpError(400, 'since: an ISO time or one of 1h, 24h, 7d, 30d');
  return d;
}

/** The keyset of a `before` cursor this API gave. */
export function cursorParam(text: string): { at: Date; id: number } {
  const cursor = decodeCursor(text);
  if (!cursor) throw new HttpError(400, 'before: not a cursor this API gave');
  return cursor;
}

/**
 * Credentials sent to a control without MCP_FLEET_SECRET_KEY: the operator's to fix, and the
 * message says how (503). A stored credential asked to go where it may not: the request's to fix (400).
 */
export function noKey(err: unknown): unknown {
  if (err instanceof SecretKeyError) return new HttpError(503, err.message);
  if (err instanceof KeptCredentialsError) return new HttpError(400, err.message);
  return err;
}
