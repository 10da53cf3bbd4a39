// What a reply looked like when a revision was not supported: enough to act on, never a credential.
import { BOUNDS, CUT_MARK, excerpt } from './bounds';
import type { Exchange, ReachabilityFailure } from './exchange';
import { errorOf } from './jsonrpc';
import { redact } from './redact';

export interface Evidence {
  status: number | null;
  contentType: string | null;
  bodyPreview: string | null;
  jsonRpcErrorCode: number | null;
  jsonRpcErrorMessage: string | null;
  millis: number | null;
  reachabilityFailure: ReachabilityFailure | null;
  message: string;
  /** stdio: the end of the process's stderr when it answered (or did not): its own account, redacted and bounded. */
  stderr?: string;
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
    ...(ex?.stderr ? { stderr: stderrExcerpt(ex.stderr, secrets) } : {}),
  };
}

/** Control characters from a hostile body would garble a terminal: show them as U+FFFD. */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '\ufffd');
}

/** The end of a stdio server's stderr (the crash explains itself last), redacted, printable and within its bound. */
export function stderrExcerpt(text: string, secrets: readonly string[]): string {
  const redacted = redact(text, secrets).trimEnd();
  const tail = redacted.length > BOUNDS.stderr ? `${CUT_MARK}${redacted.slice(-(BOUNDS.stderr - 1))}` : redacted;
  return printable(tail);
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
