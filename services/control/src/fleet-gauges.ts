// Control's fleet-wide gauges kept up to date as results arrive, not read per scrape. Each live
// server's lines in each family (fleet-families.ts) are kept as rendered text; a run that moved
// something (ingest's onMoved: a state made or moved, a move, a disagreement, a conformance run)
// has only its server read again and its lines rendered again, and a scrape writes the families'
// text as assembled from the servers' lines, assembled again only for a family whose lines
// changed. At 60,000 servers and 1,000 runs/s, reading and rendering the whole fleet when anything
// moved took control's loop seconds per scrape and made ingest's commits late (bench:pipeline).
//
// The whole fleet is read (a slice of ids at a time, the event loop turning between slices) when
// the fleet changed (this control's API, an apply, another control's notice), and every
// `maxAgeMs`: what another control ingested is seen then, and that whole read finds only the lines
// that differ (a family's text is assembled again only if one does). Reads are spaced at least ten
// times their own duration apart (and `minGapMs`), so reading costs at most a tenth of a core
// however much the fleet churns. A scrape starts a read itself only when one is waiting and reads
// of its kind are cheap (under CHEAP_READ_MS: a small fleet, where the gauges are then exactly as
// fresh as the store; it waits for that read CHEAP_WAIT_MS at most), or for the very first.
import { familyHead, seriesLines } from './fleet-exposition';
import { FLEET_FAMILIES, type FleetFamily, type ServerGauges } from './fleet-families';
import type { FleetGaugeReads } from './fleet-gauge-reads';

/** A read this quick is done at a scrape that finds one waiting. */
const CHEAP_READ_MS = 200;
/** How long a scrape waits for the read it started because reads were cheap. */
export const CHEAP_WAIT_MS = 2_000;
/** Servers per query of a read. */
export const READ_SLICE = 1_000;

export interface FleetGaugesOptions {
  /** Least time between two reads (besides ten times a read's duration). Default 250 ms. */
  minGapMs?: number;
  /** Read the whole fleet again after this long. Default 60 s. 0: at every scrape (tests that write the database behind control's back). */
  maxAgeMs?: number;
}

type Read = 'whole' | 'some';

interface Kept {
  gauges: ServerGauges;
  /** Its lines in each family (FLEET_FAMILIES' order), '' for none. */
  lines: string[];
}

export class FleetGauges {
  private readonly kept = new Map<string, Kept>();
  /** Live names → id: a name is one live server's (the store's unique index), so a second id holding one is stale. */
  private readonly ids = new Map<string, string>();
  /** Servers with an open disagreement: their clock families' lines are rendered at each scrape. */
  private readonly open = new Set<string>();
  private readonly versions = FLEET_FAMILIES.map(() => 0);
  private readonly texts: ({ version: number; bytes: Buffer } | undefined)[] = FLEET_FAMILIES.map(() => undefined);
  private pending = new Set<string>();
  private wholePending = true;
  private readOnce = false;
  private reading: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private wholeAt = 0;
  private lastEndAt = 0;
  private lastWholeMs = 0;
  private lastSomeMs = 0;
  private readonly minGapMs: number;
  private readonly maxAgeMs: number;
  /** Reads done: of the whole fleet, of some servers, and the servers those read (for tests and the bench). */
  readonly reads = { whole: 0, some: 0, servers: 0 };

  constructor(
    private readonly source: FleetGaugeReads,
    opts: FleetGaugesOptions = {},
    private readonly onError: (err: Error) => void = () => {},
  ) {
    this.minGapMs = opts.minGapMs ?? 250;
    this.maxAgeMs = opts.maxAgeMs ?? 60_000;
  }

  /** A run moved something of these servers: read them again once the gap allows. */
  moved(serverIds: Iterable<string>): void {
    for (const id of serverIds) this.pending.add(id);
    this.schedule();
  }

  /** The fleet changed (servers, tests, regions, judgements): read it whole again once the gap allows. */
  changed(): void {
    this.wholePending = true;
    this.schedule();
  }

  /** What a scrape writes: each family's text (its HELP, TYPE and lines). */
  async bytes(): Promise<Buffer[]> {
    if (this.maxAgeMs === 0 || Date.now() - this.wholeAt >= this.maxAgeMs) this.wholePending = true;
    if (!this.readOnce || this.maxAgeMs === 0) {
      // One under way may have begun before the change: this scrape's read follows it.
      await this.reading;
      this.startRead('whole');
      await this.reading;
      if (!this.readOnce) throw new Error('gauges: the store could not be read');
    } else {
      const kind = this.cheapWaiting();
      if (kind) {
        // Cheap so far; but the fleet may have grown behind this control's back (another control's
        // API, a bulk load), so the scrape waits a bounded while and then serves what was read.
        await within(this.reading, CHEAP_WAIT_MS);
        this.startRead(kind);
        await within(this.reading, CHEAP_WAIT_MS);
      } else this.schedule();
    }
    const now = Date.now();
    return FLEET_FAMILIES.map((family, k) => this.familyText(family, k, now));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private familyText(family: FleetFamily, k: number, now: number): Buffer {
    const ticking = family.clock && this.open.size > 0;
    const kept = this.texts[k];
    if (kept && kept.version === this.versions[k] && !ticking) return kept.bytes;
    const parts = [familyHead(family.name, family.help)];
    for (const [id, s] of this.kept) {
      const lines = ticking && this.open.has(id) ? seriesLines(family.name, family.series(s.gauges, now)) : s.lines[k];
      if (lines) parts.push(lines);
    }
    const bytes = Buffer.from(`${parts.join('\n')}\n`);
    if (!ticking) this.texts[k] = { version: this.versions[k] as number, bytes };
    return bytes;
  }

  /** A read that is waiting and whose kind has been cheap, if any: a scrape does it itself. */
  private cheapWaiting(): Read | undefined {
    if (this.wholePending && this.lastWholeMs < CHEAP_READ_MS) return 'whole';
    if (this.pending.size > 0 && this.lastSomeMs < CHEAP_READ_MS) return 'some';
    return undefined;
  }

  /** When each waiting kind of read may start: ten times its last duration (and minGapMs) after the last read ended. */
  private due(): { kind: Read; at: number } | undefined {
    const at = (ms: number) => this.lastEndAt + Math.max(this.minGapMs, 10 * ms);
    const whole = this.wholePending ? at(this.lastWholeMs) : Number.POSITIVE_INFINITY;
    const some = this.pending.size > 0 ? at(this.lastSomeMs) : Number.POSITIVE_INFINITY;
    if (whole === Number.POSITIVE_INFINITY && some === Number.POSITIVE_INFINITY) return undefined;
    return whole <= some ? { kind: 'whole', at: whole } : { kind: 'some', at: some };
  }

  private schedule(): void {
    if (this.stopped || this.timer || this.reading) return;
    const next = this.due();
    if (!next) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.startRead(next.kind);
      },
      Math.max(0, next.at - Date.now()),
    );
    this.timer.unref();
  }

  /** A whole read also reads the servers waiting for one; a read of some leaves a whole one waiting. */
  private startRead(kind: Read): void {
    if (this.reading || this.stopped) return;
    if (kind === 'whole' ? !this.wholePending : this.pending.size === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    // What is asked from here on is read next time: a read may not see a write that committed after it began.
    const whole = kind === 'whole';
    const ids = this.pending;
    if (whole) this.wholePending = false;
    this.pending = new Set();
    const began = performance.now();
    this.reading = (whole ? this.readWhole() : this.readSome([...ids]))
      .catch((err: Error) => {
        // Kept as they were; read again at the next gap.
        if (whole) this.wholePending = true;
        for (const id of ids) this.pending.add(id);
        // Stopping closes the store under a read: nothing to say then.
        if (!this.stopped) this.onError(err);
      })
      .finally(() => {
        const ms = performance.now() - began;
        if (whole) this.lastWholeMs = ms;
        else this.lastSomeMs = ms;
        this.lastEndAt = Date.now();
        this.reading = undefined;
        this.schedule();
      });
  }

  private async readWhole(): Promise<void> {
    this.reads.whole++;
    const live = await this.source.liveServerIds();
    await this.readIds(live);
    const alive = new Set(live);
    for (const id of [...this.kept.keys()]) if (!alive.has(id)) this.drop(id);
    this.wholeAt = Date.now();
    this.readOnce = true;
  }

  private async readSome(ids: readonly string[]): Promise<void> {
    this.reads.some++;
    await this.readIds(ids);
  }

  private async readIds(ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += READ_SLICE) {
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const slice = ids.slice(i, i + READ_SLICE);
      const found = await this.source.servers(slice);
      this.reads.servers += slice.length;
      const seen = new Set<string>();
      for (const s of found) {
        seen.add(s.id);
        this.keep(s);
      }
      for (const id of slice) if (!seen.has(id)) this.drop(id);
    }
  }

  private keep(s: ServerGauges): void {
    // A name another id holds: that one was renamed or retired since it was read.
    const other = this.ids.get(s.name);
    if (other !== undefined && other !== s.id) {
      this.drop(other);
      this.pending.add(other);
    }
    const was = this.kept.get(s.id);
    if (was && was.gauges.name !== s.name && this.ids.get(was.gauges.name) === s.id) this.ids.delete(was.gauges.name);
    this.ids.set(s.name, s.id);
    const lines = FLEET_FAMILIES.map((f) => seriesLines(f.name, f.series(s, Date.now())));
    lines.forEach((text, k) => {
      if (text !== (was?.lines[k] ?? '')) this.versions[k]!++;
    });
    this.kept.set(s.id, { gauges: s, lines });
    if (s.disagreement?.openSince != null) this.open.add(s.id);
    else this.open.delete(s.id);
  }

  private drop(id: string): void {
    const was = this.kept.get(id);
    if (!was) return;
    this.kept.delete(id);
    this.open.delete(id);
    if (this.ids.get(was.gauges.name) === id) this.ids.delete(was.gauges.name);
    was.lines.forEach((text, k) => {
      if (text) this.versions[k]!++;
    });
  }
}

/** Wait for `promise` (which never rejects), but no longer than `ms`. */
async function within(promise: Promise<void> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
