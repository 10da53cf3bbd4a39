// What one in-process queue holds, as a JetStream work-queue stream would: messages stored
// serialized, as on the wire, in the order they wait to be delivered; for jobs, the stream's limits
// (a max age, a cap that discards the oldest).

export interface Message {
  seq: number;
  subject: string;
  data: string | Uint8Array;
  /** When it was published (Date.now()): a job older than the max age is gone. */
  at: number;
  deliveries: number;
  /** The delivery that may still nak or extend it; null while it waits in the queue. */
  current: symbol | null;
  done: boolean;
}

export interface StoreLimits {
  maxAgeMs: number;
  maxMessages: number;
}

export class MessageStore {
  /** Waiting to be delivered, next first; a message removed meanwhile stays here until it is skipped. */
  private readonly ready: Message[] = [];
  /** With limits: what the stream holds (waiting or in flight, oldest first), against them. */
  private readonly stored = new Set<Message>();

  constructor(private readonly limits?: StoreLimits) {}

  /** A message just published: last in line. */
  add(message: Message): void {
    this.ready.push(message);
    if (!this.limits) return;
    this.stored.add(message);
    // Past the cap, the oldest job goes, waiting or in flight (NATS: discard old per subject).
    for (const oldest of this.stored) {
      if (this.stored.size <= this.limits.maxMessages) break;
      this.remove(oldest);
    }
  }

  /** A message redelivered: first in line, as NATS redelivers. */
  putBack(message: Message): void {
    this.ready.unshift(message);
  }

  get hasReady(): boolean {
    return this.ready.length > 0;
  }

  /** The next in line (possibly removed already: the caller skips it). */
  next(): Message | undefined {
    return this.ready.shift();
  }

  /** Out of the stream: acked, terminated, dropped, discarded or expired. */
  remove(message: Message): void {
    message.done = true;
    this.stored.delete(message);
  }

  /** Jobs past the max age leave the stream (oldest first, so the scan stops at the first young one). */
  expire(now = Date.now()): void {
    if (!this.limits) return;
    for (const message of this.stored) {
      if (now - message.at <= this.limits.maxAgeMs) break;
      this.remove(message);
    }
  }

  /** Messages never delivered yet (NATS's num_pending). */
  waiting(): number {
    this.expire();
    return this.ready.filter((m) => m.deliveries === 0 && !m.done).length;
  }
}
