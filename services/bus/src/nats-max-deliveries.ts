// A message that reached max deliveries stays in a work-queue stream forever (the server only
// stops delivering it and sends an advisory): delete it, count it, log it. Peers race; the one
// whose delete succeeds counts it. Deleting is control's (an agent's NATS user may not delete from
// a stream), so a process that does not declare watches nothing.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { Msg, NatsConnection, Subscription as NatsSubscription } from '@nats-io/transport-node';
import { type Context, countDropped } from './delivery';

export class MaxDeliveriesWatch {
  /** One advisory subscription per stream and consumer. */
  private readonly advisories = new Map<string, NatsSubscription>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly declares: boolean,
    private readonly ctx: Context,
  ) {}

  watch(stream: string, consumer: string): void {
    if (!this.declares) return;
    const subject = `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${stream}.${consumer}`;
    if (this.advisories.has(subject)) return;
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (!err) this.drop(stream, consumer, msg);
      },
    });
    this.advisories.set(subject, sub);
  }

  private drop(stream: string, consumer: string, msg: Msg): void {
    let advisory: { stream_seq?: unknown; deliveries?: unknown };
    try {
      advisory = msg.json();
    } catch {
      return;
    }
    const seq = advisory.stream_seq;
    if (typeof seq !== 'number') return;
    this.jsm.streams.deleteMessage(stream, seq, false).then(
      (deleted) => {
        if (deleted) countDropped({ consumer, stream, seq, deliveries: advisory.deliveries }, this.ctx);
      },
      () => {},
    );
  }
}
