// A request's answer as a script or a replay judges it: whole, not cut to the few levels the probe
// keeps for its own checks (jsonrpc.ts): a script may assert on `$.structuredContent.a.b.c`, and a
// replay compares every field of a recorded answer.
import type { Exchange } from '../exchange';
import { errorOf } from '../jsonrpc';
import { isPlainObject } from './values';

export type WholeAnswer =
  | { kind: 'result'; result: Record<string, unknown> }
  | { kind: 'error'; code: number; message: string; data?: unknown };

/** The answer's result or error, whole; undefined when the exchange carries no JSON-RPC answer. */
export function wholeAnswer(ex: Exchange): WholeAnswer | undefined {
  if (!ex.response) return undefined;
  const err = errorOf(ex.response);
  if (err)
    return {
      kind: 'error',
      code: err.code,
      message: err.message,
      ...(err.data !== undefined ? { data: err.data } : {}),
    };
  // The JSON body (or the event's data) the response was parsed from; a stream's preview is not it.
  const text = ex.answerText ?? (ex.contentType?.toLowerCase().startsWith('text/event-stream') ? undefined : ex.text);
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const result = isPlainObject(parsed) && isPlainObject(parsed.result) ? parsed.result : undefined;
  // Not found whole (an HTTP+SSE answer whose text is the event's data is): the kept form will do.
  if (result) return { kind: 'result', result };
  const kept = 'result' in ex.response ? ex.response.result : undefined;
  return kept ? { kind: 'result', result: kept } : undefined;
}
