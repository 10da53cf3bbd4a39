// Publishing jobs and results to their streams: on a live connection (nats-link.ts), the stream
// and the durable that will take the message declared first. "No responders" means the stream is
// gone (deleted, or the server lost its store): declare it again and retry once (a message the
// server never stored cannot be doubled by the retry).
import type { JetStreamClient, PubAck } from '@nats-io/jetstream';
import type { Job } from './messages';
import type { NatsDeclarations } from './nats-declare';
import { type Link, whileConnected } from './nats-link';
import type { NatsNames } from './nats-streams';

export class NatsPublisher {
  constructor(
    private readonly js: JetStreamClient,
    private readonly link: Link,
    private readonly names: NatsNames,
    private readonly declarations: NatsDeclarations,
  ) {}

  /** A job, with its id as message id: the stream drops a second within the dedupe window. */
  job(job: Job, data: string): Promise<PubAck> {
    // A job waits in the work queue for its region's durable: make sure there is one.
    return this.publish(this.names.jobs(job.region), data, job.jobId, () => this.declarations.jobsDurable(job.region));
  }

  /**
   * A message of results (one, or a batch: result-batches.ts), without a Nats-Msg-Id: JetStream dedupes by message id across the whole results
   * stream, and NATS permissions bind an agent's subject, never its headers. With the job id as
   * message id, an agent of one region could publish first under another region's (predictable)
   * job id and have that region's real result dropped as a duplicate. Ingest writes one run per job id.
   */
  async results(region: string, body: string): Promise<void> {
    await this.publish(this.names.results(region), body, undefined, () => this.declarations.ingestDurable());
  }

  private publish(subject: string, data: string, msgID: string | undefined, declare: () => Promise<void>) {
    const options = msgID === undefined ? undefined : { msgID };
    return whileConnected(this.link, async () => {
      await declare();
      try {
        return await this.js.publish(subject, data, options);
      } catch (err) {
        this.declarations.forget();
        if (!streamIsGone(err)) throw err;
        if (!this.declarations.plan.declares) {
          throw new Error(`no stream takes ${subject} yet: waiting for control to declare it`);
        }
        await declare();
        return this.js.publish(subject, data, options);
      }
    });
  }
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
