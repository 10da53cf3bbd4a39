// What one check decided, before the runner times it and bounds it: a status, one line saying why,
// and the reply that decided it. Also the few ways a check reads a reply.
import { excerpt } from '../bounds';
import { delivered, type Exchange, onPipe, via } from '../exchange';
import { errorOf, resultOf } from '../jsonrpc';
import type { CheckStatus } from './run';

export interface Verdict {
  status: CheckStatus;
  message: string;
  decisive?: Exchange | undefined;
}

export const pass = (message: string, decisive?: Exchange): Verdict => ({ status: 'pass', message, decisive });
export const fail = (message: string, decisive?: Exchange): Verdict => ({ status: 'fail', message, decisive });
export const skip = (message: string): Verdict => ({ status: 'skip', message });

/** A capability the server declared (an object under `capabilities`). */
export function declares(capabilities: Record<string, unknown>, name: string): boolean {
  const c = capabilities[name];
  return c !== null && typeof c === 'object' && !Array.isArray(c);
}

/** What came back, in a few words: `HTTP 400, error -32602 "…"`, `stdio, a result`, `no answer (timeout)`. */
export function answered(ex: Exchange, secrets: readonly string[]): string {
  if (ex.failure) return `no answer (${ex.failure}${ex.error ? `: ${excerpt(ex.error, secrets, 80)}` : ''})`;
  const err = errorOf(ex.response);
  if (err)
    return `${via(ex)}, error ${err.code} ${JSON.stringify(excerpt(err.message.replace(/\s+/g, ' '), secrets, 60))}`;
  if (resultOf(ex.response)) return `${via(ex)}, a result`;
  return `${via(ex)}${ex.text ? ', no JSON-RPC answer' : ', an empty body'}`;
}

/** The HTTP status a rule asks for holds: on HTTP it is this one; over stdio there is none to check. */
export function statusIs(ex: Exchange, status: number | undefined): boolean {
  return status === undefined || onPipe(ex) || ex.status === status;
}

/** A JSON-RPC error with this code (and, on HTTP, this status when given). */
export function isError(ex: Exchange, code: number, status?: number): boolean {
  return errorOf(ex.response)?.code === code && statusIs(ex, status);
}

/** The request was answered with a result (in a 2xx, on HTTP). */
export function succeeded(ex: Exchange): boolean {
  return delivered(ex) && resultOf(ex.response) !== undefined;
}

/** The names of a list result's items (`tools`, `prompts`, `resources`), or undefined when it is not a list. */
export function namesOf(ex: Exchange, key: 'tools' | 'prompts' | 'resources'): string[] | undefined {
  const items = resultOf(ex.response)?.[key];
  if (!Array.isArray(items)) return undefined;
  return items.map((i) => {
    const v = (i as Record<string, unknown> | null)?.[key === 'resources' ? 'uri' : 'name'];
    return typeof v === 'string' ? v : '';
  });
}
