// What the NATS bus declares on the server, and how: two work-queue streams (jobs per region,
// results), one durable pull consumer per region shared by its agents, one for ingest. The jobs
// stream has a max age and a per-subject (per-region) cap that discards the oldest; results none.
// Everything here stays within NATS 2.9: one filter subject per consumer, no server backoff list
// (on 2.9 it replaces ack_wait and does not apply to naks), no 2.10+ stream fields.

import type { Logger } from '@mcp-fleet/log';
import {
  AckPolicy,
  type ConsumerConfig,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { subjects } from './messages';

/** Subjects, stream and consumer names under one namespace (`mcpfleet` in production). */
export function natsNames(namespace: string) {
  if (!/^[a-z][a-z0-9_]{0,31}$/.test(namespace)) {
    throw new TypeError(`invalid namespace ${JSON.stringify(namespace)}: lower-case letters, digits and _`);
  }
  const upper = namespace.toUpperCase();
  return {
    namespace,
    ...subjects(namespace),
    jobsStream: `${upper}_JOBS`,
    resultsStream: `${upper}_RESULTS`,
    allJobs: `${namespace}.jobs.>`,
    allResults: `${namespace}.results.>`,
    allHeartbeats: `${namespace}.heartbeats.*`,
    jobsConsumer: (region: string) => `jobs-${region}`,
    ingestConsumer: 'ingest',
  } as const;
}
export type NatsNames = ReturnType<typeof natsNames>;

const isApiError = (err: unknown, code: number) => err instanceof JetStreamApiError && err.code === code;

/** The stream or the consumer asked for does not exist (yet). */
export const isNotFound = (err: unknown) =>
  isApiError(err, JetStreamApiCodes.StreamNotFound) || isApiError(err, JetStreamApiCodes.ConsumerNotFound);

/** How long a message may wait and how many one subject holds (the oldest goes first). */
export interface StreamLimits {
  maxAgeMs: number;
  maxPerSubject: number;
}

/** One stream as the bus wants it. */
export interface StreamSpec {
  name: string;
  subject: string;
  duplicateWindowMs: number;
  limits?: StreamLimits;
  /**
   * Copies a JetStream cluster keeps (num_replicas). Unset: created with the server's default (1)
   * and never changed; set: an existing stream with another count is changed to it.
   */
  replicas?: number;
}

/**
 * Create the stream, or bring its subjects, dedupe window, limits and replicas up to date in place
 * (a stream from an older version gains them, its messages kept); retention and storage cannot change.
 */
export async function upsertStream(jsm: JetStreamManager, spec: StreamSpec, log: Logger) {
  const { name, subject, limits, replicas } = spec;
  const tunable: Partial<StreamConfig> = {
    subjects: [subject],
    duplicate_window: nanos(spec.duplicateWindowMs),
    ...(limits
      ? {
          max_age: nanos(limits.maxAgeMs),
          max_msgs_per_subject: limits.maxPerSubject,
          discard: DiscardPolicy.Old,
        }
      : {}),
    ...(replicas !== undefined ? { num_replicas: replicas } : {}),
  };
  const want: Partial<StreamConfig> & { name: string } = {
    name,
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    ...tunable,
  };
  let have: StreamConfig;
  try {
    have = (await jsm.streams.info(name)).config;
  } catch (err) {
    if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
    await jsm.streams.add(want).catch((addErr) => Promise.reject(replicasRefused(addErr, name, replicas)));
    return;
  }
  if (have.retention !== want.retention || have.storage !== want.storage) {
    throw new Error(
      `stream ${name} exists with ${have.retention} retention on ${have.storage} storage; ` +
        'it must be a work queue on file storage (delete it to let the bus recreate it)',
    );
  }
  const rescale = replicas !== undefined && have.num_replicas !== replicas;
  const stale =
    rescale ||
    have.subjects.join() !== subject ||
    have.duplicate_window !== want.duplicate_window ||
    (limits !== undefined &&
      (have.max_age !== want.max_age ||
        have.max_msgs_per_subject !== want.max_msgs_per_subject ||
        have.discard !== want.discard));
  if (!stale) return;
  await jsm.streams.update(name, tunable).catch((err) => Promise.reject(replicasRefused(err, name, replicas)));
  if (!rescale) return;
  // The cluster copies (or drops copies of) every message, and moves the stream's durables with it
  // (they inherit its count): worth a line, and the durables are declared only once it has settled.
  log.info({ stream: name, from: have.num_replicas, to: replicas }, 'stream replicas changed');
  await settled(jsm, name, replicas);
}

/** A server that cannot keep that many copies (a single server, or fewer nodes) says so in its words: add ours. */
function replicasRefused(err: unknown, name: string, replicas: number | undefined): unknown {
  if (!(err instanceof JetStreamApiError) || replicas === undefined || replicas === 1) return err;
  if (!/replica|cluster|peers|resources/i.test(err.message)) return err;
  return new Error(
    `stream ${name}: NATS cannot keep ${replicas} copies (${err.message}); ` +
      "MCP_FLEET_NATS_REPLICAS may be at most the JetStream cluster's nodes, and 1 for a single server",
    { cause: err },
  );
}

/** How long a stream whose replicas changed may take to have them all current, and its durables led. */
const SETTLE_MS = 60_000;

/**
 * Until the stream has a leader and `replicas - 1` current followers, and each of its durables a
 * leader: while they move, their API requests go unanswered (a timeout, not an error to act on).
 */
async function settled(jsm: JetStreamManager, name: string, replicas: number) {
  const deadline = Date.now() + SETTLE_MS;
  let last = 'no answer';
  for (;;) {
    try {
      const { cluster } = await jsm.streams.info(name);
      const followers = cluster?.replicas ?? [];
      const durables = await jsm.consumers.list(name).next();
      const leaderless = durables.filter((c) => !c.cluster?.leader).map((c) => c.name);
      if (cluster?.leader && followers.length === replicas - 1 && followers.every((r) => r.current)) {
        if (leaderless.length === 0) return;
        last = `durables without a leader: ${leaderless.join(', ')}`;
      } else
        last = `leader ${cluster?.leader ?? 'none'}, ${followers.filter((r) => r.current).length} current followers`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline)
      throw new Error(`stream ${name} did not settle in ${replicas} replicas within ${SETTLE_MS / 1000} s (${last})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export interface DurableSettings {
  ackWaitMs: number;
  maxDeliver: number;
  /** max_deliver is not a choice but an invariant: always brought up to date, `update` or not. */
  maxDeliverFixed?: boolean;
}

/**
 * Create the durable pull consumer, or (when `update`) bring its ack wait and max deliveries up to
 * date. All agents of a region share it, so whoever updates it sets it for all of them.
 */
export async function upsertConsumer(
  jsm: JetStreamManager,
  stream: string,
  name: string,
  filterSubject: string | undefined,
  settings: DurableSettings,
  update: boolean,
) {
  const tunable = { ack_wait: nanos(settings.ackWaitMs), max_deliver: settings.maxDeliver };
  const want: Partial<ConsumerConfig> = {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ...(filterSubject ? { filter_subject: filterSubject } : {}),
    ...tunable,
  };
  let have: ConsumerConfig;
  try {
    have = (await jsm.consumers.info(stream, name)).config;
  } catch (err) {
    if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
    try {
      await jsm.consumers.add(stream, want);
      return;
    } catch (addErr) {
      // A peer may have created it first with other settings (2.10+ refuses a differing create).
      have = await jsm.consumers.info(stream, name).then(
        (info) => info.config,
        () => Promise.reject(addErr),
      );
    }
  }
  if (update && (have.ack_wait !== tunable.ack_wait || have.max_deliver !== tunable.max_deliver)) {
    await jsm.consumers.update(stream, name, tunable);
  } else if (settings.maxDeliverFixed && have.max_deliver !== tunable.max_deliver) {
    // An invariant, imposed whoever created the consumer: ingest's unlimited deliveries replace
    // the limit a consumer made by an older version still has.
    await jsm.consumers.update(stream, name, { max_deliver: tunable.max_deliver });
  }
}
