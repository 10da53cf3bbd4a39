// What control schedules: every active test in each of its regions (and a server's detection
// where asked), read from the database into the Scheduler's entries. Read again after every change
// to the fleet, and when the fleet's fingerprint moved (checked every 30 s: a change made by another
// control whose notice was missed, or by hand, is picked up too), and every 5 minutes regardless.
// Only the control holding the scheduling lease publishes (lease.ts): lead() and follow().
import type { Bus } from '@mcp-fleet/bus';
import { conformanceTimeoutMs, effectiveIntervalMs } from '@mcp-fleet/config';
import type { Logger } from '@mcp-fleet/log';
import { isRevision, type Revision } from '@mcp-fleet/probe';
import { type ActiveTest, type Db, fleetFingerprint, listActiveTests } from '@mcp-fleet/store';
import type { ControlMetrics } from './metrics';
import { type ScheduleEntry, Scheduler } from './scheduler';

/** How often the fleet's fingerprint is compared (one scan of servers and tests: cheap). */
const FINGERPRINT_EVERY_MS = 30_000;
/**
 * The schedule is read whole at least this often, fingerprint or not. Reading it joins every test
 * with its server, state and sealed credentials (0.5 s of Postgres and as much of control at 60,000
 * tests): every 30 s that was a real share of control's CPU at 1,000 jobs/s.
 */
const RELOAD_AT_LEAST_EVERY_MS = 5 * 60_000;

export interface ScheduleOptions {
  db: Db;
  bus: Bus;
  log: Logger;
  metrics: ControlMetrics;
  /** The fleet's regions as last applied. */
  regions: () => string[];
  /** The fleet's target policy as last applied, copied into every job. */
  policy: () => { allow: string[]; deny: string[]; schemes?: string[] };
  tickMs?: number | undefined;
}

export class Schedule {
  readonly scheduler: Scheduler;
  readonly #opts: ScheduleOptions;
  /** Each (test, region)'s current revision: jobs carry it, ingest moves it. */
  readonly #current = new Map<string, Revision>();
  /** Servers not probed because their credentials cannot be opened, and why (said once). */
  readonly #unreadable = new Map<string, string>();
  #reloading: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** The fleet's fingerprint when the schedule was last read, and when (ms). */
  #readFingerprint: string | undefined;
  #readAt = 0;
  /** Whether this control schedules (holds the lease): lead() and follow() say. */
  #leading = false;

  constructor(opts: ScheduleOptions) {
    this.#opts = opts;
    const { metrics, log } = opts;
    this.scheduler = new Scheduler({
      bus: opts.bus,
      currentRevision: (testId, region) => this.#current.get(key(testId, region)) ?? null,
      policy: opts.policy,
      tickMs: opts.tickMs,
      onPublished: (job, lagMs, duplicate) => {
        metrics.jobs.inc({ kind: job.kind, result: duplicate ? 'duplicate' : 'published' });
        if (!duplicate) metrics.lag.observe(lagMs / 1000);
      },
      onError: (err, job) => {
        metrics.jobs.inc({ kind: job.kind, result: 'error' });
        log.warn(
          { jobId: job.jobId, err: (err as Error).message },
          'could not publish a job; will retry while its slot is fresh',
        );
      },
    });
  }

  /**
   * A run was recorded (by this control's ingest, or told by the database's notice of a move, from
   * any control's: control.ts): its revision is the test's current one in that region.
   */
  noteRun(testId: string, region: string, revision: Revision): void {
    this.#current.set(key(testId, region), revision);
  }

  /** Read the schedule from the database now. */
  async reload(): Promise<void> {
    // Taken before the read: a change made while reading moves it again, and is read next time.
    const fingerprint = await fleetFingerprint(this.#opts.db);
    const regions = this.#opts.regions();
    const entries: ScheduleEntry[] = [];
    const detected = new Set<string>();
    for (const t of await listActiveTests(this.#opts.db)) {
      if (!this.#probeable(t)) continue;
      for (const region of (t.regions ?? regions).filter((r) => regions.includes(r))) {
        const cur = t.currentRevisions[region];
        if (isRevision(cur)) this.#current.set(key(t.testId, region), cur);
        entries.push(handshakeEntry(t, region));
        if (t.detectionIntervalMs && !detected.has(`${t.serverId}|${region}`)) {
          detected.add(`${t.serverId}|${region}`);
          entries.push(detectionEntry(t, region, t.detectionIntervalMs));
        }
      }
    }
    this.scheduler.setEntries(entries);
    this.#opts.metrics.entries.set(entries.length);
    this.#readFingerprint = fingerprint;
    this.#readAt = Date.now();
  }

  /** The periodic read: only when the fleet's fingerprint moved, or the last read is old. */
  async reloadIfChanged(): Promise<void> {
    const old = Date.now() - this.#readAt >= RELOAD_AT_LEAST_EVERY_MS;
    if (old || (await fleetFingerprint(this.#opts.db)) !== this.#readFingerprint) await this.reload();
  }

  /** Read it again after any reading under way (the API answers a change before the schedule follows). */
  reloadSoon(ifChanged = false): void {
    this.#reloading = (this.#reloading ?? Promise.resolve())
      .then(() => (ifChanged ? this.reloadIfChanged() : this.reload()))
      .catch((err) => this.#opts.log.error({ err: (err as Error).message }, 'could not load the schedule'));
  }

  /** Publish jobs as they come due, and read the schedule again when the fleet moved. */
  start(): void {
    clearInterval(this.#timer);
    this.#timer = setInterval(() => this.reloadSoon(true), FINGERPRINT_EVERY_MS);
    this.#timer.unref();
    this.scheduler.start();
  }

  stop(): void {
    this.#leading = false;
    this.scheduler.stop();
    clearInterval(this.#timer);
  }

  /**
   * This control has the scheduling lease: read the fleet again (another control may have changed
   * it), take every entry's place from now — the current slot if still fresh — and publish.
   */
  async lead(): Promise<void> {
    this.#leading = true;
    try {
      await this.reload();
    } catch (err) {
      // Postgres away: schedule what was last read rather than nothing.
      this.#opts.log.error(
        { err: (err as Error).message },
        'could not load the schedule; scheduling the last one read',
      );
    }
    if (!this.#leading) return; // the lease went meanwhile
    this.scheduler.resume();
    this.start();
    this.#opts.log.info(
      { entries: this.scheduler.size },
      `scheduling ${this.scheduler.size} entries, each from its current slot while still fresh`,
    );
  }

  /** Another control schedules: publish nothing. */
  follow(): void {
    this.stop();
  }

  /** Probing without its credentials would only report auth_required: say why it is not probed, once. */
  #probeable(t: ActiveTest): boolean {
    if (!t.credentialsError) {
      this.#unreadable.delete(t.serverId);
      return true;
    }
    if (this.#unreadable.get(t.serverId) !== t.credentialsError)
      this.#opts.log.error(
        { server: t.serverName, reason: t.credentialsError },
        'the server is not probed: its stored credentials cannot be opened',
      );
    this.#unreadable.set(t.serverId, t.credentialsError);
    return false;
  }
}

const key = (testId: string, region: string) => `${testId}|${region}`;

export function handshakeEntry(t: ActiveTest, region: string): ScheduleEntry {
  // The test's own interval, else its depth's default (a conformance test's is longer: config).
  const intervalMs = effectiveIntervalMs({ depth: t.depth, intervalMs: t.testIntervalMs }, t.intervalMs);
  return {
    kind: 'handshake',
    id: t.testId,
    region,
    serverId: t.serverId,
    serverName: t.serverName,
    testId: t.testId,
    url: t.target,
    command: t.command,
    headers: t.headers,
    revision: t.mode === 'newest' ? 'newest' : (t.pinnedRevision as Revision),
    depth: t.depth,
    script: t.depth === 'script' ? t.script : null,
    intervalMs,
    // Newest-supported tests only: a pin never looks up, it asks for its revision.
    recheckMs: t.mode === 'newest' ? t.judgement.recheckMs : null,
    // A conformance run, a surface read (each era, every list paged) and a script send dozens of
    // requests: at least 30 s, within the job's bounds and its interval.
    timeoutMs: t.depth === 'handshake' ? t.timeoutMs : conformanceTimeoutMs(t.timeoutMs, intervalMs),
  };
}

function detectionEntry(t: ActiveTest, region: string, intervalMs: number): ScheduleEntry {
  return {
    kind: 'detection',
    id: t.serverId,
    region,
    serverId: t.serverId,
    serverName: t.serverName,
    testId: null,
    url: t.target,
    command: t.command,
    headers: t.headers,
    revision: null,
    depth: 'handshake',
    script: null,
    intervalMs,
    recheckMs: null,
    timeoutMs: Math.min(t.timeoutMs, 20_000),
  };
}
