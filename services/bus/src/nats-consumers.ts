// The subscriptions that pull from the durables (a region's jobs, ingest's results): each
// declares its durable when this process declares, opens it on a live connection, has messages
// that reach max deliveries watched, and is kept until close() stops it. A process that does not
// declare looks its durable up as control declared it, and says once when the ack wait it chose
// is not the durable's.
import type { Consumer, JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { ConsumeOptions, Handler, Subscription } from './bus';
import { type Context, type Decoded, decodeJob, decodeResults } from './delivery';
import type { Job, Result } from './messages';
import type { DurableChoice, NatsDeclarations } from './nats-declare';
import { type Link, whileConnected } from './nats-link';
import type { MaxDeliveriesWatch } from './nats-max-deliveries';
import { pull } from './nats-pull';
import { isNotFound, type NatsNames } from './nats-streams';

export class NatsConsumers {
  private readonly subscriptions = new Set<Subscription>();
  /** Durables whose ack wait this process was told it cannot set (logged once each). */
  private readonly noticed = new Set<string>();

  constructor(
    private readonly js: JetStreamClient,
    private readonly link: Link,
    private readonly names: NatsNames,
    private readonly declarations: NatsDeclarations,
    private readonly maxDeliveries: MaxDeliveriesWatch,
    private readonly ctx: Context,
  ) {}

  /** Pull this region's jobs from the durable every agent of the region shares. */
  jobs(region: string, handler: Handler<Job>, opts: ConsumeOptions): Subscription {
    const { names } = this;
    return this.consume(names.jobsStream, names.jobsConsumer(region), opts, handler, {
      declare: (choice) => this.declarations.jobsDurable(region, choice.settings, choice.update),
      decode: (data) => [decodeJob(region, data)],
    });
  }

  /** Pull every region's results from ingest's durable. */
  results(handler: Handler<Result>, opts: ConsumeOptions): Subscription {
    const { names } = this;
    return this.consume(names.resultsStream, names.ingestConsumer, opts, handler, {
      declare: (choice) => this.declarations.ingestDurable(choice.settings, choice.update),
      decode: decodeResults,
    });
  }

  /** Stop every subscription still pulling; resolves when their handlers in flight have settled. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.subscriptions].map((sub) => sub.stop()));
    this.subscriptions.clear();
  }

  private consume<T>(
    stream: string,
    consumer: string,
    opts: ConsumeOptions,
    handler: Handler<T>,
    durable: {
      declare(choice: DurableChoice): Promise<void>;
      decode(data: Uint8Array, subject: string): Decoded<T>[];
    },
  ): Subscription {
    const choice = this.declarations.settingsFor(opts);
    this.maxDeliveries.watch(stream, consumer);
    return this.track(
      pull({
        consumer,
        // After an outage, pull again as soon as the connection is back (see whileConnected).
        open: () =>
          whileConnected(this.link, async () => {
            await durable.declare(choice);
            return this.durable(stream, consumer, choice);
          }),
        reset: () => this.declarations.forget(),
        decode: durable.decode,
        handler,
        concurrency: opts.concurrency,
        ctx: this.ctx,
      }),
    );
  }

  /**
   * The durable to pull from: declared first when this process declares, else looked up as
   * control declared it (a missing one is an error the pull loop logs once and retries).
   */
  private async durable(stream: string, consumer: string, { settings, update: chosen }: DurableChoice) {
    const { declares } = this.declarations.plan;
    let found: Consumer;
    try {
      found = await this.js.consumers.get(stream, consumer);
    } catch (err) {
      if (declares || !isNotFound(err)) throw err;
      throw new Error(`durable ${consumer} on stream ${stream} does not exist yet: waiting for control to declare it`);
    }
    if (!declares && chosen && !this.noticed.has(consumer)) {
      const have = (await found.info(true)).config.ack_wait;
      if (have !== nanos(settings.ackWaitMs)) {
        this.noticed.add(consumer);
        this.ctx.log.warn(
          { consumer, ackWaitMs: (have ?? 0) / 1e6, chosenAckWaitMs: settings.ackWaitMs },
          "the durable's ack wait is control's to set; this process's is not applied",
        );
      }
    }
    return found;
  }

  private track(sub: Subscription): Subscription {
    this.subscriptions.add(sub);
    return {
      stop: async () => {
        this.subscriptions.delete(sub);
        await sub.stop();
      },
    };
  }
}

/** Messages never delivered yet, per region's jobs durable and for ingest's (0 where a durable is missing). */
export async function pendingMessages(
  jsm: JetStreamManager,
  names: NatsNames,
  regions: Iterable<string>,
): Promise<{ jobs: Record<string, number>; results: number }> {
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
}
