// A conformance connection over stdio: one process, opened by its era's first message
// (openings/stdio.ts) and kept for the checks. `call` writes a request as its era's client sends it
// (modern ones carry the `_meta` envelope; stdio has no headers, so header options are moot), `raw`
// writes a line as it is. `reset` asks for a new connection: over stdio that is a new process,
// opened the same way, for the next request (tools_list_stable_across_connections).
import type { ProbeContext } from '../context';
import type { Exchange } from '../exchange';
import { resultOf } from '../jsonrpc';
import { openOn } from '../openings/stdio';
import { type Era, type Generation, isRevision, type Revision, revisionInfo } from '../revisions';
import type { Ending } from '../stdio/child';
import { PipeConversation } from '../stdio/conversation';
import type { CallOptions, Connected, Connection } from './connection';
import { capabilitiesOf, modernMeta } from './requests';

export class PipeConnection implements Connection {
  readonly era: Era;
  readonly generation: Generation;
  opening!: Exchange;
  capabilities: Record<string, unknown> = {};
  /** How the connection's process ended, once closed (exits_on_stdin_close reads it). */
  ending: Ending | undefined;
  #pipe: PipeConversation;
  #reopen = false;

  private constructor(
    readonly ctx: ProbeContext,
    readonly revision: Revision,
    pipe: PipeConversation,
  ) {
    this.#pipe = pipe;
    this.era = revisionInfo(revision).era;
    this.generation = revisionInfo(revision).generation;
  }

  /** Open a process at `revision`; the connection is kept only when the opening completed. */
  static async open(ctx: ProbeContext, revision: Revision): Promise<Connected> {
    const pipe = await PipeConversation.start(ctx);
    const opening = await openOn(pipe, revision, { complete: true });
    if (!opening.ok || !opening.decisive) {
      ctx.inBackground(pipe.close());
      return { ok: false, opening };
    }
    // The revision the server answered with is the one spoken (a legacy server may answer an older one).
    const spoken =
      isRevision(opening.answered) && revisionInfo(opening.answered).era === revisionInfo(revision).era
        ? opening.answered
        : revision;
    const conn = new PipeConnection(ctx, spoken, pipe);
    conn.opening = opening.decisive;
    conn.capabilities = capabilitiesOf(resultOf(opening.decisive.response));
    return { ok: true, connection: conn, opening };
  }

  async call(method: string, params: Record<string, unknown> = {}, opts: CallOptions = {}): Promise<Exchange> {
    await this.#fresh();
    const body = this.era === 'modern' ? { ...params, _meta: opts.meta ?? modernMeta(this.revision) } : params;
    const ex = await this.#pipe.request(method, body, { deliberate: opts.deliberate });
    if (opts.reset) this.#reopen = true;
    return ex;
  }

  async raw(body: string, opts: { id?: number; method?: string } = {}): Promise<Exchange> {
    await this.#fresh();
    return this.#pipe.send(body, { jsonRpcMethod: opts.method, id: opts.id, deliberate: true });
  }

  /** Close stdin, then SIGTERM, then SIGKILL (child.ts); the ending is kept. */
  async close(): Promise<void> {
    this.ending = await this.#pipe.close();
  }

  /** After a `reset`: the next request goes to a new process, opened like the first. */
  async #fresh(): Promise<void> {
    if (!this.#reopen) return;
    this.#reopen = false;
    this.ctx.inBackground(this.#pipe.close());
    this.#pipe = await PipeConversation.start(this.ctx);
    await openOn(this.#pipe, this.revision, { complete: true });
  }
}
