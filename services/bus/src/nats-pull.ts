// Pulling from a durable JetStream consumer without taking more than we can run: each fetch asks
// for exactly the free handler slots, so no message waits in a client buffer while its ack wait
// runs out. Errors (NATS restarting, the consumer gone) end the fetch; the loop re-opens the
// consumer and pulls again, forever, until stopped.
import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { doublingDelayMs } from './backoff';
import type { Concurrency, Handler, Subscription } from './bus';
import {
  assertConcurrency,
  type Context,
  concurrencyNow,
  type Decoded,
  makeDelivery,
  type Origin,
  runHandler,
  type Settle,
  terminatePoison,
} from './delivery';

/** How long one pull request waits at the server for messages; short, so stop() and errors show quickly. */
const FETCH_EXPIRES_MS = 5_000;
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5_000;

export interface PullOptions<T> {
  consumer: string;
  /** The consumer, declared if needed; called again after an error. */
  open(): Promise<Consumer>;
  /** Forget what open() knew (the consumer may have to be declared again). */
  reset(): void;
  /**
   * Decode a message into what it carries (a job, or one or more results); `subject` is the one it
   * was published on (results: the sender's region).
   */
  decode(data: Uint8Array, subject: string): Decoded<T>[];
  handler: Handler<T>;
  concurrency: Concurrency;
  ctx: Context;
}

export function pull<T>(opts: PullOptions<T>): Subscription {
  assertConcurrency(opts.concurrency);
  const loop = new PullLoop(opts);
  return { stop: () => loop.stop() };
}

class PullLoop<T> {
  private stopped = false;
  /** Deliveries whose handlers run (a message of results may carry several). */
  private inFlight = 0;
  /** Deliveries per message, averaged: a fetch asks for the messages the free slots can take. */
  private perMessage = 1;
  private batch: ConsumerMessages | undefined;
  // The loop sleeps either for a free slot or before a retry; stop() wakes both.
  private slotWaiter: (() => void) | undefined;
  private retryWaiter: (() => void) | undefined;
  private readonly idle: (() => void)[] = [];
  private readonly running: Promise<void>;

  constructor(private readonly opts: PullOptions<T>) {
    this.running = this.run();
  }

  /** Stop taking messages; resolves when the handlers in flight have settled theirs. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.batch?.stop();
    this.slotWaiter?.();
    this.retryWaiter?.();
    await this.running;
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private async run(): Promise<void> {
    const { opts } = this;
    const { ctx } = opts;
    let failures = 0;
    // Opened once and kept: a fetch needs no consumer info round trip; any error opens it again.
    let consumer: Consumer | undefined;
    while (!this.stopped) {
      await this.slotFree();
      if (this.stopped) break;
      try {
        consumer ??= await opts.open();
        if (this.stopped) break;
        this.batch = await consumer.fetch({
          max_messages: Math.max(1, Math.floor((concurrencyNow(opts.concurrency) - this.inFlight) / this.perMessage)),
          expires: FETCH_EXPIRES_MS,
        });
        if (this.stopped) this.batch.stop();
        for await (const msg of this.batch) this.dispatch(msg);
        if (failures > 0) ctx.log.info({ consumer: opts.consumer }, 'pulling again');
        failures = 0;
      } catch (err) {
        if (this.stopped) break;
        consumer = undefined;
        opts.reset();
        // One line when an outage starts, then quiet retries.
        if (failures === 0) {
          ctx.log.warn({ consumer: opts.consumer, error: (err as Error).message }, 'pulling failed; retrying');
        }
        failures++;
        await this.pause(doublingDelayMs(RETRY_MIN_MS, RETRY_MAX_MS, failures - 1));
      } finally {
        this.batch = undefined;
      }
    }
  }

  /** One pulled message: poison terminated, anything else handed to the handler in a free slot. */
  private dispatch(msg: JsMsg): void {
    const { ctx } = this.opts;
    if (this.stopped) {
      // Arrived after stop(): hand it straight back for another agent.
      msg.nak();
      return;
    }
    const origin: Origin = { consumer: this.opts.consumer, subject: msg.subject, seq: msg.seq };
    const items = this.opts.decode(msg.data, msg.subject);
    this.perMessage += (items.length - this.perMessage) / 8;
    const wire = settleOnWire(msg);
    const settle = items.length === 1 ? () => wire : shareSettle(wire, items.length);
    for (const decoded of items) {
      if (!decoded.ok) {
        void terminatePoison(decoded.error, origin, settle(), ctx);
        continue;
      }
      const delivery = makeDelivery(decoded.value, msg.info.deliveryCount - 1, settle(), origin, ctx);
      this.inFlight++;
      void runHandler(this.opts.handler, delivery, origin, ctx).finally(() => {
        this.inFlight--;
        this.slotWaiter?.();
        if (this.stopped && this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
    }
  }

  private slotFree(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.stopped || this.inFlight < concurrencyNow(this.opts.concurrency)) resolve();
      else this.slotWaiter = resolve;
    });
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.retryWaiter = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** Settling a pulled message on the wire. */
function settleOnWire(msg: JsMsg): Settle {
  return {
    // A plain ack, not a double ack (ackAck): every consumer of ours is idempotent by job id (the
    // agent's second result of a job is dropped by ingest, ingest writes one run per job id), so an
    // ack lost on the wire costs one redelivery, never a loss or a double; waiting for the server to
    // confirm it cost a request (an inbox reply, a timer) per message on both sides and in NATS.
    ack: async () => msg.ack(),
    nak: async (delayMs) => msg.nak(delayMs),
    // A bare +TERM: servers before 2.11 ignore "+TERM <reason>" and would redeliver.
    term: async () => msg.term(),
    working: async () => msg.working(),
  };
}

/**
 * One message's settling shared by the deliveries it carries (a batch of results): the message is
 * settled on the wire once all of them are. Any nak brings the whole message back (after the
 * longest delay asked): its other results are written again as repeats, which ingest, idempotent
 * by job id, acks without a second run. Otherwise it is acked, or termed if every one was poison.
 */
function shareSettle(wire: Settle, deliveries: number): () => Settle {
  let left = deliveries;
  let acked = 0;
  let nakMs: number | undefined;
  const settled = () => {
    left--;
    if (left > 0) return Promise.resolve();
    if (nakMs !== undefined) return wire.nak(nakMs);
    return acked > 0 ? wire.ack() : wire.term();
  };
  // Each delivery settles at most once (makeDelivery's first-wins, or one poison term).
  return () => ({
    ack: () => {
      acked++;
      return settled();
    },
    nak: (delayMs) => {
      nakMs = Math.max(nakMs ?? 0, delayMs);
      return settled();
    },
    term: () => settled(),
    working: () => wire.working(),
  });
}
