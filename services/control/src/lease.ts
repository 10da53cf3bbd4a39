// The scheduling lease: of the controls on one database, the one holding it schedules; all of them
// ingest and serve the API (docs/control-replicas.md). It is a Postgres session-level advisory lock
// held on a session of its own (store's openSession), so it lasts exactly as long as that session:
// a control killed outright closes its socket and Postgres frees the lock at once; a host that
// vanished is noticed by TCP keepalives in seconds. The others try for it every `pollMs`.
// A leader whose session is lost (Postgres briefly away) keeps scheduling — it cannot have lost the
// lock without another taking it, and deterministic job ids make a slot published twice one job —
// and stops only when, reconnected, it finds the lock held by another control.
// PGlite (embedded, one process) has no other session: its control always holds the lease.
import type { Logger } from '@mcp-fleet/log';
import type { SessionConnection } from '@mcp-fleet/store';

/** Any number, as long as every control of one database uses it (beside the store's migration and apply locks). */
export const SCHEDULING_LEASE_KEY = 0x6d6366_7363; // "mcfsc"

export interface LeaseOptions {
  /** A new session (store.openSession); null: an embedded database, where the lease is always held. */
  open: () => Promise<SessionConnection | null>;
  /** How long between tries (and, while held, between checks of the session). */
  pollMs: () => number;
  /** Told every change of hands, after it happened (awaited before the next try). */
  onChange: (held: boolean) => void | Promise<void>;
  log: Pick<Logger, 'info' | 'warn'>;
  key?: number;
  /**
   * While held, LISTEN on these channels and call each one's handler for its NOTIFYs (another
   * control changed the fleet; a test's revision moved). `onListening` is told each time the holder
   * listens again on a new session: what was sent while it had none was never heard.
   */
  listen?: { channels: Record<string, (payload: string) => void>; onListening?: () => void };
}

export class Lease {
  readonly #opts: LeaseOptions;
  readonly #key: number;
  #held = false;
  /** The session, while there is one; `#locked` says whether the lock is held on it. */
  #conn: SessionConnection | null = null;
  #locked = false;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #polling: Promise<void> | undefined;
  /** Said once per outage, not once per try. */
  #outage = false;
  /** Whether the first try has told who holds it. */
  #known = false;
  #embedded = false;

  constructor(opts: LeaseOptions) {
    this.#opts = opts;
    this.#key = opts.key ?? SCHEDULING_LEASE_KEY;
  }

  /** Whether this control schedules now. */
  get held(): boolean {
    return this.#held;
  }

  /** Try once now (so a lone control schedules as soon as it starts), then every pollMs. */
  async start(): Promise<void> {
    this.#stopped = false;
    await this.#tick();
  }

  /** Stop trying and let the lock go (ending the session frees it). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#polling;
    const conn = this.#conn;
    this.#conn = null;
    this.#locked = false;
    if (conn) await conn.end().catch(() => {});
    await this.#set(false);
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    this.#polling = this.#poll();
    await this.#polling;
    this.#polling = undefined;
    if (this.#stopped || this.#embedded) return;
    this.#timer = setTimeout(() => void this.#tick(), this.#opts.pollMs());
    this.#timer.unref?.();
  }

  async #poll(): Promise<void> {
    try {
      if (!this.#conn) {
        const conn = await this.#opts.open();
        if (!conn) {
          this.#embedded = true;
          await this.#set(true, 'embedded database: this control schedules');
          return;
        }
        const lost = (err?: Error) => this.#lost(conn, err);
        conn.on('error', lost);
        conn.on('end', () => lost());
        const listen = this.#opts.listen;
        if (listen)
          conn.on('notification', (msg) => {
            const onNotice = Object.hasOwn(listen.channels, msg.channel) ? listen.channels[msg.channel] : undefined;
            if (onNotice && this.#held) onNotice(msg.payload ?? '');
          });
        this.#conn = conn;
        if (this.#outage) this.#opts.log.info({}, 'scheduling lease: back in touch with Postgres');
        this.#outage = false;
      }
      const conn = this.#conn;
      if (this.#locked) {
        // Held: only check the session is alive (a failure ends it; the next try reconnects).
        await conn.query('select 1');
        return;
      }
      const { rows } = await conn.query<{ locked: boolean }>('select pg_try_advisory_lock($1) as locked', [this.#key]);
      if (conn !== this.#conn) return; // lost meanwhile
      this.#locked = rows[0]?.locked === true;
      // The holder hears of what the other controls changed (a channel name is an identifier).
      if (this.#locked && this.#opts.listen) {
        for (const channel of Object.keys(this.#opts.listen.channels)) await conn.query(`listen ${channel}`);
        this.#opts.listen.onListening?.();
      }
      if (this.#locked) await this.#set(true, 'scheduling lease acquired: this control schedules');
      else
        await this.#set(
          false,
          this.#held
            ? 'scheduling lease held by another control since the session was lost: this control stops scheduling'
            : 'scheduling lease held by another control: this control ingests and serves the API',
        );
    } catch (err) {
      if (this.#conn) this.#lost(this.#conn, err as Error);
      else if (!this.#outage) {
        this.#outage = true;
        this.#opts.log.warn(
          { err: (err as Error).message, scheduling: this.#held },
          this.#held
            ? 'scheduling lease: cannot reach Postgres; scheduling on until another control is seen holding the lease'
            : 'scheduling lease: cannot reach Postgres; trying again',
        );
      }
    }
  }

  /** The session is gone: so is the lock on it, but not (yet) the right to schedule. */
  #lost(conn: SessionConnection, err?: Error): void {
    if (conn !== this.#conn) return;
    this.#conn = null;
    this.#locked = false;
    void conn.end().catch(() => {});
    if (this.#stopped) return;
    this.#outage = true;
    this.#opts.log.warn(
      { err: err?.message ?? 'the connection ended', scheduling: this.#held },
      this.#held
        ? 'scheduling lease: its session was lost; scheduling on until another control is seen holding the lease'
        : 'scheduling lease: its session was lost; trying again',
    );
  }

  async #set(held: boolean, say?: string): Promise<void> {
    if (held === this.#held && this.#known) return;
    this.#known = true;
    this.#held = held;
    if (say) this.#opts.log.info({ scheduling: held }, say);
    await this.#opts.onChange(held);
  }
}
