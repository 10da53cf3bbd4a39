// The DNS lookups a probe's connections make, bounded. Node resolves names with getaddrinfo on
// libuv's thread pool (4 threads by default, shared with fs, crypto and zlib), and a lookup cannot
// be cancelled: a name whose DNS server stalls holds its thread until the system resolver gives up,
// so a few such names would starve every other probe's lookups. Here a lookup has a timeout (the
// probe gets its answer or a clear error in time, while the stalled one keeps its thread until it
// returns), at most `maxConcurrent` run at once in the process (counting the timed-out ones still
// running: they still hold their threads), and a name has at most one lookup in flight: probes
// asking for a name already being looked up wait for that lookup's answer, so one stalling name
// holds one slot however many probes ask for it. Written here because no library bounds
// dns.lookup this way (caching resolvers such as cacheable-lookup add caching, not bounds).
import { type LookupAddress, type LookupAllOptions, type LookupOptions, lookup as systemLookup } from 'node:dns';

export interface DnsLimits {
  /** How long a probe waits for a name's addresses, waiting for a free slot included. */
  timeoutMs: number;
  /** Lookups with the system resolver at once, in this process. */
  maxConcurrent: number;
}

/**
 * The defaults: 5 s (a healthy resolver answers in milliseconds; the system resolver's own first
 * retry comes at 5 s), and 3 lookups at once: one of libuv's 4 threads stays free for everything else.
 */
export const DNS_LIMITS: DnsLimits = { timeoutMs: 5_000, maxConcurrent: 3 };

/** node:dns's code for a lookup that timed out; the probe reports it as a DNS failure. */
export const DNS_TIMEOUT_CODE = 'ETIMEOUT';

export type AddressesCallback = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;

/** The system resolver's shape, asked for every address (node:dns lookup with `all: true`). */
export type Resolver = (hostname: string, options: LookupAllOptions, callback: AddressesCallback) => void;

type NetLookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A name's lookup: queued for a slot, or with the resolver; every probe waiting for it. */
interface Pending {
  key: string;
  hostname: string;
  options: LookupAllOptions;
  waiters: Set<AddressesCallback>;
  running: boolean;
}

export class DnsLookups {
  readonly limits: DnsLimits;
  readonly #resolver: Resolver;
  readonly #pending = new Map<string, Pending>();
  readonly #queue: Pending[] = [];
  #running = 0;

  constructor(limits: Partial<DnsLimits> = {}, resolver: Resolver = systemLookup as Resolver) {
    this.limits = { ...DNS_LIMITS, ...limits };
    this.#resolver = resolver;
  }

  /** Lookups with the resolver now, timed-out ones included until the resolver returns. */
  get running(): number {
    return this.#running;
  }

  /** Every address of `hostname`, or why not: the resolver's error, or ETIMEOUT past `timeoutMs`. */
  resolveAll(hostname: string, options: LookupOptions, callback: AddressesCallback): void {
    const all: LookupAllOptions = { family: options.family, hints: options.hints, all: true };
    const key = `${hostname.toLowerCase()}|${all.family ?? 0}|${all.hints ?? 0}`;
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = { key, hostname, options: all, waiters: new Set(), running: false };
      this.#pending.set(key, pending);
      this.#queue.push(pending);
    }
    const shared = pending;
    const waiter: AddressesCallback = (err, addresses) => {
      clearTimeout(timer);
      callback(err, addresses);
    };
    const timer = setTimeout(() => {
      shared.waiters.delete(waiter);
      // Queued and wanted by no one any more: it never takes a slot.
      if (!shared.running && shared.waiters.size === 0) this.#forget(shared);
      callback(this.#timeout(hostname, shared.running), []);
    }, this.limits.timeoutMs);
    timer.unref();
    shared.waiters.add(waiter);
    this.#next();
  }

  /** The lookup function net.connect and undici's connector take (one address, or all with `all: true`). */
  readonly lookup = (hostname: string, options: LookupOptions, callback: NetLookupCallback): void => {
    this.resolveAll(hostname, options, (err, addresses) => {
      if (err) return callback(err, options.all ? [] : '');
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };

  #next(): void {
    while (this.#running < this.limits.maxConcurrent) {
      const pending = this.#queue.shift();
      if (!pending) return;
      pending.running = true;
      this.#running += 1;
      let answered = false;
      const done: AddressesCallback = (err, addresses) => {
        if (answered) return;
        answered = true;
        this.#running -= 1;
        this.#forget(pending);
        for (const waiter of [...pending.waiters]) waiter(err, err ? [] : addresses);
        pending.waiters.clear();
        this.#next();
      };
      try {
        this.#resolver(pending.hostname, pending.options, done);
      } catch (err) {
        done(err as NodeJS.ErrnoException, []);
      }
    }
  }

  #forget(pending: Pending): void {
    if (this.#pending.get(pending.key) === pending) this.#pending.delete(pending.key);
    const at = this.#queue.indexOf(pending);
    if (at >= 0) this.#queue.splice(at, 1);
  }

  #timeout(hostname: string, running: boolean): NodeJS.ErrnoException {
    const why = running
      ? ''
      : ` (it waited for one of the ${this.limits.maxConcurrent} lookups this process runs at once)`;
    return Object.assign(
      new Error(`DNS lookup for ${hostname} did not answer within ${this.limits.timeoutMs} ms${why}`),
      { code: DNS_TIMEOUT_CODE, hostname },
    );
  }
}

/** The lookups of this process: every probe's dispatcher shares them (and so the cap). */
export const systemDns = new DnsLookups();
