// The queue jobs and results travel on. Two implementations with the same semantics: NATS
// JetStream (when NATS_URL is set) and an in-process queue (one-machine mode, tests).
import type { Heartbeat, Job, Result } from './messages';

/** One delivery of a validated message. Exactly one of ack/nak/term settles it. */
export interface Delivery<T> {
  value: T;
  /** How many times this message was delivered before this delivery (0 the first time). */
  redeliveries: number;
  /** The work is safely handed on: never deliver again. */
  ack(): Promise<void>;
  /** The work failed for now: deliver again after `delayMs` (backoff chosen by the caller). */
  nak(delayMs?: number): Promise<void>;
  /** The message can never succeed: drop it, count it, log it once. */
  term(reason: string): Promise<void>;
  /** Still working: push the redelivery deadline out. */
  working(): Promise<void>;
}

export type Handler<T> = (delivery: Delivery<T>) => Promise<void>;

export interface Subscription {
  /** Stop taking new messages; resolve when the handlers in flight have settled theirs. */
  stop(): Promise<void>;
}

export type Concurrency = number | (() => number);

export interface ConsumeOptions {
  /**
   * Handlers running at once: a number, or a function read before each pull for a limit that adapts
   * (the agent's, sized from rate × latency); its value is taken as a whole number of at least 1.
   */
  concurrency: Concurrency;
  /** How long a delivery may stay unsettled before it is redelivered (default 60 s). */
  ackWaitMs?: number;
}

export interface BusStats {
  /** Messages terminated: failed validation, or a handler called term(). */
  poison: number;
  /** Messages dropped after max deliveries without being settled. */
  dropped: number;
  jobsPublished: number;
  jobsDeduplicated: number;
  /** Results are never deduplicated here: ingest counts a repeat of a job id (`mcp_ingest_total{result="duplicate"}`). */
  resultsPublished: number;
}

export interface Bus {
  readonly kind: 'nats' | 'memory';
  /** Declare what these regions need (streams, one durable consumer per region); idempotent. */
  ensure(regions: readonly string[]): Promise<void>;
  /** Publish a job to its region; a job id seen within the dedupe window is dropped (`duplicate: true`). */
  publishJob(job: Job): Promise<{ duplicate: boolean }>;
  /** Pull this region's jobs; every agent of the region shares one durable consumer. */
  consumeJobs(region: string, handler: Handler<Job>, opts: ConsumeOptions): Subscription;
  /**
   * Publish a result to its region's subject. Every publish reaches ingest, a second of the same
   * job id too: a dedupe key any publisher could claim first would let one region's agent silence
   * another's result. Ingest writes one run per job id (unique in the database), so a retried
   * publish or a redelivery is harmless.
   */
  publishResult(result: Result): Promise<void>;
  /** Pull every region's results (control's ingest); one durable consumer. */
  consumeResults(handler: Handler<Result>, opts: ConsumeOptions): Subscription;
  publishHeartbeat(heartbeat: Heartbeat): Promise<void>;
  onHeartbeat(handler: (heartbeat: Heartbeat) => void): Subscription;
  /** Messages waiting per region (jobs) and in total (results), for metrics and tests. */
  pending(): Promise<{ jobs: Record<string, number>; results: number }>;
  stats(): BusStats;
  close(): Promise<void>;
}
