// The bus on NATS JetStream: jobs and results on work-queue streams (jobs deduplicated by
// Nats-Msg-Id = job id; results carry none, see nats-publish.ts), durable pull consumers shared by
// the agents of a region, heartbeats on core NATS. This file puts the parts together:
// nats-connect (dialing), nats-link (is the connection up), nats-declare (streams and durables,
// once), nats-publish, result-batches (an agent's results, several to a message), nats-consumers
// (pulling, via nats-pull), nats-max-deliveries (dropping what reached max deliveries),
// nats-heartbeats.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Bus } from './bus';
import { newContext } from './delivery';
import { assertRegion, encodeMessage, JobSchema, ResultSchema } from './messages';
import { type NatsConnectOptions, natsConnectionOptions } from './nats-connect';
import { NatsConsumers, pendingMessages } from './nats-consumers';
import { declarePlan, NatsDeclarations } from './nats-declare';
import { listenForHeartbeats, publishHeartbeat } from './nats-heartbeats';
import { watchConnection } from './nats-link';
import { MaxDeliveriesWatch } from './nats-max-deliveries';
import { NatsPublisher } from './nats-publish';
import { type NatsNames, natsNames } from './nats-streams';
import { BUS_DEFAULTS, type QueueOptions } from './options';
import { ResultBatches } from './result-batches';

export interface NatsBusOptions extends QueueOptions, NatsConnectOptions {
  /** First token of every subject, and (upper-cased) the stream names' prefix. Default `mcpfleet`. */
  namespace?: string;
  /**
   * Whether this process declares the streams and durable consumers (control, and one-process
   * setups: the default), or only uses what control declared (an agent: its NATS user has no right
   * to create, change or delete them, see deploy/nats). Without it, a missing durable is waited
   * for (retried, one log line) and nothing is ever created, updated or deleted.
   */
  declare?: boolean;
  /**
   * Copies of each stream a JetStream cluster keeps (1–5, at most its nodes: MCP_FLEET_NATS_REPLICAS).
   * Unset: streams are created as the server makes them and an existing one's count is left alone;
   * set: an existing stream with another count is changed to it (and the change logged).
   */
  replicas?: number;
}

export interface NatsBus extends Bus {
  readonly kind: 'nats';
  readonly connection: NatsConnection;
  readonly names: NatsNames;
}

export async function connectNatsBus(opts: NatsBusOptions): Promise<NatsBus> {
  const ctx = newContext(opts);
  const { stats } = ctx;
  const names = natsNames(opts.namespace ?? BUS_DEFAULTS.namespace);
  // Options are checked before connecting: a bad one leaves no connection behind.
  const plan = declarePlan(opts);

  const nc = await connect(natsConnectionOptions(opts));
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const declarations = new NatsDeclarations(jsm, names, plan, ctx.log);
  // A declaration in flight when the connection drops is never answered: forget it, so callers
  // after the reconnect declare again instead of waiting for its timeout.
  const link = watchConnection(nc, ctx.log, () => declarations.forget());
  const maxDeliveries = new MaxDeliveriesWatch(nc, jsm, plan.declares, ctx);
  const publisher = new NatsPublisher(js, link, names, declarations);
  const results = new ResultBatches((region, body) => publisher.results(region, body));
  const consumers = new NatsConsumers(js, link, names, declarations, maxDeliveries, ctx);
  /** Regions whose jobs this process has seen, for pending(). */
  const regions = new Set<string>();
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new Error('bus closed');
  };

  return {
    kind: 'nats',
    connection: nc,
    names,

    async ensure(list) {
      assertOpen();
      if (!plan.declares) throw new Error('this bus only uses what control declares (declare: false)');
      for (const region of list) regions.add(assertRegion(region));
      // Jobs that reach max deliveries are deleted here too: agents may not delete them.
      for (const region of list) maxDeliveries.watch(names.jobsStream, names.jobsConsumer(region));
      await declarations.all(list);
    },

    async publishJob(job) {
      assertOpen();
      const { value, data } = encodeMessage(JobSchema, job, 'job');
      regions.add(value.region);
      const ack = await publisher.job(value, data);
      if (ack.duplicate) stats.jobsDeduplicated++;
      else stats.jobsPublished++;
      return { duplicate: ack.duplicate };
    },

    consumeJobs(region, handler, opts) {
      assertOpen();
      assertRegion(region);
      regions.add(region);
      return consumers.jobs(region, handler, opts);
    },

    async publishResult(result) {
      assertOpen();
      const { value, data } = encodeMessage(ResultSchema, result, 'result');
      await results.add(value.region, data);
      stats.resultsPublished++;
    },

    consumeResults(handler, opts) {
      assertOpen();
      return consumers.results(handler, opts);
    },

    async publishHeartbeat(heartbeat) {
      assertOpen();
      publishHeartbeat(nc, names, heartbeat);
    },

    onHeartbeat(handler) {
      assertOpen();
      return listenForHeartbeats(nc, names, handler, ctx);
    },

    pending: () => pendingMessages(jsm, names, regions),

    stats: () => ({ ...stats }),

    async close() {
      if (closed) return;
      closed = true;
      await consumers.stopAll();
      // Results of handlers that just settled may still be waiting for company.
      results.flushAll();
      if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
    },
  };
}
