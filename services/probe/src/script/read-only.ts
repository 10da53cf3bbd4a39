// Which tools a script may call without `allowWrites`: those the server's tools/list marks
// `annotations.readOnlyHint: true`. A hint is the server's word, not a proof; it is what a
// server offers to say "calling this changes nothing", and a monitor must not call anything else
// on a schedule unless the operator said so.
import type { Connection } from '../conformance/connection';
import { judge } from '../opening';
import { wholeAnswer } from './answer';
import { isPlainObject } from './values';

/** Pages of tools/list read at most: a catalogue longer than that is not fully searched. */
export const TOOL_LIST_MAX_PAGES = 5;

export type ReadOnlyTools = { ok: true; readOnly: Set<string>; listed: Set<string> } | { ok: false; message: string };

export async function readOnlyTools(conn: Connection): Promise<ReadOnlyTools> {
  const readOnly = new Set<string>();
  const listed = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < TOOL_LIST_MAX_PAGES; page += 1) {
    const ex = await conn.call('tools/list', cursor === undefined ? {} : { cursor });
    const answer = wholeAnswer(ex);
    if (answer?.kind !== 'result') {
      const why =
        answer?.kind === 'error' ? `JSON-RPC error ${answer.code} ${answer.message}` : judge(ex, 'tools/list').message;
      return { ok: false, message: `tools/list failed, so no tool is known to be read-only (${why})` };
    }
    const tools = Array.isArray(answer.result.tools) ? answer.result.tools : [];
    for (const tool of tools) {
      if (!isPlainObject(tool) || typeof tool.name !== 'string') continue;
      listed.add(tool.name);
      if (isPlainObject(tool.annotations) && tool.annotations.readOnlyHint === true) readOnly.add(tool.name);
    }
    const next = answer.result.nextCursor;
    if (typeof next !== 'string' || next === '') break;
    cursor = next;
  }
  return { ok: true, readOnly, listed };
}
