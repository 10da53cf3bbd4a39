// Where a probe may connect. Control checks the URLs whose host is an address; only the agent
// sees what a host name resolves to, at the moment it connects, so it checks every address it
// is about to dial: loopback, private, link-local (cloud metadata) and other special ranges are
// refused unless the job's `allow` list (the fleet file's `policy.allow`) covers them. This is
// what keeps a fleet entry, or a DNS answer, from pointing probes at the agent's own network.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';

/** Not the public internet. Mirrors control's list (services/control/src/policy.ts). */
const SPECIAL: readonly string[] = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '::/128',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
];

function blockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefixText] = cidr.trim().split('/');
    const version = isIP(address);
    if (version === 0) continue;
    const max = version === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) continue;
    list.addSubnet(address, prefix, version === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

const special = blockList(SPECIAL);

/** `::ffff:10.0.0.1` is 10.0.0.1: judge the IPv4 address it carries. */
function unmapped(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m?.[1] ?? address;
}

export class AddressPolicy {
  readonly #allow: BlockList;

  constructor(allow: readonly string[]) {
    this.#allow = blockList(allow);
  }

  /** Why this address may not be dialled, or undefined when it may. */
  refuses(raw: string): string | undefined {
    const address = unmapped(raw.replace(/^\[|\]$/g, ''));
    const version = isIP(address);
    if (version === 0) return undefined;
    const family = version === 4 ? 'ipv4' : 'ipv6';
    if (special.check(address, family) && !this.#allow.check(address, family))
      return `${address} is loopback, private or link-local and the fleet's policy.allow does not cover it`;
    return undefined;
  }
}

/** Refused by policy. No `code`: the probe reports the message as an unreachable target. */
export class PolicyRefusal extends Error {
  override readonly name = 'PolicyRefusal';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A dispatcher that refuses what the policy refuses; keep-alive and limits as the probe's default dispatcher. */
export function guardedDispatcher(policy: AddressPolicy): Dispatcher {
  const lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = addresses.map((a) => policy.refuses(a.address)).find((r) => r !== undefined);
      if (refused) return callback(new PolicyRefusal(`${hostname} resolves to ${refused}`), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
  const connect = buildConnector({ timeout: 10_000, lookup } as buildConnector.BuildOptions);
  return new Agent({
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 10_000,
    maxHeaderSize: 64 * 1024,
    connect: (opts, callback) => {
      // Address literals never reach the lookup: check them here.
      const refused = policy.refuses(opts.hostname);
      if (refused) return callback(new PolicyRefusal(refused), null);
      connect(opts, callback);
    },
  });
}

/** One dispatcher per distinct allow list (a fleet has one), so connections are pooled across jobs. */
export class DispatcherCache {
  readonly #byPolicy = new Map<string, Dispatcher>();

  for(allow: readonly string[]): Dispatcher {
    const key = [...allow].sort().join(',');
    let d = this.#byPolicy.get(key);
    if (!d) {
      d = guardedDispatcher(new AddressPolicy(allow));
      this.#byPolicy.set(key, d);
    }
    return d;
  }

  /** Drop every connection, including those of probes abandoned at stop (they end at once instead of at their timeout). */
  async destroy(): Promise<void> {
    const all = [...this.#byPolicy.values()];
    this.#byPolicy.clear();
    await Promise.allSettled(all.map((d) => d.destroy()));
  }
}
