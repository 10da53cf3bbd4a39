// The bus on NATS JetStream: jobs and results on work-queue streams (jobs deduplicated by
// Nats-Msg-Id = job id; results carry none, see publishResult), durable pull consumers shared by
// the agents of a region, heartbeats on core NATS.
import { readFileSync } from 'node:fs';
import { createLogger, type Logger } from '@mcp-fleet/log';
import { type Consumer, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import {
  type ConnectionOptions,
  connect,
  credsAuthenticator,
  type NatsConnection,
  type Subscription as NatsSubscription,
  nanos,
} from '@nats-io/transport-node';
import type { Bus, ConsumeOptions, Subscription } from './bus';
import { type Context, decodeHeartbeat, decodeJob, decodeResult, emptyStats } from './delivery';
import { assertRegion, encodeMessage, HeartbeatSchema, JobSchema, ResultSchema } from './messages';
import { pull } from './nats-pull';
import { isNotFound, type NatsNames, natsNames, upsertConsumer, upsertStream } from './nats-streams';
import { BUS_DEFAULTS, jobLimits, type QueueOptions } from './options';

export interface NatsCredentials {
  user?: string;
  pass?: string;
  token?: string;
  /** A .creds file (JWT + NKey seed). */
  credsFile?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

export interface NatsBusOptions extends QueueOptions, NatsCredentials {
  /** One URL or several, comma-separated. */
  servers: string;
  /** First token of every subject, and (upper-cased) the stream names' prefix. Default `mcpfleet`. */
  namespace?: string;
  /** Connection name shown by the server (`nats server report connections`). */
  name?: string;
  /**
   * Whether this process declares the streams and durable consumers (control, and one-process
   * setups: the default), or only uses what control declared (an agent: its NATS user has no right
   * to create, change or delete them, see deploy/nats). Without it, a missing durable is waited
   * for (retried, one log line) and nothing is ever created, updated or deleted.
   */
  declare?: boolean;
}

export interface NatsBus extends Bus {
  readonly kind: 'nats';
  readonly connection: NatsConnection;
  readonly names: NatsNames;
}

/** Server URLs in logs lose any user:password@. */
const withoutUserInfo = (url: string) => url.replace(/\/\/[^@/]*@/, '//');

export function natsConnectionOptions(opts: NatsBusOptions): ConnectionOptions {
  const options: ConnectionOptions = {
    servers: opts.servers
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    name: opts.name ?? 'mcp-fleet',
    // Reconnect forever: an agent or control outlives any NATS restart.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
    pingInterval: 10_000,
  };
  if (opts.user !== undefined) options.user = opts.user;
  // Replies (JetStream acks, pulled messages, API answers) come to inboxes under the user's own
  // prefix, so a NATS user may subscribe to its own replies only (`_INBOX.<user>.>` in deploy/nats)
  // and never to another user's: jobs carry credentials to the agents of each region.
  if (opts.user !== undefined && /^[A-Za-z0-9_-]+$/.test(opts.user)) options.inboxPrefix = `_INBOX.${opts.user}`;
  if (opts.pass !== undefined) options.pass = opts.pass;
  if (opts.token !== undefined) options.token = opts.token;
  if (opts.credsFile) {
    const file = opts.credsFile;
    options.authenticator = credsAuthenticator(() => readFileSync(file));
  }
  if (opts.tls && (opts.tls.caFile || opts.tls.certFile || opts.tls.keyFile)) {
    options.tls = { ...opts.tls };
  }
  return options;
}

export async function connectNatsBus(opts: NatsBusOptions): Promise<NatsBus> {
  const log = opts.log ?? createLogger('bus');
  const names = natsNames(opts.namespace ?? BUS_DEFAULTS.namespace);
  const durable = {
    ackWaitMs: opts.ackWaitMs ?? BUS_DEFAULTS.ackWaitMs,
    maxDeliver: opts.maxDeliver ?? BUS_DEFAULTS.maxDeliver,
  };
  // The durables are shared by every process: ensure() and consumers impose this process's ack
  // wait and max deliveries only when they were chosen, so a default never overrides a choice.
  const settingsChosen = opts.ackWaitMs !== undefined || opts.maxDeliver !== undefined;
  const duplicateWindowMs = opts.duplicateWindowMs ?? BUS_DEFAULTS.duplicateWindowMs;
  const limits = jobLimits(opts);
  const stats = emptyStats();
  const ctx: Context = { log, stats, nakBackoffMs: opts.nakBackoffMs ?? BUS_DEFAULTS.nakBackoffMs };
  const declares = opts.declare ?? true;

  const nc = await connect(natsConnectionOptions(opts));
  const js = jetstream(nc);
  const jsm: JetStreamManager = await jetstreamManager(nc);

  const subscriptions = new Set<Subscription>();
  const advisories = new Map<string, NatsSubscription>();
  const regions = new Set<string>();
  let closed = false;

  // Declarations are cached as promises (a failure clears its entry, so the next call retries).
  const declared = new Map<string, Promise<void>>();
  function once(key: string, declare: () => Promise<void>): Promise<void> {
    let ready = declared.get(key);
    if (!ready) {
      ready = declare();
      declared.set(key, ready);
      ready.catch(() => {
        if (declared.get(key) === ready) declared.delete(key);
      });
    }
    return ready;
  }
  const streams = () =>
    once('streams', async () => {
      // Stale jobs do not pile up: a max age and a cap per region (per subject), the oldest discarded.
      await upsertStream(jsm, names.jobsStream, names.allJobs, limits.duplicateWindowMs, {
        maxAgeMs: limits.maxAgeMs,
        maxPerSubject: limits.maxPerRegion,
      });
      // Our results carry no message id, so the window never drops one of them (JetStream checks
      // only messages that carry one); it is kept as it was so an existing stream is left alone.
      await upsertStream(jsm, names.resultsStream, names.allResults, duplicateWindowMs);
    });
  const jobsDurable = (region: string, settings = durable, update = false) =>
    !declares
      ? Promise.resolve()
      : once(`jobs:${region}:${update ? `${settings.ackWaitMs}:${settings.maxDeliver}` : 'exists'}`, async () => {
          await streams();
          await upsertConsumer(jsm, names.jobsStream, names.jobsConsumer(region), names.jobs(region), settings, update);
        });
  // Results are never dropped after max deliveries: ingest naks only what the database could not
  // take (poison is terminated), so a result waits out a database outage of any length.
  const ingestDurable = (settings = durable, update = false) =>
    !declares
      ? Promise.resolve()
      : once(`ingest:${update ? `${settings.ackWaitMs}` : 'exists'}`, async () => {
          await streams();
          const unlimited = { ...settings, maxDeliver: -1, maxDeliverFixed: true };
          await upsertConsumer(jsm, names.resultsStream, names.ingestConsumer, undefined, unlimited, update);
        });
  const forget = () => declared.clear();
  // A declaration in flight when the connection drops is never answered: forget it, so callers
  // after the reconnect declare again instead of waiting for its timeout.
  const link = watchConnection(nc, log, forget);

  /**
   * Publish to a stream, with a message id for dedupe when given. "No responders" means the stream
   * is gone (deleted, or the server lost its store): declare it again and retry once (a message the
   * server never stored cannot be doubled by the retry).
   */
  function publish(subject: string, data: string, msgID: string | undefined, declare: () => Promise<void>) {
    const options = msgID === undefined ? undefined : { msgID };
    return whileConnected(link, async () => {
      await declare();
      try {
        return await js.publish(subject, data, options);
      } catch (err) {
        forget();
        if (!streamIsGone(err)) throw err;
        if (!declares) throw new Error(`no stream takes ${subject} yet: waiting for control to declare it`);
        await declare();
        return js.publish(subject, data, options);
      }
    });
  }

  /** The client names "no stream for this subject" differently by version and path: look at the cause too. */
  function streamIsGone(err: unknown): boolean {
    for (let e = err as { name?: string; message?: string; cause?: unknown } | undefined, i = 0; e && i < 3; i++) {
      if (e.name === 'JetStreamNotEnabled' || e.name === 'NoResponders' || /no responders/i.test(e.message ?? ''))
        return true;
      e = e.cause as typeof e;
    }
    return false;
  }

  function assertOpen() {
    if (closed) throw new Error('bus closed');
  }

  /**
   * A message that reached max deliveries stays in a work-queue stream forever (the server only
   * stops delivering it and sends an advisory): delete it, count it, log it. Peers race; the one
   * whose delete succeeds counts it.
   */
  function watchMaxDeliveries(stream: string, consumer: string) {
    // Deleting is control's (an agent's NATS user may not delete from a stream).
    if (!declares) return;
    const subject = `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${stream}.${consumer}`;
    if (advisories.has(subject)) return;
    const sub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        let advisory: { stream_seq?: unknown; deliveries?: unknown };
        try {
          advisory = msg.json();
        } catch {
          return;
        }
        const seq = advisory.stream_seq;
        if (typeof seq !== 'number') return;
        jsm.streams.deleteMessage(stream, seq, false).then(
          (deleted) => {
            if (!deleted) return;
            stats.dropped++;
            log.warn(
              { consumer, stream, seq, deliveries: advisory.deliveries },
              'message dropped after max deliveries',
            );
          },
          () => {},
        );
      },
    });
    advisories.set(subject, sub);
  }

  function track(sub: Subscription): Subscription {
    subscriptions.add(sub);
    return {
      stop: async () => {
        subscriptions.delete(sub);
        await sub.stop();
      },
    };
  }

  /** A consumer's settings, and whether they were chosen (only chosen settings update the shared durable). */
  function settingsFor(consume: ConsumeOptions) {
    const settings = { ...durable, ackWaitMs: consume.ackWaitMs ?? durable.ackWaitMs };
    return { settings, update: settingsChosen || consume.ackWaitMs !== undefined };
  }

  /**
   * The durable to pull from: declared first when this process declares, else looked up as
   * control declared it (a missing one is an error the pull loop logs once and retries).
   */
  const noticed = new Set<string>();
  async function durableConsumer(stream: string, consumer: string, ackWaitMs: number, chosen: boolean) {
    let found: Consumer;
    try {
      found = await js.consumers.get(stream, consumer);
    } catch (err) {
      if (declares || !isNotFound(err)) throw err;
      throw new Error(`durable ${consumer} on stream ${stream} does not exist yet: waiting for control to declare it`);
    }
    if (!declares && chosen && !noticed.has(consumer)) {
      const have = (await found.info(true)).config.ack_wait;
      if (have !== nanos(ackWaitMs)) {
        noticed.add(consumer);
        log.warn(
          { consumer, ackWaitMs: (have ?? 0) / 1e6, chosenAckWaitMs: ackWaitMs },
          "the durable's ack wait is control's to set; this process's is not applied",
        );
      }
    }
    return found;
  }

  const bus: NatsBus = {
    kind: 'nats',
    connection: nc,
    names,

    async ensure(list) {
      assertOpen();
      if (!declares) throw new Error('this bus only uses what control declares (declare: false)');
      for (const region of list) regions.add(assertRegion(region));
      // Jobs that reach max deliveries are deleted here too: agents may not delete them.
      for (const region of list) watchMaxDeliveries(names.jobsStream, names.jobsConsumer(region));
      await streams();
      await Promise.all([
        ...list.map((region) => jobsDurable(region, durable, settingsChosen)),
        ingestDurable(durable, settingsChosen),
      ]);
    },

    async publishJob(job) {
      assertOpen();
      const { value, data } = encodeMessage(JobSchema, job, 'job');
      regions.add(value.region);
      // A job waits in the work queue for its region's durable: make sure there is one.
      const ack = await publish(names.jobs(value.region), data, value.jobId, () => jobsDurable(value.region));
      if (ack.duplicate) stats.jobsDeduplicated++;
      else stats.jobsPublished++;
      return { duplicate: ack.duplicate };
    },

    consumeJobs(region, handler, opts) {
      assertOpen();
      assertRegion(region);
      regions.add(region);
      const consumer = names.jobsConsumer(region);
      const { settings, update } = settingsFor(opts);
      watchMaxDeliveries(names.jobsStream, consumer);
      return track(
        pull({
          consumer,
          // After an outage, pull again as soon as the connection is back (see whileConnected).
          open: () =>
            whileConnected(link, async (): Promise<Consumer> => {
              await jobsDurable(region, settings, update);
              return durableConsumer(names.jobsStream, consumer, settings.ackWaitMs, update);
            }),
          reset: forget,
          decode: (data) => decodeJob(region, data),
          handler,
          concurrency: opts.concurrency,
          ctx,
        }),
      );
    },

    async publishResult(result) {
      assertOpen();
      const { value, data } = encodeMessage(ResultSchema, result, 'result');
      // No Nats-Msg-Id: JetStream dedupes by message id across the whole results stream, and NATS
      // permissions bind an agent's subject, never its headers. With the job id as message id, an
      // agent of one region could publish first under another region's (predictable) job id and
      // have that region's real result dropped as a duplicate. Ingest writes one run per job id.
      await publish(names.results(value.region), data, undefined, () => ingestDurable());
      stats.resultsPublished++;
    },

    consumeResults(handler, opts) {
      assertOpen();
      const { settings, update } = settingsFor(opts);
      watchMaxDeliveries(names.resultsStream, names.ingestConsumer);
      return track(
        pull({
          consumer: names.ingestConsumer,
          open: () =>
            whileConnected(link, async () => {
              await ingestDurable(settings, update);
              return durableConsumer(names.resultsStream, names.ingestConsumer, settings.ackWaitMs, update);
            }),
          reset: forget,
          decode: decodeResult,
          handler,
          concurrency: opts.concurrency,
          ctx,
        }),
      );
    },

    async publishHeartbeat(heartbeat) {
      assertOpen();
      const { value, data } = encodeMessage(HeartbeatSchema, heartbeat, 'heartbeat');
      nc.publish(names.heartbeats(value.region), data);
    },

    onHeartbeat(handler) {
      assertOpen();
      const sub = nc.subscribe(names.allHeartbeats, {
        callback: (err, msg) => {
          if (err) return;
          const parsed = decodeHeartbeat(msg.data, msg.subject);
          if (!parsed.ok) {
            stats.poison++;
            log.warn({ consumer: 'heartbeats', subject: msg.subject, error: parsed.error }, 'poison heartbeat dropped');
            return;
          }
          try {
            handler(parsed.value);
          } catch (e) {
            log.warn({ error: e instanceof Error ? e.message : String(e) }, 'heartbeat handler failed');
          }
        },
      });
      return {
        stop: async () => {
          if (!sub.isClosed()) sub.unsubscribe();
        },
      };
    },

    async pending() {
      const waiting = async (stream: string, consumer: string) =>
        jsm.consumers.info(stream, consumer).then(
          (info) => info.num_pending,
          () => 0,
        );
      const jobs: Record<string, number> = {};
      await Promise.all(
        [...regions].map(async (region) => {
          jobs[region] = await waiting(names.jobsStream, names.jobsConsumer(region));
        }),
      );
      return { jobs, results: await waiting(names.resultsStream, names.ingestConsumer) };
    },

    stats: () => ({ ...stats }),

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((sub) => sub.stop()));
      subscriptions.clear();
      if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
    },
  };
  return bus;
}

/**
 * Whether the connection is up. The client discards what it buffered while disconnected when it
 * dials again, so a request sent while NATS is away (or in flight when it went) is never answered:
 * left alone it would fail only at its timeout (5 s), long after the client is back, and hold up
 * its caller (the scheduler's tick) all that time.
 */
interface Link {
  up: boolean;
  /** Called when the connection drops (or closes). */
  readonly dropped: Set<() => void>;
  /** Called when it is back. */
  readonly restored: Set<() => void>;
}

/** How long a publish waits for a lost connection to come back before it fails (the client's request timeout). */
const RECONNECT_WAIT_MS = 5_000;

/**
 * Run a request on a live connection: wait (at most RECONNECT_WAIT_MS) for a lost one to come back
 * first, and fail at once if the connection drops before the answer, so the caller can retry (a job's
 * message id makes a retry safe; a result published twice is one run, by ingest's unique job id).
 */
async function whileConnected<T>(link: Link, request: () => Promise<T>): Promise<T> {
  if (!link.up) {
    await new Promise<void>((resolve, reject) => {
      const back = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        link.restored.delete(back);
        reject(new Error('NATS is disconnected; reconnecting'));
      }, RECONNECT_WAIT_MS);
      timer.unref?.();
      link.restored.add(back);
    });
  }
  return new Promise<T>((resolve, reject) => {
    const drop = () => reject(new Error('NATS disconnected before the request was answered'));
    link.dropped.add(drop);
    request()
      .then(resolve, reject)
      .finally(() => link.dropped.delete(drop));
  });
}

/** Track the connection; one log line per change, never the credentials in a server URL. */
function watchConnection(nc: NatsConnection, log: Logger, onDrop: () => void): Link {
  const link: Link = { up: true, dropped: new Set(), restored: new Set() };
  const notify = (listeners: Set<() => void>) => {
    for (const listener of [...listeners]) {
      listeners.delete(listener);
      listener();
    }
  };
  void (async () => {
    for await (const status of nc.status()) {
      const server =
        'server' in status && typeof status.server === 'string' ? withoutUserInfo(status.server) : undefined;
      if (status.type === 'disconnect' || status.type === 'close') {
        link.up = false;
        onDrop();
        notify(link.dropped);
        if (status.type === 'disconnect') log.warn({ server }, 'NATS disconnected; reconnecting');
      } else if (status.type === 'reconnect') {
        link.up = true;
        notify(link.restored);
        log.info({ server }, 'NATS reconnected');
      } else if (status.type === 'error') log.warn({ error: String(status.error) }, 'NATS error');
    }
  })();
  return link;
}
