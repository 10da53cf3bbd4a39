// The JSON-RPC messages of a buffered answer, in either framing the SDKs use for a POST: one JSON
// body, or an event stream whose `data:` lines each carry one message. A defect rewrites messages
// and the answer keeps its framing, so only the rewritten field differs from the SDK's answer.
import type { Reply } from './proxy';

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEventStream(reply: Reply): boolean {
  return (reply.headers['content-type'] ?? '').includes('text/event-stream');
}

/** Every JSON-RPC message in the answer (a batch answer counts each of its members). */
export function messagesOf(reply: Reply): JsonObject[] {
  const out: JsonObject[] = [];
  const collect = (text: string) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    for (const message of Array.isArray(value) ? value : [value]) if (isObject(message)) out.push(message);
  };
  if (!isEventStream(reply)) collect(reply.text);
  else for (const line of reply.text.split('\n')) if (line.startsWith('data:')) collect(line.slice(5).trimStart());
  return out;
}

/** The answer with each JSON-RPC message passed through `rewrite` (which may change it in place). */
export function rewriteMessages(reply: Reply, rewrite: (message: JsonObject) => void): Reply {
  const apply = (text: string): string => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return text;
    }
    for (const message of Array.isArray(value) ? value : [value]) if (isObject(message)) rewrite(message);
    return JSON.stringify(value);
  };
  const text = isEventStream(reply)
    ? reply.text
        .split('\n')
        .map((line) => (line.startsWith('data:') ? `data: ${apply(line.slice(5).trimStart())}` : line))
        .join('\n')
    : apply(reply.text);
  return { ...reply, text };
}

/** The result object of a message, when it is a success answer. */
export function resultOf(message: JsonObject): JsonObject | undefined {
  return isObject(message.result) ? message.result : undefined;
}

/** The error object of a message, when it is an error answer. */
export function errorOf(message: JsonObject): JsonObject | undefined {
  return isObject(message.error) ? message.error : undefined;
}

/** The JSON-RPC method a request body names (the first, for a batch). */
export function methodOf(json: unknown): string | undefined {
  const first = Array.isArray(json) ? json[0] : json;
  return isObject(first) && typeof first.method === 'string' ? first.method : undefined;
}
