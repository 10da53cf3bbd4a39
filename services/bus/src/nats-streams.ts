// What the NATS bus declares on the server, and how: two work-queue streams (jobs per region,
// results), one durable pull consumer per region shared by its agents, one for ingest. The jobs
// stream has a max age and a per-subject (per-region) cap that discards the oldest; results none.
// Everything here stays within NATS 2.9: one filter subject per consumer, no server backoff list
// (on 2.9 it replaces ack_wait and does not apply to naks), no 2.10+ stream fields.
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

/**
 * Create the stream, or bring its subjects, dedupe window and limits up to date in place (a
 * stream from an older version gains them, its messages kept); retention and storage cannot change.
 */
export async function upsertStream(
  jsm: JetStreamManager,
  name: string,
  subject: string,
  duplicateWindowMs: number,
  limits?: StreamLimits,
) {
  const tunable: Partial<StreamConfig> = {
    subjects: [subject],
    duplicate_window: nanos(duplicateWindowMs),
    ...(limits
      ? {
          max_age: nanos(limits.maxAgeMs),
          max_msgs_per_subject: limits.maxPerSubject,
          discard: DiscardPolicy.Old,
        }
      : {}),
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
    await jsm.streams.add(want);
    return;
  }
  if (have.retention !== want.retention || have.storage !== want.storage) {
    throw new Error(
      `stream ${name} exists with ${have.retention} retention on ${have.storage} storage; ` +
        'it must be a work queue on file storage (delete it to let the bus recreate it)',
    );
  }
  const stale =
    have.subjects.join() !== subject ||
    have.duplicate_window !== want.duplicate_window ||
    (limits !== undefined &&
      (have.max_age !== want.max_age ||
        have.max_msgs_per_subject !== want.max_msgs_per_subject ||
        have.discard !== want.discard));
  if (stale) await jsm.streams.update(name, tunable);
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
