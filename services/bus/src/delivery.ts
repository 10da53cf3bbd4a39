// What both queues do around a handler: decode and validate before it runs (poison never reaches
// it), let the first settle win, give a bare nak() the backoff, count and log terms and drops once,
// and nak a delivery whose handler threw.

import { createLogger, type Logger } from '@mcp-fleet/log';
import { nakBackoff } from './backoff';
import type { BusStats, Concurrency, Delivery, Handler } from './bus';
import {
  checkMessage,
  type Heartbeat,
  HeartbeatSchema,
  type Job,
  JobSchema,
  parseJson,
  parseMessage,
  type Result,
  ResultSchema,
} from './messages';
import { BUS_DEFAULTS, type QueueOptions } from './options';
import { RESULT_BATCH } from './result-batches';

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/** A job must also belong to the region whose queue it came from. */
export function decodeJob(region: string, data: Uint8Array | string): Decoded<Job> {
  const parsed = parseMessage(JobSchema, data);
  if (parsed.ok && parsed.value.region !== region) {
    return { ok: false, error: `region: a job for ${parsed.value.region} on the ${region} queue` };
  }
  return parsed;
}

/** The region a subject ends in (`<namespace>.results.<region>`, `….heartbeats.<region>`). */
export const subjectRegion = (subject: string) => subject.slice(subject.lastIndexOf('.') + 1);

/**
 * A result must also name the region of the subject it was published on. NATS permissions let an
 * agent publish only on its own region's subjects (deploy/nats): the subject is who sent it, and
 * a body claiming another region is an agent speaking for a region it does not run in.
 */
export function decodeResult(data: Uint8Array | string, subject?: string): Decoded<Result> {
  return sameRegion(parseMessage(ResultSchema, data), subject, 'result');
}

/**
 * A message on a results subject (trust boundary: anyone allowed to publish on the region's
 * subject): one result, as every agent sent before results were batched, or an array of at most
 * RESULT_BATCH.maxResults results (result-batches.ts). Each element is judged alone, region
 * included: a bad one is poison and its neighbours still go to ingest. An empty or oversized
 * array, or anything else, is one poison message.
 */
export function decodeResults(data: Uint8Array | string, subject?: string): Decoded<Result>[] {
  const json = parseJson(data);
  if (!json.ok) return [json];
  if (!Array.isArray(json.value)) return [sameRegion(checkMessage(ResultSchema, json.value), subject, 'result')];
  const items: unknown[] = json.value;
  if (items.length === 0) return [{ ok: false, error: '(root): an empty batch of results' }];
  if (items.length > RESULT_BATCH.maxResults) {
    return [{ ok: false, error: `(root): a batch of ${items.length} results, over ${RESULT_BATCH.maxResults}` }];
  }
  return items.map((item) => sameRegion(checkMessage(ResultSchema, item), subject, 'result'));
}

/** A heartbeat likewise: an agent cannot report another region's agents alive. */
export function decodeHeartbeat(data: Uint8Array | string, subject?: string): Decoded<Heartbeat> {
  return sameRegion(parseMessage(HeartbeatSchema, data), subject, 'heartbeat');
}

function sameRegion<T extends { region: string }>(parsed: Decoded<T>, subject: string | undefined, what: string) {
  if (parsed.ok && subject !== undefined && parsed.value.region !== subjectRegion(subject)) {
    return {
      ok: false,
      error: `region: a ${what} for ${parsed.value.region} on the ${subjectRegion(subject)} subject`,
    } as const;
  }
  return parsed;
}

/** The transport's side of settling one delivery. */
export interface Settle {
  ack(): Promise<void>;
  nak(delayMs: number): Promise<void>;
  term(): Promise<void>;
  working(): Promise<void>;
}

/** Where a message came from, for the one log line a term or poison gets (never its body). */
export interface Origin {
  consumer: string;
  subject: string;
  seq: number;
}

export interface Context {
  log: Logger;
  stats: BusStats;
  nakBackoffMs: readonly number[];
}

/** One bus's context: its logger, its counters (from zero), the backoff a bare nak() gets. */
export function newContext(opts: QueueOptions): Context {
  return {
    log: opts.log ?? createLogger('bus'),
    stats: { poison: 0, dropped: 0, jobsPublished: 0, jobsDeduplicated: 0, resultsPublished: 0 },
    nakBackoffMs: opts.nakBackoffMs ?? BUS_DEFAULTS.nakBackoffMs,
  };
}

/** A subscription runs at least one handler at a time, and a whole number of them. */
export function assertConcurrency(concurrency: Concurrency): void {
  if (typeof concurrency === 'function') return;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new TypeError('concurrency is a whole number of at least 1');
  }
}

/** The limit now: an adaptive one's value, floored to a whole number of at least 1. */
export function concurrencyNow(concurrency: Concurrency): number {
  const n = typeof concurrency === 'function' ? concurrency() : concurrency;
  return Number.isFinite(n) ? Math.max(1, Math.floor(n)) : 1;
}

export type TrackedDelivery<T> = Delivery<T> & { readonly settled: boolean };

export function makeDelivery<T>(
  value: T,
  redeliveries: number,
  settle: Settle,
  origin: Origin,
  ctx: Context,
): TrackedDelivery<T> {
  let settled = false;
  // The first of ack/nak/term wins; later calls are no-ops, as they are on the wire.
  const once = (fn: () => Promise<void>) => {
    if (settled) return Promise.resolve();
    settled = true;
    return fn();
  };
  return {
    value,
    redeliveries,
    get settled() {
      return settled;
    },
    ack: () => once(() => settle.ack()),
    nak: (delayMs) => once(() => settle.nak(delayMs ?? nakBackoff(ctx.nakBackoffMs, redeliveries))),
    term: (reason) =>
      once(() => {
        ctx.stats.poison++;
        ctx.log.warn({ ...origin, redeliveries, reason }, 'message terminated');
        return settle.term();
      }),
    working: () => (settled ? Promise.resolve() : settle.working()),
  };
}

/** A message that failed validation: terminated, counted, logged once, never handed to a handler. */
export function terminatePoison(error: string, origin: Origin, settle: Settle, ctx: Context): Promise<void> {
  ctx.stats.poison++;
  ctx.log.warn({ ...origin, error }, 'poison message terminated');
  return settle.term();
}

/** Where a dropped message was (its stream on NATS, its subject in process), for its one log line. */
export type DropOrigin = { consumer: string; seq: number; deliveries: unknown } & (
  | { stream: string }
  | { subject: string }
);

/** A message that reached max deliveries unsettled, now gone from its queue: counted, logged once. */
export function countDropped(where: DropOrigin, ctx: Context): void {
  ctx.stats.dropped++;
  ctx.log.warn(where, 'message dropped after max deliveries');
}

/** Run a handler; if it throws before settling, nak with the backoff so the work is retried. */
export async function runHandler<T>(handler: Handler<T>, delivery: TrackedDelivery<T>, origin: Origin, ctx: Context) {
  try {
    await handler(delivery);
  } catch (err) {
    ctx.log.warn({ ...origin, error: err instanceof Error ? err.message : String(err) }, 'handler failed');
    if (!delivery.settled) await delivery.nak().catch(() => {});
  }
}
