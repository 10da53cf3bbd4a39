// Pulling from a durable JetStream consumer without taking more than we can run: each fetch asks
// for exactly the free handler slots, so no message waits in a client buffer while its ack wait
// runs out. Errors (NATS restarting, the consumer gone) end the fetch; the loop re-opens the
// consumer and pulls again, forever, until stopped.
import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { doublingDelayMs } from './backoff';
import type { Handler, Subscription } from './bus';
import {
  assertConcurrency,
  type Context,
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
  /** Decode a message; `subject` is the one it was published on (results: the sender's region). */
  decode(data: Uint8Array, subject: string): Decoded<T>;
  handler: Handler<T>;
  concurrency: number;
  ctx: Context;
}

export function pull<T>(opts: PullOptions<T>): Subscription {
  const { ctx, concurrency } = opts;
  assertConcurrency(concurrency);
  let stopped = false;
  let inFlight = 0;
  let batch: ConsumerMessages | undefined;
  // The loop sleeps either for a free slot or before a retry; stop() wakes both.
  let slotWaiter: (() => void) | undefined;
  let retryWaiter: (() => void) | undefined;
  const idle: (() => void)[] = [];
  const wake = (waiter: (() => void) | undefined) => waiter?.();
  const slotFree = () =>
    new Promise<void>((resolve) => {
      if (stopped || inFlight < concurrency) resolve();
      else slotWaiter = resolve;
    });
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      retryWaiter = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  function dispatch(msg: JsMsg) {
    const origin: Origin = { consumer: opts.consumer, subject: msg.subject, seq: msg.seq };
    const settle: Settle = {
      ack: async () => {
        await msg.ackAck();
      },
      nak: async (delayMs) => msg.nak(delayMs),
      // A bare +TERM: servers before 2.11 ignore "+TERM <reason>" and would redeliver.
      term: async () => msg.term(),
      working: async () => msg.working(),
    };
    if (stopped) {
      // Arrived after stop(): hand it straight back for another agent.
      msg.nak();
      return;
    }
    const decoded = opts.decode(msg.data, msg.subject);
    if (!decoded.ok) {
      void terminatePoison(decoded.error, origin, settle, ctx);
      return;
    }
    const delivery = makeDelivery(decoded.value, msg.info.deliveryCount - 1, settle, origin, ctx);
    inFlight++;
    void runHandler(opts.handler, delivery, origin, ctx).finally(() => {
      inFlight--;
      wake(slotWaiter);
      if (stopped && inFlight === 0) for (const resolve of idle.splice(0)) resolve();
    });
  }

  const loop = (async () => {
    let failures = 0;
    // Opened once and kept: a fetch needs no consumer info round trip; any error opens it again.
    let consumer: Consumer | undefined;
    while (!stopped) {
      await slotFree();
      if (stopped) break;
      try {
        consumer ??= await opts.open();
        if (stopped) break;
        batch = await consumer.fetch({ max_messages: concurrency - inFlight, expires: FETCH_EXPIRES_MS });
        if (stopped) batch.stop();
        for await (const msg of batch) dispatch(msg);
        if (failures > 0) ctx.log.info({ consumer: opts.consumer }, 'pulling again');
        failures = 0;
      } catch (err) {
        if (stopped) break;
        consumer = undefined;
        opts.reset();
        // One line when an outage starts, then quiet retries.
        if (failures === 0) {
          ctx.log.warn({ consumer: opts.consumer, error: (err as Error).message }, 'pulling failed; retrying');
        }
        failures++;
        await pause(doublingDelayMs(RETRY_MIN_MS, RETRY_MAX_MS, failures - 1));
      } finally {
        batch = undefined;
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      batch?.stop();
      wake(slotWaiter);
      wake(retryWaiter);
      await loop;
      if (inFlight > 0) await new Promise<void>((resolve) => idle.push(resolve));
    },
  };
}
