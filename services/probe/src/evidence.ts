// What a reply looked like when a revision was not supported: enough to act on, never a credential.
import { BOUNDS, excerpt } from './bounds';
import type { Exchange, ReachabilityFailure } from './exchange';
import { errorOf } from './jsonrpc';

export interface Evidence {
  status: number | null;
  contentType: string | null;
  bodyPreview: string | null;
  jsonRpcErrorCode: number | null;
  jsonRpcErrorMessage: string | null;
  millis: number | null;
  reachabilityFailure: ReachabilityFailure | null;
  message: string;
}

/** Every string redacted, then cut to its bound (bounds.ts): a credential straddling a cut would otherwise leave its first part behind. */
export function evidenceOf(ex: Exchange | undefined, message: string, secrets: readonly string[]): Evidence {
  const err = errorOf(ex?.response);
  return {
    status: ex?.status ?? null,
    // A header the server chose: it may carry the credential it was sent.
    contentType: ex?.contentType ? excerpt(ex.contentType, secrets, BOUNDS.header) : null,
    bodyPreview: ex?.text ? printable(excerpt(ex.text, secrets, BOUNDS.preview)) : null,
    jsonRpcErrorCode: err?.code ?? null,
    jsonRpcErrorMessage: err ? excerpt(err.message, secrets, BOUNDS.preview) : null,
    millis: ex ? ex.millis : null,
    reachabilityFailure: ex?.failure ?? null,
    message: excerpt(message, secrets, BOUNDS.message),
  };
}

/** Control characters from a hostile body would garble a terminal: show them as U+FFFD. */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '\ufffd');
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is one of the characters to replace
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The same value with U+FFFD in place of NUL and lone surrogates in every string: a server can put
 * them in what it answers (JSON escapes, or a preview cut inside a surrogate pair), and Postgres
 * refuses both in text and jsonb, so a result carrying one could never be stored.
 */
export function storable<T>(value: T): T {
  if (typeof value === 'string') return value.replace(UNSTORABLE, '\ufffd') as T;
  if (Array.isArray(value)) return value.map(storable) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, storable(v)])) as T;
  return value;
}
