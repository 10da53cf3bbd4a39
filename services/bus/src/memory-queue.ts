// One in-process queue and the durable consumer its subscribers share (every agent of a region,
// or ingest), with a JetStream consumer's semantics: a message goes to the next subscriber with a
// free slot (round robin, so the agents of a region share the work); poison is terminated before
// any handler sees it; a delivery not settled within its ack wait, or nak'd, goes back first in
// line, until max deliveries drops it.
import type { Concurrency, ConsumeOptions, Handler, Subscription } from './bus';
import {
  assertConcurrency,
  type Context,
  concurrencyNow,
  countDropped,
  type Decoded,
  makeDelivery,
  type Origin,
  runHandler,
  type Settle,
  terminatePoison,
} from './delivery';
import { type Message, MessageStore, type StoreLimits } from './memory-store';
import type { Timers } from './memory-timers';

/** What a queue shares with the bus it belongs to. */
export interface QueueEnv {
  ctx: Context;
  timers: Timers;
  /** The ack wait of a subscription that names none. */
  ackWaitMs: number;
  /** Deliveries of one message before it is dropped; unset: never dropped (results). */
  maxDeliver?: number;
  /** The next sequence number: one sequence across the bus, as `seq` in log lines. */
  nextSeq(): number;
  closed(): boolean;
}

interface Worker<T> {
  handler: Handler<T>;
  concurrency: Concurrency;
  ackWaitMs: number;
  inFlight: number;
  stopped: boolean;
  idle: (() => void)[];
}

export class MemoryQueue<T> {
  private readonly store: MessageStore;
  private workers: Worker<T>[] = [];
  /** Round robin over the workers. */
  private turn = 0;

  constructor(
    readonly consumer: string,
    private readonly decode: (data: string | Uint8Array, subject: string) => Decoded<T>,
    private readonly env: QueueEnv,
    limits?: StoreLimits,
  ) {
    this.store = new MessageStore(limits);
  }

  /** A message published on `subject`: stored as it came, validated when delivered. */
  publish(subject: string, data: string | Uint8Array): void {
    const seq = this.env.nextSeq();
    this.store.add({ seq, subject, data, at: Date.now(), deliveries: 0, current: null, done: false });
    this.pump();
  }

  subscribe(handler: Handler<T>, opts: ConsumeOptions): Subscription {
    assertConcurrency(opts.concurrency);
    const worker: Worker<T> = {
      handler,
      concurrency: opts.concurrency,
      ackWaitMs: opts.ackWaitMs ?? this.env.ackWaitMs,
      inFlight: 0,
      stopped: false,
      idle: [],
    };
    this.workers.push(worker);
    queueMicrotask(() => this.pump());
    return {
      stop: () => {
        if (!worker.stopped) {
          worker.stopped = true;
          this.workers = this.workers.filter((w) => w !== worker);
        }
        return this.idle(worker);
      },
    };
  }

  /** Messages never delivered yet (NATS's num_pending). */
  waiting(): number {
    return this.store.waiting();
  }

  /** close(): no worker takes another message; resolves when the handlers in flight are done. */
  stopAll(): Promise<void> {
    return Promise.all(
      this.workers.map((worker) => {
        worker.stopped = true;
        return this.idle(worker);
      }),
    ).then(() => {});
  }

  private idle(worker: Worker<T>): Promise<void> {
    if (worker.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => worker.idle.push(resolve));
  }

  private pump(): void {
    this.store.expire();
    while (!this.env.closed() && this.store.hasReady) {
      const worker = this.freeWorker();
      if (!worker) return;
      const message = this.store.next()!;
      if (!message.done) this.deliver(message, worker);
    }
  }

  private freeWorker(): Worker<T> | undefined {
    const n = this.workers.length;
    for (let i = 0; i < n; i++) {
      const index = (this.turn + i) % n;
      const worker = this.workers[index];
      if (worker && !worker.stopped && worker.inFlight < concurrencyNow(worker.concurrency)) {
        this.turn = (index + 1) % n;
        return worker;
      }
    }
    return undefined;
  }

  private deliver(message: Message, worker: Worker<T>): void {
    const { ctx } = this.env;
    message.deliveries++;
    const token = Symbol('delivery');
    message.current = token;
    const origin: Origin = { consumer: this.consumer, subject: message.subject, seq: message.seq };
    const ackWait = this.ackWait(message, token, worker.ackWaitMs);
    const settle = this.settle(message, token, ackWait);
    const decoded = this.decode(message.data, message.subject);
    if (!decoded.ok) {
      void terminatePoison(decoded.error, origin, settle, ctx);
      return;
    }
    ackWait.arm();
    const delivery = makeDelivery(decoded.value, message.deliveries - 1, settle, origin, ctx);
    worker.inFlight++;
    // Handlers start on a later tick, as they would after a network hop.
    void Promise.resolve()
      .then(() => runHandler(worker.handler, delivery, origin, ctx))
      .finally(() => {
        worker.inFlight--;
        if (worker.inFlight === 0) for (const resolve of worker.idle.splice(0)) resolve();
        this.pump();
      });
  }

  /** The ack wait of one delivery: when it runs out unsettled, the message goes back in line. */
  private ackWait(message: Message, token: symbol, ms: number) {
    const { timers } = this.env;
    let timer: NodeJS.Timeout | undefined;
    return {
      arm: () => {
        timers.cancel(timer);
        timer = timers.later(ms, () => {
          if (!isCurrent(message, token)) return;
          message.current = null;
          this.redeliver(message, 0);
        });
      },
      cancel: () => timers.cancel(timer),
    };
  }

  private settle(message: Message, token: symbol, ackWait: { arm(): void; cancel(): void }): Settle {
    return {
      // An ack or term settles the message even from a delivery that was already redelivered:
      // the work is done (or hopeless) either way.
      ack: async () => {
        ackWait.cancel();
        this.store.remove(message);
      },
      term: async () => {
        ackWait.cancel();
        this.store.remove(message);
      },
      nak: async (delayMs) => {
        if (!isCurrent(message, token)) return;
        ackWait.cancel();
        message.current = null;
        this.redeliver(message, delayMs);
      },
      working: async () => {
        if (isCurrent(message, token)) ackWait.arm();
      },
    };
  }

  /** Back into the queue (first in line, like a NATS redelivery), or dropped after max deliveries. */
  private redeliver(message: Message, delayMs: number): void {
    const { env } = this;
    if (env.closed()) return;
    if (env.maxDeliver !== undefined && message.deliveries >= env.maxDeliver) {
      this.store.remove(message);
      const { subject, seq, deliveries } = message;
      countDropped({ consumer: this.consumer, subject, seq, deliveries }, env.ctx);
      return;
    }
    const back = () => {
      if (message.done || env.closed()) return;
      this.store.putBack(message);
      this.pump();
    };
    if (delayMs > 0) env.timers.later(delayMs, back);
    else back();
  }
}

/** Whether `token` is still the delivery that may nak or extend the message. */
const isCurrent = (message: Message, token: symbol) => message.current === token && !message.done;
