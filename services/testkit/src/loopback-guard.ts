// Tests never leave loopback. A vitest setup file (vitest.config.ts `setupFiles`): every TCP
// connection a test process opens — node:net, node:tls, node:http, undici, fetch, pg, NATS all end
// in net.Socket.prototype.connect — is checked before it dials.
//
// - An address literal must be loopback (isLoopbackAddress: 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104).
// - A host name must be one this machine resolves itself: localhost, *.localhost, or a name in
//   /etc/hosts. It is resolved (by the caller's lookup) and every address it gives is checked
//   before the connection is made. Any other name is refused before it is looked up, so not even
//   a DNS query leaves the machine.
// - Unix sockets are not network: always allowed.
// - The hosts of MCP_FLEET_TEST_ADMIN_URL and MCP_FLEET_TEST_NATS_URL, when set, are the test
//   services the environment names: allowed wherever they are.
//
// A refused connection fails at once with ERR_LOOPBACK_GUARD (as a connection error would) and is
// recorded; the test it happened in then fails in afterEach, even if the code under test swallowed
// the error (a probe reports it as an unreachable target). Worker threads and child processes are
// not covered: they do not share this process's net module.
import dns from 'node:dns';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { isLoopbackAddress } from '@mcp-fleet/probe/loopback';
import { afterAll, afterEach } from 'vitest';

const GUARD = Symbol.for('mcp-fleet.loopback-guard');

interface GuardState {
  violations: string[];
  original: typeof net.Socket.prototype.connect;
}

type Holder = typeof globalThis & { [GUARD]?: GuardState };

function namesFromHostsFile(): Set<string> {
  const names = new Set<string>();
  try {
    for (const line of readFileSync('/etc/hosts', 'utf8').split('\n'))
      for (const name of line.replace(/#.*/, '').trim().split(/\s+/).slice(1)) names.add(name.toLowerCase());
  } catch {
    // No hosts file: localhost alone.
  }
  return names;
}

function namedTestServices(): Set<string> {
  const hosts = new Set<string>();
  for (const v of [process.env.MCP_FLEET_TEST_ADMIN_URL, process.env.MCP_FLEET_TEST_NATS_URL]) {
    if (!v) continue;
    for (const one of v.split(',')) {
      try {
        hosts.add(new URL(one.trim()).hostname.replace(/^\[|\]$/g, '').toLowerCase());
      } catch {
        // Not a URL: nothing to allow.
      }
    }
  }
  return hosts;
}

const hostsFile = namesFromHostsFile();
const services = namedTestServices();

function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || hostsFile.has(name);
}

export class LoopbackGuardError extends Error {
  override readonly name = 'LoopbackGuardError';
  readonly code = 'ERR_LOOPBACK_GUARD';
}

function state(): GuardState {
  const s = (globalThis as Holder)[GUARD];
  if (!s) throw new Error('the loopback guard is not installed');
  return s;
}

function violation(what: string): LoopbackGuardError {
  const err = new LoopbackGuardError(
    `loopback guard: a test tried to reach ${what}; tests reach only 127.0.0.0/8 and ::1 (services/testkit/src/loopback-guard.ts)`,
  );
  state().violations.push(err.message);
  return err;
}

/** The refusals recorded so far, cleared (a test that provokes the guard on purpose takes them). */
export function takeViolations(): string[] {
  return state().violations.splice(0);
}

type ConnectOptions = net.TcpSocketConnectOpts & { path?: string };
type LookupFn = NonNullable<net.TcpSocketConnectOpts['lookup']>;

/** The connect options in any of socket.connect's call shapes, and how to call it again with others. */
function readArgs(args: unknown[]): { options: ConnectOptions; rebuild: (o: ConnectOptions) => unknown[] } | undefined {
  const [first] = args;
  if (Array.isArray(first)) {
    // net.connect() hands its normalized arguments over as an array marked with an internal symbol.
    const [options] = first as [ConnectOptions];
    if (typeof options !== 'object' || options === null) return undefined;
    return {
      options,
      rebuild: (o) => {
        const copy: unknown[] = [o, ...first.slice(1)];
        for (const sym of Object.getOwnPropertySymbols(first))
          (copy as unknown as Record<symbol, unknown>)[sym] = (first as unknown as Record<symbol, unknown>)[sym];
        return [copy, ...args.slice(1)];
      },
    };
  }
  if (typeof first === 'object' && first !== null)
    return { options: first as ConnectOptions, rebuild: (o) => [o, ...args.slice(1)] };
  if (typeof first === 'string' && Number.isNaN(Number(first))) return undefined; // a pipe path
  if (typeof first === 'number' || typeof first === 'string') {
    const host = typeof args[1] === 'string' ? args[1] : undefined;
    const callback = args.find((a) => typeof a === 'function');
    return {
      options: { port: Number(first), ...(host ? { host } : {}) },
      rebuild: (o) => (callback ? [o, callback] : [o]),
    };
  }
  return undefined;
}

function install(): void {
  const holder = globalThis as Holder;
  if (holder[GUARD]) return;
  const original = net.Socket.prototype.connect;
  holder[GUARD] = { violations: [], original };

  function refuse(socket: net.Socket, err: LoopbackGuardError): net.Socket {
    process.nextTick(() => socket.destroy(err));
    return socket;
  }

  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]): net.Socket {
    const call = (a: unknown[]) => (original as (...x: unknown[]) => net.Socket).apply(this, a);
    const read = readArgs(args);
    if (!read || typeof read.options.path === 'string') return call(args);
    const host = read.options.host ?? 'localhost';
    const where = `${host}:${read.options.port}`;
    if (services.has(host.replace(/^\[|\]$/g, '').toLowerCase())) return call(args);
    if (net.isIP(host.replace(/^\[|\]$/g, ''))) {
      if (!isLoopbackAddress(host)) return refuse(this, violation(where));
      return call(args);
    }
    if (!isLocalName(host)) return refuse(this, violation(`${where} (a name this machine does not resolve itself)`));
    // A local name: resolve it as the caller would, then check every address before dialling.
    const lookup: LookupFn = read.options.lookup ?? (dns.lookup as unknown as LookupFn);
    const checked = ((hostname: string, options: dns.LookupOptions, callback: (...r: unknown[]) => void) =>
      lookup(hostname, options, ((err: NodeJS.ErrnoException | null, address: unknown, family?: number) => {
        if (err) return callback(err, address, family);
        const all = Array.isArray(address)
          ? (address as dns.LookupAddress[]).map((a) => a.address)
          : [address as string];
        const outside = all.find((a) => !isLoopbackAddress(a));
        if (outside !== undefined) return callback(violation(`${where}, which resolves to ${outside}`), [], family);
        callback(null, address, family);
      }) as never)) as unknown as LookupFn;
    return call(read.rebuild({ ...read.options, lookup: checked }));
  } as typeof net.Socket.prototype.connect;
}

install();

function failOnViolations(): void {
  const seen = takeViolations();
  if (seen.length) throw new Error(`${seen.length} connection(s) beyond loopback:\n  ${seen.join('\n  ')}`);
}

afterEach(failOnViolations);
afterAll(failOnViolations);
