// An agent's results travel to ingest in batches: the results of one region that finish within a
// few milliseconds of each other share one NATS message (a JSON array), so a result costs the
// agent, NATS and ingest a share of one publish, one stored message, one delivery and one ack
// instead of each. At 1,000 jobs/s these were two of the five messages a job cost (README,
// performance). Each caller's promise settles with its batch's publish: the agent acks its job
// only once the result is stored, as before. A result alone in its batch is sent as it always was
// (one object), so a control of an older version reads what a quiet agent sends.

/**
 * maxResults bounds what one message may carry (ingest refuses more: delivery.ts); maxChars
 * bounds a batch's JSON in UTF-16 units, at most three UTF-8 bytes each, so a batch stays under
 * NATS's 1 MiB max_payload (a result that alone is over it is sent alone: every valid result fits,
 * bounds.test.ts). lingerMs is the most a result waits for company: freshness is judged in seconds.
 */
export const RESULT_BATCH = { maxResults: 64, maxChars: 256 * 1024, lingerMs: 20 } as const;

export type ResultBatchOptions = { [K in keyof typeof RESULT_BATCH]: number };

interface Waiting {
  data: string;
  resolve(): void;
  reject(err: unknown): void;
}

interface Open {
  items: Waiting[];
  chars: number;
  timer: ReturnType<typeof setTimeout>;
}

export class ResultBatches {
  /** The batch filling up for each region (a region's results have a subject of their own). */
  private readonly open = new Map<string, Open>();

  constructor(
    /** Publish one message's body on the region's results subject; resolves once it is stored. */
    private readonly send: (region: string, body: string) => Promise<void>,
    private readonly opts: ResultBatchOptions = RESULT_BATCH,
  ) {}

  /** Queue one result's JSON; resolves when the message carrying it is stored. */
  add(region: string, data: string): Promise<void> {
    if (data.length >= this.opts.maxChars) return this.send(region, data);
    let batch = this.open.get(region);
    if (batch && batch.chars + data.length + 1 > this.opts.maxChars) {
      this.flush(region);
      batch = undefined;
    }
    if (!batch) {
      batch = { items: [], chars: 2, timer: setTimeout(() => this.flush(region), this.opts.lingerMs) };
      this.open.set(region, batch);
    }
    const open = batch;
    const done = new Promise<void>((resolve, reject) => open.items.push({ data, resolve, reject }));
    open.chars += data.length + 1;
    if (open.items.length >= this.opts.maxResults) this.flush(region);
    return done;
  }

  /** Send every batch still filling (before the connection is drained). */
  flushAll(): void {
    for (const region of [...this.open.keys()]) this.flush(region);
  }

  private flush(region: string): void {
    const batch = this.open.get(region);
    if (!batch) return;
    this.open.delete(region);
    clearTimeout(batch.timer);
    const { items } = batch;
    const body = items.length === 1 ? items[0]!.data : `[${items.map((item) => item.data).join(',')}]`;
    this.send(region, body).then(
      () => {
        for (const item of items) item.resolve();
      },
      (err: unknown) => {
        for (const item of items) item.reject(err);
      },
    );
  }
}
