// The in-process queue for one-machine mode and tests, with the NATS bus's semantics: one shared
// work queue per region (and one for results), jobs deduplicated by job id within a window (results
// never: ingest's unique job id keeps one run per job), ack/nak/term,
// redelivery after the ack wait, max deliveries, poison terminated before any handler sees it,
// and the jobs stream's limits (a max age, a cap per region that discards the oldest).
// Messages are stored serialized, as on the wire, and validated again when consumed.

import { createLogger } from '@mcp-fleet/log';
import type { Bus, ConsumeOptions, Handler, Subscription } from './bus';
import {
  type Context,
  type Decoded,
  decodeHeartbeat,
  decodeJob,
  decodeResult,
  emptyStats,
  makeDelivery,
  type Origin,
  runHandler,
  type Settle,
  terminatePoison,
} from './delivery';
import {
  assertRegion,
  encodeMessage,
  type Heartbeat,
  HeartbeatSchema,
  type Job,
  JobSchema,
  type Result,
  ResultSchema,
  subjects,
} from './messages';
import { BUS_DEFAULTS, jobLimits, type QueueOptions } from './options';

export type MemoryBusOptions = QueueOptions;

export interface MemoryBus extends Bus {
  readonly kind: 'memory';
  /** Put raw bytes on a subject (`mcpfleet.jobs.<region>`, …) unvalidated, as a foreign publisher could. */
  publishRaw(subject: string, data: string | Uint8Array): void;
}

interface Message {
  seq: number;
  subject: string;
  data: string | Uint8Array;
  /** When it was published (Date.now()): a job older than the max age is gone. */
  at: number;
  deliveries: number;
  /** The delivery that may still nak or extend it; null while it waits in the queue. */
  current: symbol | null;
  done: boolean;
}

interface Worker<T> {
  handler: Handler<T>;
  concurrency: number;
  ackWaitMs: number;
  inFlight: number;
  stopped: boolean;
  idle: (() => void)[];
}

interface Queue<T> {
  consumer: string;
  decode: (data: string | Uint8Array, subject: string) => Decoded<T>;
  ready: Message[];
  workers: Worker<T>[];
  /** Round robin over the workers, so agents of a region share the work. */
  turn: number;
  /** Jobs queues: what the stream holds (waiting or in flight, oldest first), against its limits. */
  limits?: { maxAgeMs: number; maxMessages: number; stored: Set<Message> };
}

/** Job ids seen within the window; a Map keeps insertion order, which is expiry order. */
class Dedupe {
  private seen = new Map<string, number>();
  constructor(private windowMs: number) {}
  duplicate(id: string, now = Date.now()): boolean {
    for (const [key, expires] of this.seen) {
      if (expires > now) break;
      this.seen.delete(key);
    }
    if (this.seen.has(id)) return true;
    this.seen.set(id, now + this.windowMs);
    return false;
  }
}

export function createMemoryBus(opts: MemoryBusOptions = {}): MemoryBus {
  const log = opts.log ?? createLogger('bus');
  const defaultAckWaitMs = opts.ackWaitMs ?? BUS_DEFAULTS.ackWaitMs;
  const maxDeliver = opts.maxDeliver ?? BUS_DEFAULTS.maxDeliver;
  const limits = jobLimits(opts);
  const stats = emptyStats();
  const ctx: Context = { log, stats, nakBackoffMs: opts.nakBackoffMs ?? BUS_DEFAULTS.nakBackoffMs };
  const names = subjects(BUS_DEFAULTS.namespace);
  const jobQueues = new Map<string, Queue<Job>>();
  const results = newQueue<Result>('ingest', decodeResult);
  // As on NATS, the jobs' dedupe window is at most their max age.
  const jobIds = new Dedupe(limits.duplicateWindowMs);
  const heartbeatHandlers = new Set<(heartbeat: Heartbeat) => void>();
  // Every timer is unref'd and tracked, so the queue never keeps the process alive and close() clears them.
  const timers = new Set<NodeJS.Timeout>();
  let seq = 0;
  let closed = false;

  function newQueue<T>(consumer: string, decode: Queue<T>['decode']): Queue<T> {
    return { consumer, decode, ready: [], workers: [], turn: 0 };
  }

  function jobQueue(region: string): Queue<Job> {
    let queue = jobQueues.get(region);
    if (!queue) {
      queue = newQueue<Job>(`jobs-${region}`, (data) => decodeJob(region, data));
      queue.limits = { maxAgeMs: limits.maxAgeMs, maxMessages: limits.maxPerRegion, stored: new Set() };
      jobQueues.set(region, queue);
    }
    return queue;
  }

  function later(ms: number, fn: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    timers.add(timer);
    return timer;
  }

  function cancel(timer: NodeJS.Timeout | undefined) {
    if (!timer) return;
    clearTimeout(timer);
    timers.delete(timer);
  }

  function assertOpen() {
    if (closed) throw new Error('bus closed');
  }

  function enqueue<T>(queue: Queue<T>, subject: string, data: string | Uint8Array) {
    const message: Message = { seq: ++seq, subject, data, at: Date.now(), deliveries: 0, current: null, done: false };
    queue.ready.push(message);
    if (queue.limits) {
      queue.limits.stored.add(message);
      // Past the cap, the oldest job goes, waiting or in flight (NATS: discard old per subject).
      for (const oldest of queue.limits.stored) {
        if (queue.limits.stored.size <= queue.limits.maxMessages) break;
        remove(queue, oldest);
      }
    }
    pump(queue);
  }

  /** Out of the stream: acked, terminated, dropped, discarded or expired. */
  function remove<T>(queue: Queue<T>, message: Message) {
    message.done = true;
    queue.limits?.stored.delete(message);
  }

  /** Jobs past the max age leave the stream (oldest first, so the scan stops at the first young one). */
  function expire<T>(queue: Queue<T>, now = Date.now()) {
    if (!queue.limits) return;
    for (const message of queue.limits.stored) {
      if (now - message.at <= queue.limits.maxAgeMs) break;
      remove(queue, message);
    }
  }

  function freeWorker<T>(queue: Queue<T>): Worker<T> | undefined {
    const n = queue.workers.length;
    for (let i = 0; i < n; i++) {
      const index = (queue.turn + i) % n;
      const worker = queue.workers[index];
      if (worker && !worker.stopped && worker.inFlight < worker.concurrency) {
        queue.turn = (index + 1) % n;
        return worker;
      }
    }
    return undefined;
  }

  function pump<T>(queue: Queue<T>) {
    expire(queue);
    while (!closed && queue.ready.length > 0) {
      const worker = freeWorker(queue);
      if (!worker) return;
      const message = queue.ready.shift()!;
      if (!message.done) deliver(queue, message, worker);
    }
  }

  /** Back into the queue (first in line, like a NATS redelivery), or a job dropped after max deliveries. */
  function redeliver<T>(queue: Queue<T>, message: Message, delayMs: number) {
    if (closed) return;
    // Results are never dropped: ingest naks only what the database could not take (see nats.ts).
    if (queue.consumer !== 'ingest' && message.deliveries >= maxDeliver) {
      remove(queue, message);
      stats.dropped++;
      log.warn(
        { consumer: queue.consumer, subject: message.subject, seq: message.seq, deliveries: message.deliveries },
        'message dropped after max deliveries',
      );
      return;
    }
    const back = () => {
      if (message.done || closed) return;
      queue.ready.unshift(message);
      pump(queue);
    };
    if (delayMs > 0) later(delayMs, back);
    else back();
  }

  function deliver<T>(queue: Queue<T>, message: Message, worker: Worker<T>) {
    message.deliveries++;
    const token = Symbol('delivery');
    message.current = token;
    const origin: Origin = { consumer: queue.consumer, subject: message.subject, seq: message.seq };
    let ackTimer: NodeJS.Timeout | undefined;
    const current = () => message.current === token && !message.done;
    const arm = () => {
      cancel(ackTimer);
      ackTimer = later(worker.ackWaitMs, () => {
        if (!current()) return;
        message.current = null;
        redeliver(queue, message, 0);
      });
    };
    const settle: Settle = {
      // An ack or term settles the message even from a delivery that was already redelivered:
      // the work is done (or hopeless) either way.
      ack: async () => {
        cancel(ackTimer);
        remove(queue, message);
      },
      term: async () => {
        cancel(ackTimer);
        remove(queue, message);
      },
      nak: async (delayMs) => {
        if (!current()) return;
        cancel(ackTimer);
        message.current = null;
        redeliver(queue, message, delayMs);
      },
      working: async () => {
        if (current()) arm();
      },
    };
    const decoded = queue.decode(message.data, message.subject);
    if (!decoded.ok) {
      void terminatePoison(decoded.error, origin, settle, ctx);
      return;
    }
    arm();
    const delivery = makeDelivery(decoded.value, message.deliveries - 1, settle, origin, ctx);
    worker.inFlight++;
    // Handlers start on a later tick, as they would after a network hop.
    void Promise.resolve()
      .then(() => runHandler(worker.handler, delivery, origin, ctx))
      .finally(() => {
        worker.inFlight--;
        if (worker.inFlight === 0) for (const resolve of worker.idle.splice(0)) resolve();
        pump(queue);
      });
  }

  function consume<T>(queue: Queue<T>, handler: Handler<T>, opts: ConsumeOptions): Subscription {
    assertOpen();
    if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) {
      throw new TypeError('concurrency is a whole number of at least 1');
    }
    const worker: Worker<T> = {
      handler,
      concurrency: opts.concurrency,
      ackWaitMs: opts.ackWaitMs ?? defaultAckWaitMs,
      inFlight: 0,
      stopped: false,
      idle: [],
    };
    queue.workers.push(worker);
    queueMicrotask(() => pump(queue));
    return {
      stop: () => {
        if (!worker.stopped) {
          worker.stopped = true;
          queue.workers = queue.workers.filter((w) => w !== worker);
        }
        if (worker.inFlight === 0) return Promise.resolve();
        return new Promise<void>((resolve) => worker.idle.push(resolve));
      },
    };
  }

  function receiveHeartbeat(subject: string, data: string | Uint8Array) {
    const parsed = decodeHeartbeat(data, subject);
    if (!parsed.ok) {
      stats.poison++;
      log.warn({ consumer: 'heartbeats', error: parsed.error }, 'poison heartbeat dropped');
      return;
    }
    for (const handler of heartbeatHandlers) {
      try {
        handler(parsed.value);
      } catch (err) {
        log.warn({ error: err instanceof Error ? err.message : String(err) }, 'heartbeat handler failed');
      }
    }
  }

  /** Messages never delivered yet (NATS's num_pending). */
  const waiting = <T>(queue: Queue<T>) => {
    expire(queue);
    return queue.ready.filter((m) => m.deliveries === 0 && !m.done).length;
  };

  return {
    kind: 'memory',

    async ensure(regions) {
      assertOpen();
      for (const region of regions) jobQueue(assertRegion(region));
    },

    async publishJob(job) {
      assertOpen();
      const { value, data } = encodeMessage(JobSchema, job, 'job');
      if (jobIds.duplicate(value.jobId)) {
        stats.jobsDeduplicated++;
        return { duplicate: true };
      }
      enqueue(jobQueue(value.region), names.jobs(value.region), data);
      stats.jobsPublished++;
      return { duplicate: false };
    },

    consumeJobs(region, handler, opts) {
      return consume(jobQueue(assertRegion(region)), handler, opts);
    },

    async publishResult(result) {
      assertOpen();
      const { value, data } = encodeMessage(ResultSchema, result, 'result');
      // No dedupe, as on NATS (see publishResult in bus.ts).
      enqueue(results, names.results(value.region), data);
      stats.resultsPublished++;
    },

    consumeResults(handler, opts) {
      return consume(results, handler, opts);
    },

    async publishHeartbeat(heartbeat) {
      assertOpen();
      const { value, data } = encodeMessage(HeartbeatSchema, heartbeat, 'heartbeat');
      queueMicrotask(() => receiveHeartbeat(names.heartbeats(value.region), data));
    },

    onHeartbeat(handler) {
      heartbeatHandlers.add(handler);
      return {
        stop: async () => {
          heartbeatHandlers.delete(handler);
        },
      };
    },

    publishRaw(subject, data) {
      assertOpen();
      const [namespace, kind, region, ...rest] = subject.split('.');
      if (namespace !== BUS_DEFAULTS.namespace || !region || rest.length > 0) {
        throw new TypeError(`no queue for subject ${subject}`);
      }
      if (kind === 'jobs') enqueue(jobQueue(region), subject, data);
      else if (kind === 'results') enqueue(results, subject, data);
      else if (kind === 'heartbeats') queueMicrotask(() => receiveHeartbeat(subject, data));
      else throw new TypeError(`no queue for subject ${subject}`);
    },

    async pending() {
      const jobs: Record<string, number> = {};
      for (const [region, queue] of jobQueues) jobs[region] = waiting(queue);
      return { jobs, results: waiting(results) };
    },

    stats: () => ({ ...stats }),

    async close() {
      if (closed) return;
      closed = true;
      const stops = [...jobQueues.values(), results].flatMap((queue) =>
        (queue.workers as Worker<unknown>[]).map((worker) => {
          worker.stopped = true;
          return worker.inFlight === 0 ? undefined : new Promise<void>((resolve) => worker.idle.push(resolve));
        }),
      );
      heartbeatHandlers.clear();
      await Promise.all(stops);
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
