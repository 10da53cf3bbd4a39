// Era signals (docs/protocol.md#era-signals): replies that say the server has moved generation.
// Only these send a run into a lookup; timeouts, connection errors, 5xx, 401, 403 and 429 never do.
import type { Exchange } from './exchange';
import { ERA_ERROR_CODES, errorOf, METHOD_NOT_FOUND } from './jsonrpc';
import { isNeverSignalStatus } from './opening';

/**
 * On a stateless revision: a 400, 404 or 405 reply to `server/discover` whose body is not one of
 * the JSON-RPC errors -32020, -32021, -32022 or -32601, or a -32601 reply at any status.
 */
export function discoverSignal(ex: Exchange): boolean {
  if (ex.failure || isNeverSignalStatus(ex.status)) return false;
  const err = errorOf(ex.response);
  if (err?.code === METHOD_NOT_FOUND) return true;
  const status = ex.status ?? 0;
  return (status === 400 || status === 404 || status === 405) && !(err && ERA_ERROR_CODES.has(err.code));
}

/** On a sessions revision: a 4xx other than 401 and 403 in reply to `initialize` whose body is one of those errors. */
export function initializeSignal(ex: Exchange): boolean {
  if (ex.failure || isNeverSignalStatus(ex.status)) return false;
  const status = ex.status ?? 0;
  const err = errorOf(ex.response);
  return status >= 400 && status < 500 && err !== undefined && ERA_ERROR_CODES.has(err.code);
}

/**
 * On the HTTP+SSE transport: a GET that does not open a stream whose first event is `endpoint`.
 * `firstEvent` is the first event's name, or 'none' when the stream gave none within its 2 s.
 */
export function streamSignal(ex: Exchange, firstEvent: string | undefined): boolean {
  if (ex.failure || isNeverSignalStatus(ex.status)) return false;
  return firstEvent !== 'endpoint';
}

/**
 * On stdio, to `server/discover` (seed 004: "on stdio a silent server is a legacy server"): no
 * answer in time, the process exiting on it (servers that exit on any pre-initialize request), or a
 * JSON-RPC error other than the modern era's own -32020..-32022 (a legacy server's -32601, or its
 * "not initialized"). A process that could not start or flooded stdout says nothing about its era.
 */
export function pipeDiscoverSignal(ex: Exchange): boolean {
  if (ex.failure) return ex.failure === 'timeout' || ex.failure === 'exited_early';
  const err = errorOf(ex.response);
  return err !== undefined && (err.code === METHOD_NOT_FOUND || !ERA_ERROR_CODES.has(err.code));
}
