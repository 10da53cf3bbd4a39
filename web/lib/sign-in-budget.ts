// Failed sign-ins are rationed per client and for the whole dashboard: a client that failed
// FAILED_SIGN_INS_PER_CLIENT times in the last minute is refused (a correct password too) until its
// oldest failure leaves the minute, and once FAILED_SIGN_INS_PER_MINUTE failed in all, everyone is.
// One client alone cannot spend the dashboard's budget, so it cannot lock everyone else out; many
// together only for a minute. With the 400 ms pause per failure and a password of 12+ characters,
// guessing is hopeless either way.
//
// The client is the TCP peer's address, never a header a client writes (X-Forwarded-For is
// whatever it likes): the dashboard's own HTTP server (index.ts) puts it in CLIENT_ADDRESS_HEADER,
// over anything the client sent, and says so in shared(); a route trusts the header only then.
// Behind a proxy every client has the proxy's address: one client then, rationed as 10 a minute,
// as the dashboard was before. IPv6 clients are keyed by their /64, which one host usually owns.
import { shared } from './shared';

export const FAILED_SIGN_INS_PER_CLIENT = 10;
export const FAILED_SIGN_INS_PER_MINUTE = 40;
const WINDOW_MS = 60_000;
/** Clients remembered at most (the oldest is forgotten first): a flood of addresses cannot fill memory. */
const MAX_CLIENTS = 10_000;

/** The header the dashboard's server sets from the socket's peer address. */
export const CLIENT_ADDRESS_HEADER = 'x-mcp-fleet-client-address';

export interface SignInBudget {
  /** Milliseconds until `client` (null: unknown) may try again; 0 = now. */
  wait(client: string | null, now?: number): number;
  failed(client: string | null, now?: number): void;
}

/** Failures in the last window, oldest first. */
class Window {
  readonly #at: number[] = [];
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}
  #forget(now: number) {
    while (this.#at.length > 0 && this.#at[0]! <= now - this.windowMs) this.#at.shift();
  }
  wait(now: number): number {
    this.#forget(now);
    return this.#at.length < this.limit ? 0 : this.#at[0]! + this.windowMs - now;
  }
  failed(now: number): void {
    this.#forget(now);
    this.#at.push(now);
  }
  empty(now: number): boolean {
    this.#forget(now);
    return this.#at.length === 0;
  }
}

export function signInBudget(
  opts: { perClient?: number; total?: number; windowMs?: number; maxClients?: number } = {},
): SignInBudget {
  const windowMs = opts.windowMs ?? WINDOW_MS;
  const perClient = opts.perClient ?? FAILED_SIGN_INS_PER_CLIENT;
  const maxClients = opts.maxClients ?? MAX_CLIENTS;
  const total = new Window(opts.total ?? FAILED_SIGN_INS_PER_MINUTE, windowMs);
  const clients = new Map<string, Window>();
  return {
    wait(client, now = Date.now()) {
      const own = client === null ? undefined : clients.get(clientKey(client));
      return Math.max(total.wait(now), own?.wait(now) ?? 0);
    },
    failed(client, now = Date.now()) {
      total.failed(now);
      if (client === null) return;
      const key = clientKey(client);
      let own = clients.get(key);
      if (!own) {
        for (const [k, w] of clients) if (w.empty(now)) clients.delete(k);
        if (clients.size >= maxClients) clients.delete(clients.keys().next().value!);
        own = new Window(perClient, windowMs);
        clients.set(key, own);
      }
      own.failed(now);
    },
  };
}

/** An IPv4 address (also IPv4-mapped) as itself, an IPv6 one as its /64. */
export function clientKey(address: string): string {
  const v4 = address.match(/^(?:::ffff:)?(\d+\.\d+\.\d+\.\d+)$/i);
  if (v4) return v4[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.toLowerCase().split('%', 1)[0]!.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** The client's address, when the dashboard's own server put it there; else null (unknown). */
export function clientAddress(headers: { get(name: string): string | null }): string | null {
  return shared().clientAddressHeader ? headers.get(CLIENT_ADDRESS_HEADER) : null;
}

const KEY = Symbol.for('mcp-fleet.web.sign-in-budget');

/** The process's budget (kept on globalThis: every route bundle must share one). */
export function sharedSignInBudget(): SignInBudget {
  const g = globalThis as unknown as Record<symbol, SignInBudget | undefined>;
  g[KEY] ??= signInBudget();
  return g[KEY];
}
