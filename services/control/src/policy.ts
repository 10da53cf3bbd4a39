// Where probes may go. Public addresses are allowed; loopback, private, link-local and other
// special ranges only where the fleet file's `policy.allow` says so; `policy.deny` always wins.
// node:net's BlockList does the CIDR matching.
import { BlockList, isIP } from 'node:net';

/** Ranges that are not the public internet: refused unless allowed. Cloud metadata sits in link-local. */
const SPECIAL_V4 = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const;
const SPECIAL_V6 = [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const;

export interface TargetPolicy {
  allow: string[];
  deny: string[];
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

function listOf(ranges: readonly (readonly [string, number])[] | string[]): BlockList {
  const list = new BlockList();
  for (const r of ranges) {
    const c = typeof r === 'string' ? parseCidr(r) : parseCidr(`${r[0]}/${r[1]}`);
    if (c) list.addSubnet(c.address, c.prefix, c.family);
  }
  return list;
}

const special = listOf([...SPECIAL_V4, ...SPECIAL_V6]);

export class AddressPolicy {
  readonly #allow: BlockList;
  readonly #deny: BlockList;

  constructor(policy: TargetPolicy) {
    this.#allow = listOf(policy.allow);
    this.#deny = listOf(policy.deny);
  }

  /** Why an address may not be probed, or undefined when it may. */
  refuses(address: string): string | undefined {
    const version = isIP(address);
    if (version === 0) return undefined;
    const family = version === 4 ? 'ipv4' : 'ipv6';
    if (this.#deny.check(address, family)) return `${address} is in a range the policy denies`;
    if (special.check(address, family) && !this.#allow.check(address, family))
      return `${address} is loopback, private or link-local and policy.allow does not cover it`;
    return undefined;
  }

  /** Check a URL whose host is an address literal (or `localhost`). Host names are checked after DNS by the agent. */
  refusesUrl(url: URL): string | undefined {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (host === 'localhost' || host.endsWith('.localhost')) return this.refuses('127.0.0.1');
    return this.refuses(host);
  }
}
