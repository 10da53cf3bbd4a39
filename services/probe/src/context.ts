// A probe's conversation with one target: its clock, its request budget, the headers it sends and
// the record of every exchange. Openings, lookups, handshakes and detections all talk through it.
import type { Dispatcher } from 'undici';
import {
  defaultDispatcher,
  type Exchange,
  emptyExchange,
  type SendRequest,
  type StreamExchange,
  send,
} from './exchange';
import { secretsOf } from './redact';

export interface ProbeOptions {
  /** Extra request headers, usually credentials. Their values never appear in output (nor the URL's credentials). */
  headers?: Record<string, string>;
  /** Milliseconds for the whole run (a handshake) or for each request (a detection). Default 10 000. */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  /** Called after every request, e.g. to make a span of it. */
  onExchange?: (exchange: Exchange) => void;
}

export const DEFAULT_TIMEOUT_MS = 10_000;

interface Budget {
  limit: number;
  used: number;
}

export class ProbeContext {
  readonly target: URL;
  readonly startedAt = Date.now();
  readonly deadline: number;
  readonly exchanges: Exchange[] = [];
  readonly secrets: string[];
  readonly #headers: Record<string, string>;
  readonly #perRequestMs: number;
  readonly #dispatcher: Dispatcher;
  readonly #onExchange: ((e: Exchange) => void) | undefined;
  readonly #budgets: Budget[];
  #nextId = 0;

  constructor(
    target: URL,
    opts: ProbeOptions,
    limits: { maxRequests: number; totalMs: number; perRequestMs?: number },
  ) {
    this.target = target;
    this.deadline = this.startedAt + limits.totalMs;
    this.#perRequestMs = limits.perRequestMs ?? limits.totalMs;
    // Header names are case-insensitive: lower-case the operator's so ours replace, not duplicate, them.
    this.#headers = Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    this.secrets = secretsOf(this.#headers, target);
    this.#dispatcher = opts.dispatcher ?? defaultDispatcher;
    this.#onExchange = opts.onExchange;
    this.#budgets = [{ limit: limits.maxRequests, used: 0 }];
  }

  /** HTTP requests sent so far. */
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

  #timeout(): number {
    return Math.max(1, Math.min(this.#perRequestMs, this.remainingMs()));
  }

  #refuse(req: SendRequest): Exchange | undefined {
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
