// Where probes may go. Public addresses are allowed; loopback, private and other special ranges
// only where `allow` covers them; link-local and cloud metadata addresses only where an `allow`
// entry inside them names them (a broad `0.0.0.0/0` or `100.64.0.0/10` does not); `deny` always
// wins; and only the schemes `schemes` lists (default http and https). Control checks URLs with
// address literals when a fleet is applied or a server saved; the dispatcher below checks every
// address a probe is about to dial, after DNS, so neither a fleet entry nor a DNS answer can point
// probes at the agent's own network. node:net's BlockList does the CIDR matching.
//
// A process that probes (an agent, control) also has a floor of its own: the same kind of ranges,
// from its own flags or environment. A job's policy (the fleet's, copied into every job) narrows
// the floor and never widens it: `floor.narrow(jobRanges)` lets through only what both let
// through, so deny is the union, schemes the intersection, and a metadata address needs an allow
// entry naming it in both.
import type { LookupAddress, LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { type DnsLookups, systemDns } from './dns';
import { originPool } from './origin-pool';

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
  '64:ff9b:1::/48',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
];

/**
 * Link-local and cloud metadata addresses: refused unless an allow entry inside one of these
 * ranges names it, so that no broad allow opens the instance's credentials to a probe.
 */
const METADATA: readonly string[] = [
  '169.254.0.0/16', // IPv4 link-local: 169.254.169.254 (AWS, GCP, Azure, Oracle, DigitalOcean…), 169.254.170.2 (ECS)
  'fe80::/10', // IPv6 link-local
  'fd00:ec2::/32', // AWS over IPv6: metadata fd00:ec2::254, DNS ::253, time ::123
  'fd20:ce::254/128', // GCP metadata over IPv6
  '100.100.100.200/32', // Alibaba Cloud metadata
  '192.0.0.192/32', // Oracle Cloud metadata (legacy)
  '168.63.129.16/32', // Azure WireServer
];

/** The schemes a policy allows when it names none. */
export const DEFAULT_SCHEMES = ['http', 'https'] as const;

export interface TargetPolicyRanges {
  allow: readonly string[];
  deny: readonly string[];
  /** URL schemes probes may use, without `:` (default http and https). */
  schemes?: readonly string[];
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
const metadata = METADATA.map((cidr) => ({ cidr, range: parseCidr(cidr)!, list: blockList([cidr]) }));

/** The eight 16-bit groups of an IPv6 address (valid per isIP), an embedded dotted IPv4 included. */
function hextets(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((x) => Number.parseInt(x, 16));
}

/**
 * The IPv4 address an IPv6 one carries where it reaches that IPv4 host: IPv4-mapped
 * (`::ffff:10.0.0.1`, `::ffff:a00:1`) and NAT64's well-known prefix (`64:ff9b::a9fe:a9fe` is
 * 169.254.169.254 on a NAT64 network). Anything else is returned as it is.
 */
function embeddedIPv4(address: string): string {
  if (isIP(address) !== 6) return address;
  const h = hextets(address);
  const zeros = (from: number, to: number) => h.slice(from, to).every((x) => x === 0);
  const mapped = zeros(0, 5) && h[5] === 0xffff;
  const nat64 = h[0] === 0x64 && h[1] === 0xff9b && zeros(2, 6);
  if (!mapped && !nat64) return address;
  const [hi = 0, lo = 0] = h.slice(6);
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
}

/** How refusals name the rules that made them: the fleet's policy, or a process's own floor. */
interface Wording {
  /** "… is in a range ${denies}". */
  denies: string;
  /** "… and ${allow} does not cover it". */
  allow: string;
  /** "the scheme x: is not one ${whole} allows (${schemes}: …)". */
  whole: string;
  schemes: string;
}

const POLICY_WORDING: Wording = {
  denies: 'the policy denies',
  allow: 'policy.allow',
  whole: 'the policy',
  schemes: 'policy.schemes',
};

const FLOOR_WORDING: Wording = {
  denies: 'the probe floor denies (MCP_FLEET_PROBE_DENY)',
  allow: 'the probe floor (MCP_FLEET_PROBE_ALLOW)',
  whole: 'the probe floor',
  schemes: 'MCP_FLEET_PROBE_SCHEMES',
};

/** No allow, no deny, http and https: public addresses only. The floor when none is given. */
export const PUBLIC_ONLY: TargetPolicyRanges = { allow: [], deny: [], schemes: DEFAULT_SCHEMES };

/** `allow public addresses and 127.0.0.0/8; deny none; schemes http, https`, for logs and start-up lines. */
export function describeRanges(ranges: TargetPolicyRanges): string {
  const allow = ranges.allow.length ? `public addresses and ${ranges.allow.join(', ')}` : 'public addresses only';
  const deny = ranges.deny.length ? ranges.deny.join(', ') : 'none';
  return `allow ${allow}; deny ${deny}; schemes ${(ranges.schemes ?? DEFAULT_SCHEMES).join(', ')}`;
}

export interface TargetPolicyOptions {
  /** These ranges are a process's own floor (refusals name it so); default: a fleet's policy. */
  floor?: boolean;
  /** Told of each address or scheme these ranges refuse, once a narrower policy let it through. */
  onRefused?: (reason: string) => void;
}

/** One set of ranges: what one policy (a fleet's, or a floor) lets through. */
class Rules {
  readonly allow: BlockList;
  readonly deny: BlockList;
  /** Allow entries that lie inside a link-local or metadata range: the only ones that open such addresses. */
  readonly allowMetadata: BlockList;
  readonly schemes: readonly string[];
  readonly words: Wording;
  readonly onRefused: ((reason: string) => void) | undefined;

  constructor(ranges: TargetPolicyRanges, opts: TargetPolicyOptions) {
    this.allow = blockList(ranges.allow);
    this.deny = blockList(ranges.deny);
    this.allowMetadata = blockList(
      ranges.allow.filter((cidr) => {
        const c = parseCidr(cidr);
        return (
          c !== undefined &&
          metadata.some(
            (m) => m.range.family === c.family && c.prefix >= m.range.prefix && m.list.check(c.address, c.family),
          )
        );
      }),
    );
    this.schemes = (ranges.schemes ?? DEFAULT_SCHEMES).map((s) => s.toLowerCase());
    this.words = opts.floor ? FLOOR_WORDING : POLICY_WORDING;
    this.onRefused = opts.onRefused;
  }

  refuses(address: string, family: 'ipv4' | 'ipv6'): string | undefined {
    const w = this.words;
    if (this.deny.check(address, family)) return `${address} is in a range ${w.denies}`;
    const meta = metadata.find((m) => m.list.check(address, family));
    if (meta && !this.allowMetadata.check(address, family))
      return special.check(address, family)
        ? `${address} is loopback, private or link-local and ${w.allow} does not name it (a link-local or cloud metadata address needs an allow entry inside ${meta.cidr})`
        : `${address} is a cloud metadata address and ${w.allow} does not name it (it needs an allow entry inside ${meta.cidr})`;
    if (meta) return undefined;
    if (special.check(address, family) && !this.allow.check(address, family))
      return `${address} is loopback, private or link-local and ${w.allow} does not cover it`;
    return undefined;
  }

  refusesScheme(scheme: string): string | undefined {
    if (this.schemes.includes(scheme)) return undefined;
    return `the scheme ${scheme}: is not one ${this.words.whole} allows (${this.words.schemes}: ${this.schemes.join(', ') || 'none'})`;
  }
}

export class TargetPolicy {
  /** Every set of ranges an address must pass, the narrowest (a job's) first: its refusal is the one reported. */
  readonly #rules: Rules[];

  constructor(ranges: TargetPolicyRanges, opts: TargetPolicyOptions = {}) {
    this.#rules = [new Rules(ranges, opts)];
  }

  /**
   * This policy narrowed by another's ranges (a job's, the fleet's): an address or scheme passes
   * only if both let it through. Used on a floor, it is how a job narrows it and never widens it.
   */
  narrow(ranges: TargetPolicyRanges): TargetPolicy {
    const narrowed = new TargetPolicy(ranges);
    narrowed.#rules.push(...this.#rules);
    return narrowed;
  }

  /** The first refusal among the rules; a rule that refuses what an earlier one let through is told. */
  #first(check: (rules: Rules) => string | undefined): string | undefined {
    for (const [i, rules] of this.#rules.entries()) {
      const refused = check(rules);
      if (refused === undefined) continue;
      if (i > 0) rules.onRefused?.(refused);
      return refused;
    }
    return undefined;
  }

  /** Why this address may not be dialled, or undefined when it may. */
  refuses(raw: string): string | undefined {
    const address = embeddedIPv4(raw.replace(/^\[|\]$/g, ''));
    const version = isIP(address);
    if (version === 0) return undefined;
    const family = version === 4 ? 'ipv4' : 'ipv6';
    return this.#first((rules) => rules.refuses(address, family));
  }

  /** Why a URL of this scheme (`https` or `https:`) may not be fetched, or undefined when it may. */
  refusesScheme(protocol: string): string | undefined {
    const scheme = protocol.replace(/:$/, '').toLowerCase();
    return this.#first((rules) => rules.refusesScheme(scheme));
  }

  /** Check a URL's scheme, and its host when it is an address literal (or `localhost`); host names are checked when dialled. */
  refusesUrl(url: URL): string | undefined {
    const scheme = this.refusesScheme(url.protocol);
    if (scheme) return scheme;
    const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
    if (host === 'localhost' || host.endsWith('.localhost')) return this.refuses('127.0.0.1');
    return this.refuses(host);
  }
}

/** Refused by policy. No `code`: the probe (exchange.ts) knows it by name, a `policy` reachability failure. */
export class PolicyRefusal extends Error {
  override readonly name = 'PolicyRefusal';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export interface DispatcherOptions {
  /**
   * The local address every connection is made from (an agent's `--source-address` on a multi-homed
   * host); the system's choice when unset. An IP address (net.isIP), else guardedDispatcher throws.
   */
  localAddress?: string | undefined;
}

/**
 * A dispatcher that refuses what the policy refuses; keep-alive and limits as the probe's default
 * dispatcher, names looked up through `dns` (the process's bounded lookups: dns.ts).
 */
export function guardedDispatcher(
  policy: TargetPolicy,
  dns: DnsLookups = systemDns,
  options: DispatcherOptions = {},
): Dispatcher {
  const { localAddress } = options;
  if (localAddress !== undefined && isIP(localAddress) === 0)
    throw new Error(
      `source address: an IP address, like 192.0.2.10 or 2001:db8::10, not ${JSON.stringify(localAddress)}`,
    );
  const lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dns.resolveAll(hostname, options, (err, addresses) => {
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
    factory: originPool,
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 10_000,
    maxHeaderSize: 64 * 1024,
    connect: (opts, callback) => {
      // Address literals never reach the lookup: check them here, and the scheme with them.
      const refused = policy.refusesScheme(opts.protocol) ?? policy.refuses(opts.hostname);
      if (refused) return callback(new PolicyRefusal(refused), null);
      // Undici's own localAddress option is overridden by the connect options it passes: set it here.
      connect(localAddress === undefined ? opts : { ...opts, localAddress }, callback);
    },
  });
}
