// Declaring what the NATS bus needs, once per process: both streams, each region's jobs durable
// and ingest's. Each declaration is cached as a promise; a failure, or a dropped connection,
// forgets it so the next caller declares again. The durables are shared by every process, so this
// process imposes its ack wait and max deliveries only where they were chosen. A process that does
// not declare (an agent) skips all of it and uses what control declared.
import type { Logger } from '@mcp-fleet/log';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { ConsumeOptions } from './bus';
import { type DurableSettings, type NatsNames, upsertConsumer, upsertStream } from './nats-streams';
import { BUS_DEFAULTS, jobLimits, type QueueOptions } from './options';

/** What this process declares, and with which settings: read from its options before it connects. */
export interface DeclarePlan {
  declares: boolean;
  /** The durables' settings: this process's, or the defaults. */
  durable: DurableSettings;
  /** Whether the ack wait or max deliveries were chosen: only a choice updates a shared durable. */
  chosen: boolean;
  /** The results stream's dedupe window (the jobs stream's is in `limits`). */
  duplicateWindowMs: number;
  limits: ReturnType<typeof jobLimits>;
  /** Copies of each stream in a JetStream cluster; unset: as the server makes them, never changed. */
  replicas: number | undefined;
}

/** JetStream keeps at most 5 copies of a stream. */
const MAX_REPLICAS = 5;

export function declarePlan(opts: QueueOptions & { declare?: boolean; replicas?: number }): DeclarePlan {
  const { replicas } = opts;
  if (replicas !== undefined && (!Number.isInteger(replicas) || replicas < 1 || replicas > MAX_REPLICAS))
    throw new TypeError(`replicas: a whole number from 1 to ${MAX_REPLICAS}`);
  const durable = {
    ackWaitMs: opts.ackWaitMs ?? BUS_DEFAULTS.ackWaitMs,
    maxDeliver: opts.maxDeliver ?? BUS_DEFAULTS.maxDeliver,
  };
  return {
    declares: opts.declare ?? true,
    durable,
    chosen: opts.ackWaitMs !== undefined || opts.maxDeliver !== undefined,
    duplicateWindowMs: opts.duplicateWindowMs ?? BUS_DEFAULTS.duplicateWindowMs,
    limits: jobLimits(opts),
    replicas,
  };
}

/** A subscription's durable settings, and whether to impose them on the shared durable. */
export interface DurableChoice {
  settings: DurableSettings;
  update: boolean;
}

export class NatsDeclarations {
  private readonly declared = new Map<string, Promise<void>>();

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly names: NatsNames,
    readonly plan: DeclarePlan,
    private readonly log: Logger,
  ) {}

  /** Streams and durables for these regions, with this process's settings where chosen (ensure()). */
  async all(regions: readonly string[]): Promise<void> {
    const { durable, chosen } = this.plan;
    await this.streams();
    await Promise.all([
      ...regions.map((region) => this.jobsDurable(region, durable, chosen)),
      this.ingestDurable(durable, chosen),
    ]);
  }

  streams(): Promise<void> {
    const { jsm, names, plan, log } = this;
    const { replicas } = plan;
    return this.once('streams', async () => {
      // Stale jobs do not pile up: a max age and a cap per region (per subject), the oldest discarded.
      const limits = { maxAgeMs: plan.limits.maxAgeMs, maxPerSubject: plan.limits.maxPerRegion };
      const jobs = { name: names.jobsStream, subject: names.allJobs, limits, replicas };
      await upsertStream(jsm, { ...jobs, duplicateWindowMs: plan.limits.duplicateWindowMs }, log);
      // Our results carry no message id, so the window never drops one of them (JetStream checks
      // only messages that carry one); it is kept as it was so an existing stream is left alone.
      const results = { name: names.resultsStream, subject: names.allResults, replicas };
      await upsertStream(jsm, { ...results, duplicateWindowMs: plan.duplicateWindowMs }, log);
    });
  }

  jobsDurable(region: string, settings = this.plan.durable, update = false): Promise<void> {
    if (!this.plan.declares) return Promise.resolve();
    const key = `jobs:${region}:${update ? `${settings.ackWaitMs}:${settings.maxDeliver}` : 'exists'}`;
    return this.once(key, async () => {
      await this.streams();
      const { names } = this;
      await upsertConsumer(
        this.jsm,
        names.jobsStream,
        names.jobsConsumer(region),
        names.jobs(region),
        settings,
        update,
      );
    });
  }

  /**
   * Results are never dropped after max deliveries: ingest naks only what the database could not
   * take (poison is terminated), so a result waits out a database outage of any length.
   */
  ingestDurable(settings = this.plan.durable, update = false): Promise<void> {
    if (!this.plan.declares) return Promise.resolve();
    return this.once(`ingest:${update ? `${settings.ackWaitMs}` : 'exists'}`, async () => {
      await this.streams();
      const unlimited = { ...settings, maxDeliver: -1, maxDeliverFixed: true };
      await upsertConsumer(this.jsm, this.names.resultsStream, this.names.ingestConsumer, undefined, unlimited, update);
    });
  }

  /** A subscription's settings, and whether they were chosen (only chosen settings update the shared durable). */
  settingsFor(consume: ConsumeOptions): DurableChoice {
    const { durable, chosen } = this.plan;
    const settings = { ...durable, ackWaitMs: consume.ackWaitMs ?? durable.ackWaitMs };
    return { settings, update: chosen || consume.ackWaitMs !== undefined };
  }

  /** Declare everything again on next use (the stream is gone, or a declaration in flight was lost). */
  forget(): void {
    this.declared.clear();
  }

  private once(key: string, declare: () => Promise<void>): Promise<void> {
    let ready = this.declared.get(key);
    if (!ready) {
      ready = declare();
      this.declared.set(key, ready);
      ready.catch(() => {
        if (this.declared.get(key) === ready) this.declared.delete(key);
      });
    }
    return ready;
  }
}
