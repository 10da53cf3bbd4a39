// Shared argument parsing. node:util's parseArgs does the parsing (no dependency needed for
// flags this simple); this file turns its strings into checked values with clear errors.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import {
  type ConformanceProtocol,
  isRevision,
  REVISION_NAMES,
  type Revision,
  type RevisionChoice,
} from '@mcp-fleet/probe';
import { parseArgsError, UsageError } from './usage';

export const COMMON_OPTIONS = {
  header: { type: 'string', multiple: true, short: 'H' },
  timeout: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const satisfies ParseArgsConfig['options'];

export function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw parseArgsError(err);
  }
}

export function targetUrl(positionals: string[], verb: string): URL {
  const [raw, ...extra] = positionals;
  if (!raw) throw new UsageError(`${verb} needs a URL, e.g. mcp-fleet ${verb} http://127.0.0.1:7401/mcp`);
  if (extra.length) throw new UsageError(`unexpected argument: ${extra[0]}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`not a URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`the URL must be http:// or https://, not ${url.protocol}`);
  return url;
}

/** An HTTP header name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * `--header 'Name: value'`, repeated. Errors name the header only when it is nothing but a name
 * (`--header Authorization`): a value is a credential and is never printed.
 */
export function headers(list: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of list ?? []) {
    const colon = h.indexOf(':');
    if (colon === -1) {
      const name = h.trim();
      throw new UsageError(
        HEADER_NAME.test(name)
          ? `--header '${name}': missing ':' and value (--header '${name}: value')`
          : `--header takes 'Name: value', and this one has no ':'`,
      );
    }
    const name = h.slice(0, colon).trim();
    if (!HEADER_NAME.test(name)) throw new UsageError(`--header takes 'Name: value', got a header with no valid name`);
    out[name] = h.slice(colon + 1).trim();
  }
  return out;
}

export function positiveInt(value: string | undefined, flag: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0 || n > max)
    throw new UsageError(`${flag} takes a whole number from 1 to ${max}, got ${value}`);
  return n;
}

export function revision(value: string | undefined, flag: string): Revision | undefined {
  if (value === undefined) return undefined;
  if (!isRevision(value)) throw new UsageError(`${flag} takes one of ${REVISION_NAMES.join(', ')}, got ${value}`);
  return value;
}

export function revisionChoice(value: string | undefined, fallback?: RevisionChoice): RevisionChoice {
  if (value === undefined) {
    if (fallback) return fallback;
    throw new UsageError('--revision is required: newest, or one of ' + REVISION_NAMES.join(', '));
  }
  return value === 'newest' ? 'newest' : (revision(value, '--revision') as Revision);
}

/** `check --protocol`: auto (discover first, legacy fallback), legacy, or one revision. */
export function conformanceProtocol(value: string | undefined): ConformanceProtocol {
  if (value === undefined || value === 'auto') return 'auto';
  if (value === 'legacy' || isRevision(value)) return value;
  throw new UsageError(`--protocol takes auto, legacy or one of ${REVISION_NAMES.join(', ')}, got ${value}`);
}

/** `check --protocols a,b,c`: the revisions cross-era checks compare (undefined: every one detection finds). */
export function crossEraProtocols(value: string | undefined): Revision[] | undefined {
  if (value === undefined) return undefined;
  const list = value
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  if (list.length === 0)
    throw new UsageError(`--protocols takes a comma-separated list of ${REVISION_NAMES.join(', ')}`);
  return list.map((p) => revision(p, '--protocols') as Revision);
}
