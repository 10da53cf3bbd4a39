// A probe's conversation with one target: its clock, its request budget, the headers it sends and
// the record of every exchange. Openings, lookups, handshakes and detections all talk through it.
// The target is a URL (HTTP: `send`) or a command (stdio: each conversation is a process of its own,
// stdio/conversation.ts, whose lines are counted, timed and recorded here through `carry`).
import type { Dispatcher } from 'undici';
import {
  defaultDispatcher,
  type Exchange,
  emptyExchange,
  type PipeMethod,
  type SendRequest,
  type StreamExchange,
  send,
} from './exchange';
import { displayUrl, secretsOf } from './redact';
import type { Ending } from './stdio/child';
import { STDIO_LIMITS, type StdioLimits } from './stdio/child';
import { type CommandSpec, displayCommand, isCommandSpec } from './stdio/command';

export interface ProbeOptions {
  /** Extra request headers, usually credentials. Their values never appear in output (nor the URL's credentials). */
  headers?: Record<string, string>;
  /** Milliseconds for the whole run (a handshake) or for each request (a detection). Default 10 000. */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  /** Called after every request, e.g. to make a span of it. */
  onExchange?: (exchange: Exchange) => void;
  /** stdio targets: the limits each process runs under (stdio/child.ts), over the defaults. */
  stdio?: Partial<StdioLimits>;
}

/** What one stdio process of a probe did besides answering: kept for findings (stdout_only_protocol…). */
export interface ProcessRecord {
  /** Lines on stdout that were not JSON-RPC messages, and the first of them. */
  notJson: { count: number; samples: string[] };
  stdoutBytes: number;
  /** How it ended (set once it has). */
  ending: Ending | undefined;
  /** The last bytes of its stderr. */
  stderr: string;
}

export const DEFAULT_TIMEOUT_MS = 10_000;

interface Budget {
  limit: number;
  used: number;
}

export class ProbeContext {
  /** A stdio target's command; undefined for a URL. */
  readonly command: CommandSpec | undefined;
  readonly stdioLimits: StdioLimits;
  /** Every stdio process this probe started, in order. */
  readonly processes: ProcessRecord[] = [];
  readonly startedAt = Date.now();
  readonly deadline: number;
  readonly exchanges: Exchange[] = [];
  readonly secrets: string[];
  readonly #headers: Record<string, string>;
  readonly #perRequestMs: number;
  readonly #dispatcher: Dispatcher;
  readonly #onExchange: ((e: Exchange) => void) | undefined;
  readonly #budgets: Budget[];
  readonly #url: URL | undefined;
  readonly #shutdowns: Promise<unknown>[] = [];
  #nextId = 0;

  constructor(
    target: URL | CommandSpec,
    opts: ProbeOptions,
    limits: { maxRequests: number; totalMs: number; perRequestMs?: number },
  ) {
    this.command = isCommandSpec(target) ? target : undefined;
    this.#url = isCommandSpec(target) ? undefined : target;
    this.stdioLimits = { ...STDIO_LIMITS, ...opts.stdio };
    this.deadline = this.startedAt + limits.totalMs;
    this.#perRequestMs = limits.perRequestMs ?? limits.totalMs;
    // Header names are case-insensitive: lower-case the operator's so ours replace, not duplicate, them.
    this.#headers = Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    // A command's environment is where its credentials travel (API keys): every value is kept out of output.
    this.secrets = this.command ? secretsOf({ ...this.command.env }) : secretsOf(this.#headers, this.#url);
    this.#dispatcher = opts.dispatcher ?? defaultDispatcher;
    this.#onExchange = opts.onExchange;
    this.#budgets = [{ limit: limits.maxRequests, used: 0 }];
  }

  /** The URL an HTTP step talks to. A stdio target has none: asking is a bug (its openings are stdio's own). */
  get target(): URL {
    if (!this.#url) throw new Error('an HTTP step was asked of a stdio target');
    return this.#url;
  }

  /** The target as a report shows it: the URL without credentials, or the command line without its environment. */
  displayTarget(): string {
    return this.command ? displayCommand(this.command) : displayUrl(this.target);
  }

  /**
   * A stdio process's shutdown, left to run beside the probe's next steps (its waits are bounded,
   * child.ts): a process that ignores SIGTERM must not spend the run's time. `settle` awaits them all.
   */
  inBackground(shutdown: Promise<unknown>): void {
    this.#shutdowns.push(shutdown);
  }

  /** Every process this probe started has exited (and how is recorded). */
  async settle(): Promise<void> {
    while (this.#shutdowns.length > 0) await Promise.all(this.#shutdowns.splice(0));
  }

  /** HTTP requests sent (stdio: lines written) so far. */
  get requests(): number {
    return this.#budgets[0]!.used;
  }

  get requestsLeft(): number {
    return Math.min(...this.#budgets.map((b) => b.limit - b.used));
  }

  remainingMs(): number {
    return this.deadline - Date.now();
  }

  millis(): number {
    return Date.now() - this.startedAt;
  }

  nextId(): number {
    this.#nextId += 1;
    return this.#nextId;
  }

  /** Run `fn` with at most `limit` more requests (a lookup's bound), on top of the run's own. */
  async withBudget<T>(limit: number, fn: () => Promise<T>): Promise<T> {
    const budget = { limit, used: 0 };
    this.#budgets.push(budget);
    try {
      return await fn();
    } finally {
      this.#budgets.splice(this.#budgets.indexOf(budget), 1);
    }
  }

  async send(req: SendRequest): Promise<Exchange> {
    const refused = this.#refuse(req);
    if (refused) return refused;
    const ex = await send(this.#withHeaders(req), { dispatcher: this.#dispatcher, timeoutMs: this.#timeout() });
    return this.#record(ex);
  }

  /** A GET that may open an event stream; the caller owns (and must close) the reader. */
  async openStream(req: SendRequest): Promise<StreamExchange> {
    const refused = this.#refuse(req);
    if (refused) return { exchange: refused, reader: undefined };
    const res = await send(this.#withHeaders(req), {
      dispatcher: this.#dispatcher,
      timeoutMs: this.#timeout(),
      stream: true,
    });
    this.#record(res.exchange);
    return res;
  }

  /**
   * One line over a stdio process (stdio/conversation.ts): the same budget, deadline and record as
   * `send`. `carry` gets the time left for this request and returns its exchange.
   */
  async carry(
    req: { method: PipeMethod; url: string; jsonRpcMethod?: string | undefined; deliberate?: true | undefined },
    carry: (timeoutMs: number) => Promise<Exchange>,
  ): Promise<Exchange> {
    const refused = this.#refuse(req);
    if (refused) return refused;
    return this.#record(await carry(this.#timeout()));
  }

  #timeout(): number {
    return Math.max(1, Math.min(this.#perRequestMs, this.remainingMs()));
  }

  #refuse(req: Parameters<typeof emptyExchange>[0]): Exchange | undefined {
    if (this.requestsLeft <= 0) return emptyExchange(req, 'request_budget', 'the request budget is spent');
    if (this.remainingMs() <= 0) return emptyExchange(req, 'timeout', 'the time budget is spent');
    for (const b of this.#budgets) b.used += 1;
    return undefined;
  }

  #withHeaders(req: SendRequest): SendRequest {
    return { ...req, headers: { ...this.#headers, ...req.headers } };
  }

  #record(ex: Exchange): Exchange {
    this.exchanges.push(ex);
    this.#onExchange?.(ex);
    return ex;
  }
}
