// The scheduler publishes one job per (test, region, slot) and one detection per (server,
// region, slot) where asked. Policy after downtime: a slot is published only while it is fresh
// (within min(interval/2, 10 s) of its start); older slots are skipped, never burst to catch up.
// Every job says when it goes stale, so agents drop a backlog of old slots instead of probing it.
import type { Bus, Job } from '@mcp-fleet/bus';
import type { Revision } from '@mcp-fleet/probe';
import { detectionJobId, handshakeJobId, offsetFor, slotStart } from './slots';

export interface ScheduleEntry {
  kind: 'handshake' | 'detection';
  /** Test id (handshake) or server id (detection). */
  id: string;
  region: string;
  serverId: string;
  serverName: string;
  testId: string | null;
  url: string;
  /** A stdio server's command: its jobs carry it instead of `url` (issue 20). */
  command?: Job['command'] | null;
  headers: Record<string, string>;
  revision: 'newest' | Revision | null;
  /** Handshake jobs: how deep the test goes (a detection is a handshake-depth job). */
  depth: Job['depth'];
  /** Script-depth jobs: the test's steps; null for every other depth. */
  script: Job['script'];
  intervalMs: number;
  timeoutMs: number;
  /**
   * A newest-supported test's recheck window (its server's judgement.recheckMs): the first slot of
   * each window looks the revision up again. null for pinned tests and detections.
   */
  recheckMs: number | null;
}

interface Due {
  entry: ScheduleEntry;
  offset: number;
  next: number;
}

export interface SchedulerOptions {
  bus: Bus;
  /** The test's current revision in a region (jobs carry it: a move from it, or a pin once spoken). */
  currentRevision: (testId: string, region: string) => Revision | null;
  /** The fleet's target policy, copied into every job. */
  policy: () => { allow: string[]; deny: string[]; schemes?: string[] };
  tickMs?: number;
  now?: () => number;
  onPublished?: (job: Job, lagMs: number, duplicate: boolean) => void;
  onError?: (err: unknown, job: Job) => void;
}

export function freshnessMs(intervalMs: number): number {
  return Math.min(intervalMs / 2, 10_000);
}

/**
 * How long past its next slot's start a job is still probed: the next slot's job may be published
 * up to freshnessMs (≤ 10 s) late, and an agent's clock may run a little ahead of control's.
 */
export const STALE_GRACE_MS = 10_000;

/**
 * When a job goes stale (its `staleAt`): its next slot's job is due by then, so it is superseded.
 * Not sooner (say, at the end of its freshness window): a busy agent's queue may hold a job that
 * long and more, and dropping it would lose a slot that nothing replaces yet.
 */
export function staleAt(slot: number, intervalMs: number): number {
  return slot + intervalMs + STALE_GRACE_MS;
}

/**
 * Whether the slot is the first of its recheck window: the slot before it (one interval earlier)
 * fell in an earlier window. Deterministic and stateless (no memory of the last recheck, so a
 * restarted or second control marks the same slot), one slot per window, and every slot when the
 * interval is longer than the window. A window whose first slot was skipped (control down) has none.
 * Windows start `shiftMs` after the epoch's multiples of the window (recheckShiftMs).
 */
export function isRecheckSlot(slot: number, intervalMs: number, recheckMs: number, shiftMs = 0): boolean {
  return Math.floor((slot - shiftMs) / recheckMs) !== Math.floor((slot - shiftMs - intervalMs) / recheckMs);
}

/**
 * Where a test's recheck windows start inside the window length: a stable shift per test, so a
 * fleet's rechecks (each a lookup of up to four requests) spread over the day instead of all
 * falling on the slot after midnight UTC. Per test, not per region: the regions of a test recheck
 * in the same window, so their answers stay comparable.
 */
export function recheckShiftMs(testId: string, recheckMs: number): number {
  return offsetFor(`recheck.${testId}`, recheckMs);
}

export class Scheduler {
  readonly #opts: SchedulerOptions;
  readonly #now: () => number;
  #due = new Map<string, Due>();
  #timer: NodeJS.Timeout | undefined;
  #ticking = false;
  skipped = 0;

  constructor(opts: SchedulerOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  static key(e: ScheduleEntry): string {
    return `${e.kind}.${e.id}.${e.region}`;
  }

  /**
   * Every entry's place in time taken again from now, as a new entry's is: the current slot when
   * it is still fresh, else the next. For a control that has just taken over the scheduling lease:
   * the slot another control may have published already goes out again as the same job id (the
   * bus's dedupe drops it), and no slot is burst through to catch up.
   */
  resume(): void {
    const now = this.#now();
    for (const due of this.#due.values()) {
      const start = slotStart(now, due.entry.intervalMs, due.offset);
      due.next = now - start <= freshnessMs(due.entry.intervalMs) ? start : start + due.entry.intervalMs;
    }
  }

  /** The shortest interval of any entry (null when there are none). */
  shortestIntervalMs(): number | null {
    let shortest: number | null = null;
    for (const due of this.#due.values())
      if (shortest === null || due.entry.intervalMs < shortest) shortest = due.entry.intervalMs;
    return shortest;
  }

  /** Replace the entries; ones already known keep their place in time. */
  setEntries(entries: readonly ScheduleEntry[]): void {
    const now = this.#now();
    const next = new Map<string, Due>();
    for (const entry of entries) {
      const key = Scheduler.key(entry);
      const old = this.#due.get(key);
      if (old && old.entry.intervalMs === entry.intervalMs) {
        next.set(key, { ...old, entry });
        continue;
      }
      const offset = offsetFor(key, entry.intervalMs);
      const start = slotStart(now, entry.intervalMs, offset);
      // A fresh slot is still published; otherwise wait for the next one.
      const due = now - start <= freshnessMs(entry.intervalMs) ? start : start + entry.intervalMs;
      next.set(key, { entry, offset, next: due });
    }
    this.#due = next;
  }

  get size(): number {
    return this.#due.size;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.tick(), this.#opts.tickMs ?? 200);
    this.#timer.unref?.();
    void this.tick();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Publish every job that is due. Returns how many were published. */
  async tick(): Promise<number> {
    if (this.#ticking) return 0;
    this.#ticking = true;
    try {
      const now = this.#now();
      const ready: { due: Due; slot: number }[] = [];
      for (const due of this.#due.values()) {
        if (due.next > now) continue;
        let slot = due.next;
        if (now - slot > freshnessMs(due.entry.intervalMs)) {
          // Behind (a stall or a pause): skip to the current slot rather than burst through old ones.
          const current = slotStart(now, due.entry.intervalMs, due.offset);
          this.skipped += Math.max(0, Math.round((current - slot) / due.entry.intervalMs));
          slot = current;
          if (now - slot > freshnessMs(due.entry.intervalMs)) {
            due.next = slot + due.entry.intervalMs;
            continue;
          }
        }
        due.next = slot + due.entry.intervalMs;
        ready.push({ due, slot });
      }
      await Promise.all(ready.map(({ due, slot }) => this.#publish(due, slot)));
      return ready.length;
    } finally {
      this.#ticking = false;
    }
  }

  async #publish(due: Due, slot: number): Promise<void> {
    const entry = due.entry;
    const job: Job = {
      depth: entry.depth,
      script: entry.depth === 'script' ? entry.script : null,
      jobId:
        entry.kind === 'handshake'
          ? handshakeJobId(entry.id, entry.region, slot)
          : detectionJobId(entry.id, entry.region, slot),
      kind: entry.kind,
      region: entry.region,
      serverId: entry.serverId,
      serverName: entry.serverName,
      testId: entry.testId,
      // A stdio server's job names its command, an HTTP server's its URL (never both: the bus checks).
      ...(entry.command ? { command: entry.command } : { url: entry.url }),
      headers: entry.headers,
      revision: entry.revision,
      // A pinned job carries it too: it tells the probe whether the server once spoke the pin.
      currentRevision: entry.testId ? this.#opts.currentRevision(entry.testId, entry.region) : null,
      recheck:
        entry.kind === 'handshake' &&
        entry.revision === 'newest' &&
        entry.recheckMs !== null &&
        isRecheckSlot(slot, entry.intervalMs, entry.recheckMs, recheckShiftMs(entry.id, entry.recheckMs)),
      timeoutMs: entry.timeoutMs,
      slot,
      scheduledAt: new Date(slot).toISOString(),
      staleAt: staleAt(slot, entry.intervalMs),
      allow: this.#opts.policy().allow,
      deny: this.#opts.policy().deny,
      schemes: this.#opts.policy().schemes,
    };
    try {
      const { duplicate } = await this.#opts.bus.publishJob(job);
      this.#opts.onPublished?.(job, this.#now() - slot, duplicate);
    } catch (err) {
      this.#opts.onError?.(err, job);
      // The broker is away: try the same slot again on a later tick while it is still fresh.
      if (this.#now() - slot <= freshnessMs(entry.intervalMs)) due.next = slot;
    }
  }
}
