// One conversation with a stdio server: a fresh process (child.ts) for this conversation alone,
// and each request written to it recorded as an exchange in the probe's context (budget, deadline,
// evidence, spans), like an HTTP request. Openings, conformance connections and detection rows
// each hold one; closing it shuts the process down and keeps how it ended for the findings.
import type { ProbeContext, ProcessRecord } from '../context';
import { type Exchange, emptyExchange } from '../exchange';
import { notificationBody, requestBody } from '../jsonrpc';
import { ChildServer, type Ending } from './child';
import { displayCommand } from './command';

export interface PipeSend {
  jsonRpcMethod?: string | undefined;
  /** The id of the answer to wait for; undefined = a notification (nothing to wait for). */
  id?: number | undefined;
  /** A deliberately bad request (a conformance check's): an error with id null answers it too. */
  deliberate?: boolean | undefined;
  /** Wait at most this long for the answer (less than the probe's own time left). */
  maxMs?: number | undefined;
}

export class PipeConversation {
  readonly #ctx: ProbeContext;
  readonly #child: ChildServer;
  readonly #record: ProcessRecord;
  readonly #url: string;

  private constructor(ctx: ProbeContext, child: ChildServer, record: ProcessRecord) {
    this.#ctx = ctx;
    this.#child = child;
    this.#record = record;
    this.#url = ctx.displayTarget();
  }

  /** Start a process for a new conversation with the context's command. */
  static async start(ctx: ProbeContext): Promise<PipeConversation> {
    const spec = ctx.command;
    if (!spec) throw new Error('a stdio conversation needs a command target');
    const lifetimeMs = Math.max(
      1,
      Math.min(ctx.stdioLimits.lifetimeMs, ctx.remainingMs() + ctx.stdioLimits.sigtermWaitMs),
    );
    const child = await ChildServer.start(spec, { ...ctx.stdioLimits, lifetimeMs });
    const record: ProcessRecord = { notJson: child.notJson, stdoutBytes: 0, ending: undefined, stderr: '' };
    ctx.processes.push(record);
    return new PipeConversation(ctx, child, record);
  }

  get command(): string {
    return this.#ctx.command ? displayCommand(this.#ctx.command) : '';
  }

  /** A request as its era's client sends it, answered (or not) within the probe's time. */
  request(
    method: string,
    params: unknown,
    opts: { deliberate?: boolean; id?: number; maxMs?: number | undefined } = {},
  ): Promise<Exchange> {
    const id = opts.id ?? this.#ctx.nextId();
    return this.send(requestBody(id, method, params), {
      jsonRpcMethod: method,
      id,
      deliberate: opts.deliberate,
      maxMs: opts.maxMs,
    });
  }

  /** The next JSON-RPC id of the probe (ids are unique across its processes). */
  nextId(): number {
    return this.#ctx.nextId();
  }

  notify(method: string, params?: unknown): Promise<Exchange> {
    return this.send(notificationBody(method, params), { jsonRpcMethod: method });
  }

  /** Write one line as it is; wait for the answer with `id` when one is expected. */
  send(body: string, opts: PipeSend): Promise<Exchange> {
    const req = {
      method: 'STDIN' as const,
      url: this.#url,
      jsonRpcMethod: opts.jsonRpcMethod,
      ...(opts.deliberate ? { deliberate: true as const } : {}),
    };
    return this.#ctx.carry(req, async (timeoutMs) => {
      const ex = emptyExchange(req, 'timeout', '');
      ex.failure = null;
      ex.error = undefined;
      const wait = opts.id !== undefined || opts.deliberate;
      if (!wait) {
        this.#child.write(body);
      } else {
        const ms = Math.min(timeoutMs, opts.maxMs ?? timeoutMs);
        const answer = await this.#child.request(body, opts.id ?? null, ms, opts.deliberate ?? false);
        ex.text = answer.text;
        ex.response = answer.message;
        ex.failure = answer.failure;
        ex.error = answer.error;
      }
      ex.millis = Date.now() - ex.startedAt;
      ex.stderr = this.#child.stderr();
      return ex;
    });
  }

  /** The process ended (on its own, or killed for a limit) before the conversation closed it. */
  get ended(): boolean {
    return this.#child.ended;
  }

  /** Shut the process down (stdin closed, SIGTERM, SIGKILL) and keep how it ended. */
  async close(): Promise<Ending> {
    const ending = await this.#child.close();
    this.#record.ending = ending;
    this.#record.stdoutBytes = this.#child.stdoutBytes;
    this.#record.stderr = this.#child.stderr();
    return ending;
  }
}

/**
 * One deliberate request as the first line of a process of its own, the process then shut down in
 * the background: over stdio what a server does before (or instead of) its opening is only seen so.
 */
export async function firstLineOfNewProcess(ctx: ProbeContext, method: string, params: unknown): Promise<Exchange> {
  const pipe = await PipeConversation.start(ctx);
  const ex = await pipe.request(method, params, { deliberate: true });
  ctx.inBackground(pipe.close());
  return ex;
}
