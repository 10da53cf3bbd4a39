// Where probes may go. Public addresses are allowed; loopback, private, link-local (cloud
// metadata) and other special ranges only where `allow` covers them; `deny` always wins. Control
// checks address literals when a fleet is applied; the dispatcher below checks every address a
// probe is about to dial, after DNS, so neither a fleet entry nor a DNS answer can point probes
// at the agent's own network. node:net's BlockList does the CIDR matching.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';

/** Not the public internet: refused unless allowed. */
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

export interface TargetPolicyRanges {
  allow: readonly string[];
  deny: readonly string[];
}

export function parseCidr(cidr: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText] = cidr.trim().split('/');
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function blockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const c = parseCidr(cidr);
    if (c) list.addSubnet(c.address, c.prefix, c.family);
  }
  return list;
}

const special = blockList(SPECIAL);

/** `::ffff:10.0.0.1` is 10.0.0.1: judge the IPv4 address it carries. */
function unmapped(address: string): string {
  return /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;
}

export class TargetPolicy {
  readonly #allow: BlockList;
  readonly #deny: BlockList;

  constructor(ranges: TargetPolicyRanges) {
    this.#allow = blockList(ranges.allow);
    this.#deny = blockList(ranges.deny);
  }

  /** Why this address may not be dialled, or undefined when it may. */
  refuses(raw: string): string | undefined {
    const address = unmapped(raw.replace(/^\[|\]$/g, ''));
    const version = isIP(address);
    if (version === 0) return undefined;
    const family = version === 4 ? 'ipv4' : 'ipv6';
    if (this.#deny.check(address, family)) return `${address} is in a range the policy denies`;
    if (special.check(address, family) && !this.#allow.check(address, family))
      return `${address} is loopback, private or link-local and policy.allow does not cover it`;
    return undefined;
  }

  /** Check a URL whose host is an address literal (or `localhost`); host names are checked when dialled. */
  refusesUrl(url: URL): string | undefined {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (host === 'localhost' || host.endsWith('.localhost')) return this.refuses('127.0.0.1');
    return this.refuses(host);
  }
}

/** Refused by policy. No `code`: the probe reports the message as an unreachable target. */
export class PolicyRefusal extends Error {
  override readonly name = 'PolicyRefusal';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A dispatcher that refuses what the policy refuses; keep-alive and limits as the probe's default dispatcher. */
export function guardedDispatcher(policy: TargetPolicy): Dispatcher {
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
