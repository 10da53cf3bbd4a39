// Group commit: the bus hands ingest one result at a time, the store writes best a batch at a time
// (store's recordRuns: one transaction, one commit for many runs). Each result joins the open batch
// and waits for its own answer; a batch is written as soon as a writer is free, or when it is full.
// While the writers are busy, results gather, so the batch grows with the load: one result at a
// time when quiet, full batches under pressure. Nothing is acked before its batch has committed
// (the caller acks after add() resolves).

/** One item's answer from a batch write: its own value, or its own error. */
export type Settled<O> = { ok: true; answer: O } | { ok: false; error: Error };

export interface GroupCommitOptions {
  /** Most items in one batch (one transaction). */
  maxBatch: number;
  /** Batches written at once (each holds a database connection). */
  writers: number;
  /** Told after each batch is written (for metrics). */
  onBatch?: (size: number) => void;
}

type Waiting<I, O> = { item: I; resolve: (answer: O) => void; reject: (error: Error) => void };

export class GroupCommit<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private writing = 0;
  private scheduled = false;

  constructor(
    private readonly write: (items: I[]) => Promise<Settled<O>[]>,
    private readonly opts: GroupCommitOptions,
  ) {
    if (!Number.isInteger(opts.maxBatch) || opts.maxBatch < 1) throw new TypeError('maxBatch is a whole number ≥ 1');
    if (!Number.isInteger(opts.writers) || opts.writers < 1) throw new TypeError('writers is a whole number ≥ 1');
  }

  /** Resolves with the item's answer once its batch has committed; rejects with its own error. */
  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.waiting.length >= this.opts.maxBatch) this.flush();
      else if (!this.scheduled) {
        // The rest of a fetched batch is dispatched in the same turn: let it join first.
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  /** Items waiting for a writer, and batches being written (for metrics). */
  get backlog(): { waiting: number; writing: number } {
    return { waiting: this.waiting.length, writing: this.writing };
  }

  private flush(): void {
    while (this.writing < this.opts.writers && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.opts.maxBatch);
      this.writing++;
      void this.writeBatch(batch).finally(() => {
        this.writing--;
        this.flush();
      });
    }
  }

  private async writeBatch(batch: Waiting<I, O>[]): Promise<void> {
    let answers: Settled<O>[];
    try {
      answers = await this.write(batch.map((w) => w.item));
      if (answers.length !== batch.length) throw new Error(`${answers.length} answers for ${batch.length} items`);
    } catch (err) {
      // The write itself failed (the database is away): every item gets the error, and its caller
      // leaves the result in the bus to be tried again.
      for (const w of batch) w.reject(err as Error);
      return;
    }
    this.opts.onBatch?.(batch.length);
    batch.forEach((w, k) => {
      const a = answers[k]!;
      if (a.ok) w.resolve(a.answer);
      else w.reject(a.error);
    });
  }
}
