// What a reply looked like when a revision was not supported: enough to act on, never a credential.
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
}

export const BODY_PREVIEW_CHARS = 200;

export function evidenceOf(ex: Exchange | undefined, message: string, secrets: readonly string[]): Evidence {
  const err = errorOf(ex?.response);
  const preview = ex?.text ? redact(printable(ex.text.slice(0, BODY_PREVIEW_CHARS)), secrets) : null;
  return {
    status: ex?.status ?? null,
    contentType: ex?.contentType ?? null,
    bodyPreview: preview,
    jsonRpcErrorCode: err?.code ?? null,
    jsonRpcErrorMessage: err ? redact(err.message.slice(0, BODY_PREVIEW_CHARS), secrets) : null,
    millis: ex ? ex.millis : null,
    reachabilityFailure: ex?.failure ?? null,
    message: redact(message, secrets),
  };
}

/** Control characters from a hostile body would garble a terminal: show them as U+FFFD. */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '\ufffd');
}
