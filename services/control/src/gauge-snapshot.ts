// Control's state gauges (server revision, up, consensus, disagreement, conformance) read the
// whole fleet from the store: 1–3 s at 10,000 servers. Read per scrape, that cost grows with every
// Prometheus that scrapes and every replica it scrapes. So the gauges serve a snapshot, and the
// snapshot is read again only when something it shows may have changed: ingest wrote a run that
// moved a state (most runs of a steady fleet move nothing), the fleet changed (this control's API,
// an apply, another control's notice), or it is older than `maxAgeMs` (what ages on its own: a
// disagreement's duration is computed at scrape time, but agents go stale, retention prunes).
// Reads are spaced at least ten times their own duration apart (and `minGapMs`), so reading costs
// at most a tenth of a core however much the fleet churns: at 10,000 servers a 2 s read is done at
// most every 20 s. A scrape waits for a read under way; it starts one itself only when a change is
// waiting and the last read was cheap (under CHEAP_READ_MS: a small fleet, where it costs nothing
// and the gauges are then exactly as fresh as the store), or for the very first.

/** A read this quick is done at a scrape that finds a change waiting. */
const CHEAP_READ_MS = 50;

export interface GaugeSnapshotOptions {
  /** Least time between two reads (besides ten times a read's duration). Default 250 ms. */
  minGapMs?: number;
  /** Read again after this long even if nothing was said to change. Default 60 s. 0: every scrape reads (tests that write the database behind control's back). */
  maxAgeMs?: number;
}

export class GaugeSnapshot<T> {
  private value: T | undefined;
  private readAt = 0;
  private lastReadMs = 0;
  private dirty = true;
  private reading: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly minGapMs: number;
  private readonly maxAgeMs: number;
  private stopped = false;
  /** Reads done (for tests and the log). */
  reads = 0;

  constructor(
    private readonly read: () => Promise<T>,
    opts: GaugeSnapshotOptions = {},
    private readonly onError: (err: Error) => void = () => {},
  ) {
    this.minGapMs = opts.minGapMs ?? 250;
    this.maxAgeMs = opts.maxAgeMs ?? 60_000;
  }

  /** Something the snapshot shows may have changed: read again once the gap allows. */
  changed(): void {
    this.dirty = true;
    this.schedule();
  }

  /** What a scrape shows: the snapshot (waiting for a read under way, or the first). */
  async get(): Promise<T> {
    if (this.maxAgeMs === 0) return this.read();
    const now = Date.now();
    if (
      this.value === undefined ||
      now - this.readAt >= this.maxAgeMs ||
      (this.dirty && this.lastReadMs < CHEAP_READ_MS)
    )
      this.startRead();
    if (this.reading) await this.reading;
    if (this.value === undefined) throw new Error('gauges: the store could not be read');
    return this.value;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped || this.timer || this.reading) return;
    const gap = Math.max(this.minGapMs, 10 * this.lastReadMs);
    const wait = Math.max(0, this.readAt + gap - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.dirty) this.startRead();
    }, wait);
    this.timer.unref();
  }

  private startRead(): void {
    if (this.reading || this.stopped) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.dirty = false;
    this.reads++;
    const began = performance.now();
    this.reading = this.read()
      .then((value) => {
        this.value = value;
      })
      .catch((err: Error) => {
        // Kept as it was; read again at the next gap.
        this.dirty = true;
        this.onError(err);
      })
      .finally(() => {
        this.lastReadMs = performance.now() - began;
        this.readAt = Date.now();
        this.reading = undefined;
        if (this.dirty) this.schedule();
      });
  }
}
