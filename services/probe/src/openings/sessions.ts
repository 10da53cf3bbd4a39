// The sessions generation (2025-03-26, 2025-06-18, 2025-11-25): POST `initialize` proposing the
// revision, then `notifications/initialized`, then DELETE the session if the server minted one.
// Never a GET stream. The answer may come as JSON or as an event stream.
//
// Servers between generations (SDK 1.10.x) open this way too but answer with 2024-11-05, the
// HTTP+SSE revision, and serve no HTTP+SSE endpoint. An answered 2024-11-05 is a revision spoken
// over Streamable HTTP: this opening reports it like any other answer (generation 'sessions'), and
// detection and runs read it as such (docs/protocol.md#servers-between-generations). Nothing here
// changes for other servers: a sessions server answers with a sessions revision.
import { CLIENT_INFO } from '../client-info';
import type { ProbeContext } from '../context';
import { initializeSignal } from '../era-signals';
import { delivered, type Exchange } from '../exchange';
import { notificationBody, requestBody, resultOf } from '../jsonrpc';
import { failed, judge, type Opening, opened, type ServerInfo, serverInfoOf } from '../opening';
import type { Outcome } from '../outcomes';
import { isRevision, type Revision, revisionInfo } from '../revisions';

/** How detection rows and runs name the transport of 2024-11-05 spoken by the sessions opening. */
export const STREAMABLE_HTTP = 'Streamable HTTP (the sessions opening)';

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export interface SessionsOptions {
  /** Send notifications/initialized and DELETE the session (a handshake run); a detection only initializes. */
  complete: boolean;
}

export async function openSessions(ctx: ProbeContext, revision: Revision, opts: SessionsOptions): Promise<Opening> {
  const id = ctx.nextId();
  const ex = await ctx.send({
    method: 'POST',
    url: ctx.target,
    headers: JSON_HEADERS,
    body: requestBody(id, 'initialize', { protocolVersion: revision, capabilities: {}, clientInfo: CLIENT_INFO }),
    jsonRpcMethod: 'initialize',
    jsonRpcId: id,
  });
  const answer = initializeAnswer(ex, id);
  if ('failure' in answer) return failed('sessions', revision, ex, answer.failure, initializeSignal(ex));
  const sessionId = ex.headers.sessionId;
  if (!opts.complete) return opened('sessions', revision, ex, answer.protocolVersion, answer.serverInfo, sessionId);

  const after = sessionHeaders(answer.protocolVersion, sessionId);
  const note = await ctx.send({
    method: 'POST',
    url: ctx.target,
    headers: { ...JSON_HEADERS, ...after },
    body: notificationBody('notifications/initialized'),
    jsonRpcMethod: 'notifications/initialized',
  });
  if (sessionId) await deleteSession(ctx, answer.protocolVersion, sessionId);
  if (note.failure || note.status === null || note.status >= 300) {
    return failed('sessions', revision, note, judge(note, 'notifications/initialized'), false);
  }
  return opened('sessions', revision, ex, answer.protocolVersion, answer.serverInfo);
}

/** End a session the server minted. Best effort: a 405 (the server keeps no sessions) is fine. */
export async function deleteSession(ctx: ProbeContext, negotiated: string, sessionId: string): Promise<void> {
  await ctx.send({ method: 'DELETE', url: ctx.target, headers: sessionHeaders(negotiated, sessionId) });
}

/** Headers after initialize: the session id when minted, and MCP-Protocol-Version where the table says so. */
export function sessionHeaders(negotiated: string, sessionId: string | undefined): Record<string, string> {
  const h: Record<string, string> = {};
  if (sessionId) h['mcp-session-id'] = sessionId;
  if (isRevision(negotiated) && revisionInfo(negotiated).protocolVersionHeader !== 'never')
    h['mcp-protocol-version'] = negotiated;
  return h;
}

type InitializeAnswer =
  | { protocolVersion: string; serverInfo: ServerInfo | undefined }
  | { failure: { outcome: Outcome; message: string } };

/** Read an initialize result from a reply (HTTP+SSE streams hand theirs in as `ex.response`; stdio answers too). */
export function initializeAnswer(ex: Exchange, id: number): InitializeAnswer {
  const result = resultOf(ex.response);
  if (!delivered(ex) || !result) return { failure: judge(ex, 'initialize') };
  if (ex.response && 'id' in ex.response && ex.response.id !== id)
    return {
      failure: {
        outcome: 'protocol_error',
        message: "initialize: the answer's JSON-RPC id does not match the request",
      },
    };
  if (typeof result.protocolVersion !== 'string')
    return { failure: { outcome: 'protocol_error', message: 'initialize: the result has no protocolVersion' } };
  // Kept whole (the body it came in is bounded): a run cuts it only after redaction.
  return { protocolVersion: result.protocolVersion, serverInfo: serverInfoOf(result.serverInfo) };
}
