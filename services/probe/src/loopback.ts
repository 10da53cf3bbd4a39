// Which addresses only this machine reaches: the one loopback rule, used by the test loopback guard,
// the auth-off listener and Host checks (store's request guard) and the CLI's NATS warning.
import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
// IPv6 has one loopback address, ::1 (RFC 4291 §2.5.3). An IPv4-mapped address (::ffff:127.0.0.1,
// ::ffff:7f00:1) is how a dual-stack socket names an IPv4 peer, so ::ffff:127.0.0.0/104 is loopback
// too: BlockList checks mapped addresses against the IPv4 subnet above. Other IPv6 forms that embed
// 127.x (::127.0.0.1, NAT64's 64:ff9b::7f00:1) are not: they do not reach this machine.
LOOPBACK.addAddress('::1', 'ipv6');

/** 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104; brackets and an IPv6 zone (`%lo`) are ignored; names are not addresses. */
export function isLoopbackAddress(raw: string): boolean {
  const address = raw.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const version = isIP(address);
  if (version === 0) return false;
  return LOOPBACK.check(address, version === 4 ? 'ipv4' : 'ipv6');
}
