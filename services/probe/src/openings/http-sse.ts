// The HTTP+SSE transport (2024-11-05, deprecated): GET an event stream, wait at most 2 s for its
// first event, `endpoint` (a URL, often relative), POST `initialize` and `notifications/initialized`
// there, and read the answer from the stream.
import { excerpt } from '../bounds';
import { CLIENT_INFO } from '../client-info';
import type { ProbeContext } from '../context';
import { streamSignal } from '../era-signals';
import type { Exchange } from '../exchange';
import { notificationBody, parseJsonRpc, requestBody } from '../jsonrpc';
import { failed, judge, type Opening, opened } from '../opening';
import type { Outcome } from '../outcomes';
import type { Revision } from '../revisions';
import type { SseReader } from '../sse';
import { initializeAnswer } from './sessions';

export const ENDPOINT_WAIT_MS = 2_000;
const GENERATION = 'HTTP+SSE transport';

export type EndpointWait =
  | { ok: true; get: Exchange; reader: SseReader; endpoint: URL }
  | { ok: false; get: Exchange; failure: { outcome: Outcome; message: string }; eraSignal: boolean };

/** GET the event stream and wait for its first event, which must be `endpoint`. */
export async function awaitEndpoint(ctx: ProbeContext): Promise<EndpointWait> {
  const { exchange: get, reader } = await ctx.openStream({
    method: 'GET',
    url: ctx.target,
    headers: { accept: 'text/event-stream' },
  });
  if (!reader) {
    const failure =
      get.status !== null && get.status >= 200 && get.status < 300
        ? {
            outcome: 'not_mcp' as const,
            message: `GET: the answer is not an event stream (HTTP ${get.status}${get.contentType ? `, ${get.contentType.split(';')[0]}` : ''})`,
          }
        : judge(get, 'GET');
    return { ok: false, get, failure, eraSignal: streamSignal(get, undefined) };
  }
  const runOutFirst = ctx.remainingMs() < ENDPOINT_WAIT_MS;
  const first = await reader.next(Math.min(ENDPOINT_WAIT_MS, Math.max(0, ctx.remainingMs())));
  if (typeof first === 'string' || first.event !== 'endpoint') {
    reader.close();
    if (first === 'timeout' && runOutFirst)
      return {
        ok: false,
        get,
        failure: { outcome: 'timeout', message: 'GET: the run ran out of time waiting for the endpoint event' },
        eraSignal: false,
      };
    const why =
      first === 'timeout'
        ? `no endpoint event within ${ENDPOINT_WAIT_MS / 1000} s`
        : first === 'end'
          ? 'the stream ended before an endpoint event'
          : first === 'overflow'
            ? 'the stream overflowed its bounds before an endpoint event'
            : `the first event was "${excerpt(first.event, ctx.secrets, 40)}", not endpoint`;
    return {
      ok: false,
      get,
      failure: { outcome: 'not_mcp', message: `GET: ${why}` },
      eraSignal: streamSignal(get, typeof first === 'string' ? 'none' : first.event),
    };
  }
  let endpoint: URL;
  try {
    endpoint = new URL(first.data.trim(), ctx.target);
  } catch {
    reader.close();
    return {
      ok: false,
      get,
      failure: { outcome: 'protocol_error', message: 'GET: the endpoint event is not a URL' },
      eraSignal: false,
    };
  }
  // The endpoint is where our POSTs go: never let a stream send them to another origin.
  if (endpoint.origin !== ctx.target.origin) {
    reader.close();
    return {
      ok: false,
      get,
      failure: { outcome: 'protocol_error', message: `GET: the endpoint ${endpoint.origin} is on another origin` },
      eraSignal: false,
    };
  }
  return { ok: true, get, reader, endpoint };
}

export async function openHttpSse(
  ctx: ProbeContext,
  revision: Revision,
  opts: { complete: boolean },
): Promise<Opening> {
  const wait = await awaitEndpoint(ctx);
  if (!wait.ok) return failed(GENERATION, revision, wait.get, wait.failure, wait.eraSignal);
  const { reader, endpoint } = wait;
  try {
    const id = ctx.nextId();
    const post = await ctx.send({
      method: 'POST',
      url: endpoint,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: requestBody(id, 'initialize', { protocolVersion: revision, capabilities: {}, clientInfo: CLIENT_INFO }),
      jsonRpcMethod: 'initialize',
      jsonRpcId: id,
    });
    if (post.failure || post.status === null || post.status >= 300)
      return failed(GENERATION, revision, post, judge(post, 'initialize'), false);
    // The answer comes on the stream (some servers put it in the POST's body instead).
    if (!post.response) {
      const answer = await awaitResponse(reader, id, ctx);
      if (!answer)
        return failed(
          GENERATION,
          revision,
          post,
          { outcome: 'timeout', message: 'initialize: no answer on the event stream' },
          false,
        );
      post.response = answer.response;
      post.text = answer.text;
    }
    const answer = initializeAnswer(post, id);
    if ('failure' in answer) return failed(GENERATION, revision, post, answer.failure, false);
    if (opts.complete) {
      const note = await ctx.send({
        method: 'POST',
        url: endpoint,
        headers: { 'content-type': 'application/json' },
        body: notificationBody('notifications/initialized'),
        jsonRpcMethod: 'notifications/initialized',
      });
      if (note.failure || note.status === null || note.status >= 300)
        return failed(GENERATION, revision, note, judge(note, 'notifications/initialized'), false);
    }
    return opened(GENERATION, revision, post, answer.protocolVersion, answer.serverInfo);
  } finally {
    reader.close();
  }
}

async function awaitResponse(reader: SseReader, id: number, ctx: ProbeContext) {
  for (;;) {
    const next = await reader.next(Math.max(0, ctx.remainingMs()));
    if (typeof next === 'string') return undefined;
    const msg = parseJsonRpc(next.data);
    if (msg && 'id' in msg && msg.id === id && ('result' in msg || 'error' in msg))
      return { response: msg, text: next.data };
  }
}
