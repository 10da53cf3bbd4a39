// The in-process queue for one-machine mode and tests, with the NATS bus's semantics: one shared
// work queue per region (and one for results), jobs deduplicated by job id within a window (results
// never: ingest's unique job id keeps one run per job), ack/nak/term,
// redelivery after the ack wait, max deliveries, poison terminated before any handler sees it,
// and the jobs stream's limits (a max age, a cap per region that discards the oldest).
// Messages are stored serialized, as on the wire, and validated again when consumed.
// This file puts the parts together: memory-queue (a queue and its consumer), memory-store (what
// a queue holds), memory-dedupe, memory-timers; heartbeats are handed straight to the listeners.
import type { Bus } from './bus';
import { decodeJob, decodeResult, newContext } from './delivery';
import { type HeartbeatListener, receiveHeartbeat } from './heartbeats';
import { Dedupe } from './memory-dedupe';
import { MemoryQueue, type QueueEnv } from './memory-queue';
import { Timers } from './memory-timers';
import {
  assertRegion,
  encodeMessage,
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

export function createMemoryBus(opts: MemoryBusOptions = {}): MemoryBus {
  const ctx = newContext(opts);
  const { stats } = ctx;
  const limits = jobLimits(opts);
  const names = subjects(BUS_DEFAULTS.namespace);
  const timers = new Timers();
  let seq = 0;
  let closed = false;
  const env: QueueEnv = {
    ctx,
    timers,
    ackWaitMs: opts.ackWaitMs ?? BUS_DEFAULTS.ackWaitMs,
    nextSeq: () => ++seq,
    closed: () => closed,
  };
  const maxDeliver = opts.maxDeliver ?? BUS_DEFAULTS.maxDeliver;
  const jobQueues = new Map<string, MemoryQueue<Job>>();
  // Results are never dropped after max deliveries: ingest naks only what the database could not
  // take (as on NATS, see nats-declare.ts).
  const results = new MemoryQueue<Result>('ingest', decodeResult, env);
  // As on NATS, the jobs' dedupe window is at most their max age.
  const jobIds = new Dedupe(limits.duplicateWindowMs);
  const listeners = new Set<HeartbeatListener>();

  function jobQueue(region: string): MemoryQueue<Job> {
    let queue = jobQueues.get(region);
    if (!queue) {
      queue = new MemoryQueue<Job>(
        `jobs-${region}`,
        (data) => decodeJob(region, data),
        { ...env, maxDeliver },
        { maxAgeMs: limits.maxAgeMs, maxMessages: limits.maxPerRegion },
      );
      jobQueues.set(region, queue);
    }
    return queue;
  }

  function assertOpen() {
    if (closed) throw new Error('bus closed');
  }

  const heartbeatArrives = (subject: string, data: string | Uint8Array) =>
    queueMicrotask(() => receiveHeartbeat(subject, data, listeners, ctx));

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
      jobQueue(value.region).publish(names.jobs(value.region), data);
      stats.jobsPublished++;
      return { duplicate: false };
    },

    consumeJobs(region, handler, opts) {
      const queue = jobQueue(assertRegion(region));
      assertOpen();
      return queue.subscribe(handler, opts);
    },

    async publishResult(result) {
      assertOpen();
      const { value, data } = encodeMessage(ResultSchema, result, 'result');
      // No dedupe, as on NATS (see publishResult in bus.ts).
      results.publish(names.results(value.region), data);
      stats.resultsPublished++;
    },

    consumeResults(handler, opts) {
      assertOpen();
      return results.subscribe(handler, opts);
    },

    async publishHeartbeat(heartbeat) {
      assertOpen();
      const { value, data } = encodeMessage(HeartbeatSchema, heartbeat, 'heartbeat');
      heartbeatArrives(names.heartbeats(value.region), data);
    },

    onHeartbeat(listener) {
      listeners.add(listener);
      return {
        stop: async () => {
          listeners.delete(listener);
        },
      };
    },

    publishRaw(subject, data) {
      assertOpen();
      const [namespace, kind, region, ...rest] = subject.split('.');
      if (namespace !== BUS_DEFAULTS.namespace || !region || rest.length > 0) {
        throw new TypeError(`no queue for subject ${subject}`);
      }
      if (kind === 'jobs') jobQueue(region).publish(subject, data);
      else if (kind === 'results') results.publish(subject, data);
      else if (kind === 'heartbeats') heartbeatArrives(subject, data);
      else throw new TypeError(`no queue for subject ${subject}`);
    },

    async pending() {
      const jobs: Record<string, number> = {};
      for (const [region, queue] of jobQueues) jobs[region] = queue.waiting();
      return { jobs, results: results.waiting() };
    },

    stats: () => ({ ...stats }),

    async close() {
      if (closed) return;
      closed = true;
      const stops = [...jobQueues.values(), results].map((queue) => queue.stopAll());
      listeners.clear();
      await Promise.all(stops);
      timers.clear();
    },
  };
}
