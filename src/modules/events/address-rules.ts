/**
 * Where webhooks may be sent (docs/reference.md, Webhooks; docs/adr/0024-webhook-outbox.md): a
 * webhook must not become a way into the operator's network. A URL is `https`, without user
 * information or fragment; its host must be no name of this machine (`localhost` and its kin) and,
 * once resolved, have no address in a loopback, private, shared, link-local (cloud metadata
 * services live there), multicast, reserved or documentation range, in whatever form the address
 * is written: an IPv4 address inside an IPv6 one (IPv4-mapped, IPv4-compatible) is judged as the
 * IPv4 address it carries, and the IPv6 ranges that lead to IPv4 through a tunnel or a translator
 * (6to4, Teredo, NAT64) are refused outright. `WEBHOOK_ALLOW_HTTP_LOOPBACK` (tests, development)
 * allows loopback receivers, and plain `http` to them only; it never allows another range nor
 * plain `http` to any other host. The check is made when a subscription is made and again on
 * every attempt, by the lookup of the very connection that sends (`checkedLookup`), so the socket
 * connects to the address that was checked and a DNS answer that changes between a check and the
 * connection (DNS rebinding) cannot get past it. Redirects are never followed.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** The longest webhook URL accepted. */
export const WEBHOOK_URL_LENGTH_MAX = 2000;

/** Whether loopback receivers, and plain `http` to them, are allowed (`WEBHOOK_ALLOW_HTTP_LOOPBACK`, tests). */
export interface AddressPolicy {
  allowHttpLoopback: boolean;
}

/** An address or URL the rules refuse; the message says which rule. */
export class AddressRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AddressRefused';
  }
}

/** The policy without the loopback allowance, for forms of an address that never reach this machine. */
const NO_LOOPBACK: AddressPolicy = { allowHttpLoopback: false };

/**
 * Ranges no webhook is sent to, whatever the settings (IANA special-purpose registries, RFC 6890).
 * IPv6 addresses that carry an IPv4 address are taken apart before these lists are consulted
 * (`refusalOfIpv6`): `BlockList` would check an IPv4-mapped address against the IPv4 ranges by
 * itself, but knows nothing of the IPv4-compatible, 6to4, Teredo or NAT64 forms.
 */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // shared address space (RFC 6598), where some metadata services live
  ['169.254.0.0', 16], // link-local, with the cloud metadata address 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments: benchmarking, ORCHID and the like, no web host
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['fc00::', 7], // unique local, with the metadata address fd00:ec2::254
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local, deprecated (RFC 3879) but still routed inside some networks
  ['ff00::', 8], // multicast
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv6');

/**
 * IANA allocates global unicast IPv6 addresses from `2000::/3` only; the rest of the space is
 * reserved by the IETF (IANA IPv6 Address Space registry), so an address outside it is no
 * receiver on the Internet, whatever a later special-purpose range might make of it.
 */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

const LOOPBACK_IPV4 = new BlockList();
LOOPBACK_IPV4.addSubnet('127.0.0.0', 8, 'ipv4');

const IPV6_BITS = 128;
const IPV6_GROUP_BITS = 16n;
const IPV6_GROUPS = 8;
const IPV4_BITS = 32;
const IPV4_MASK = 0xffff_ffffn;

/** The IPv6 unspecified address `::` as a 128-bit value. */
const IPV6_UNSPECIFIED = 0n;
/** The IPv6 loopback address `::1` as a 128-bit value. */
const IPV6_LOOPBACK = 1n;
/** `::ffff:0:0/96`, IPv4-mapped (RFC 4291, section 2.5.5.2): the low 32 bits are the IPv4 address. */
const IPV4_MAPPED_PREFIX = 0xffffn;
/** `::/96`, IPv4-compatible (RFC 4291, section 2.5.5.1, deprecated): the low 32 bits are the IPv4 address. */
const IPV4_COMPATIBLE_PREFIX = 0n;

/**
 * IPv6 ranges whose packets a tunnel or a translator carries on to an IPv4 address written in the
 * IPv6 one. Each is refused outright rather than judged by the IPv4 address it carries, as the
 * well-kept filters do (ipaddr.js names each of these ranges, and request-filtering-agent and
 * ssrf-req-filter refuse every range that ipaddr.js does not call `unicast`):
 * - 6to4 (`2002::/16`, RFC 3056) carries the IPv4 address in bits 16-47, but where the packet
 *   leaves IPv6 is up to whichever relay takes it, and 6to4 is deprecated (RFC 7526): no receiver
 *   needs it.
 * - Teredo (`2001::/32`, RFC 4380) carries a server's address and the client's address XORed
 *   with ones (obfuscated), behind the client's NAT; the relay then addresses whatever that
 *   decodes to. A webhook receiver has no business behind a Teredo tunnel.
 * - NAT64 (`64:ff9b::/96`, RFC 6052, and the local-use `64:ff9b:1::/48`, RFC 8215): the
 *   operator's translator turns the address into an IPv4 one inside the operator's network. In
 *   the local-use prefix the IPv4 address may sit at any of the RFC 6052 prefix lengths, so it
 *   cannot be read back; and `64:ff9b::/96` is refused alike, so that both behave the same.
 * - IPv4-translated (`::ffff:0:0:0/96`, RFC 2765/6145), what a stateless translator makes of an
 *   IPv4 host.
 */
const TRANSLATED: readonly { name: string; network: bigint; prefixBits: number }[] = [
  { name: '6to4 (2002::/16)', network: ipv6Value('2002::'), prefixBits: 16 },
  { name: 'Teredo (2001::/32)', network: ipv6Value('2001::'), prefixBits: 32 },
  { name: 'NAT64 (64:ff9b::/96)', network: ipv6Value('64:ff9b::'), prefixBits: 96 },
  { name: 'local-use NAT64 (64:ff9b:1::/48)', network: ipv6Value('64:ff9b:1::'), prefixBits: 48 },
  { name: 'IPv4-translated (::ffff:0:0:0/96)', network: ipv6Value('::ffff:0:0:0'), prefixBits: 96 },
];

/**
 * Names that mean this machine: `localhost` and every name under it (RFC 6761, section 6.3), and
 * the loopback names that Debian (`ip6-localhost`, `ip6-loopback`) and Red Hat
 * (`localhost.localdomain`, `localhost4`, `localhost6` and their `.localdomain4/6` forms) write
 * into `/etc/hosts`. They resolve to loopback anyway, where the resolved address is refused; naming
 * them here refuses them when the subscription is made, before any resolution.
 */
const LOCALHOST_NAMES = new Set([
  'localhost',
  'localhost.localdomain',
  'localhost4',
  'localhost4.localdomain4',
  'localhost6',
  'localhost6.localdomain6',
  'ip6-localhost',
  'ip6-loopback',
]);

/** Whether `host` (a host name) names this machine, in any case and with or without the root's trailing dot. */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, '');
  return LOCALHOST_NAMES.has(name) || name.endsWith('.localhost');
}

/** The 128-bit value of `address`, an IPv6 address without zone, in any of its written forms (RFC 4291, section 2.2). */
function ipv6Value(address: string): bigint {
  let text = address;
  // The last 32 bits may be written as a dotted IPv4 address (`::ffff:127.0.0.1`).
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const ipv4 = ipv4Value(dotted[1]);
    text = `${text.slice(0, dotted.index + 1)}${(ipv4 >> 16n).toString(16)}:${(ipv4 & 0xffffn).toString(16)}`;
  }
  const [left = '', right] = text.split('::');
  const groupsOf = (part: string | undefined) => (part === undefined || part === '' ? [] : part.split(':'));
  const head = groupsOf(left);
  const tail = groupsOf(right);
  // `::` stands for as many zero groups as the written ones leave of eight; without it there are eight.
  const groups = [
    ...head,
    ...new Array<string>(Math.max(0, IPV6_GROUPS - head.length - tail.length)).fill('0'),
    ...tail,
  ];
  return groups.reduce((value, group) => (value << IPV6_GROUP_BITS) | BigInt(Number.parseInt(group, 16)), 0n);
}

/** The 32-bit value of `address`, a dotted IPv4 address. */
function ipv4Value(address: string): bigint {
  return address.split('.').reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
}

/** The dotted form of a 32-bit IPv4 value. */
function ipv4Text(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

/** Whether `value` lies in `network`/`prefixBits`. */
function inPrefix(value: bigint, network: bigint, prefixBits: number): boolean {
  const shift = BigInt(IPV6_BITS - prefixBits);
  return value >> shift === network >> shift;
}

/** Why `address` (a dotted IPv4 address) may not receive webhooks under `policy`; undefined when it may. */
function refusalOfIpv4(address: string, policy: AddressPolicy): string | undefined {
  if (LOOPBACK_IPV4.check(address, 'ipv4'))
    return policy.allowHttpLoopback
      ? undefined
      : `${address} is a loopback address; webhooks are not sent to this machine`;
  if (BLOCKED.check(address, 'ipv4'))
    return `${address} is in a private, link-local, metadata or reserved range; webhooks are not sent there`;
  return undefined;
}

/** Why `address` (an IPv6 address without zone) may not receive webhooks under `policy`; undefined when it may. */
function refusalOfIpv6(address: string, policy: AddressPolicy): string | undefined {
  const value = ipv6Value(address);
  if (value === IPV6_LOOPBACK)
    return policy.allowHttpLoopback
      ? undefined
      : `${address} is a loopback address; webhooks are not sent to this machine`;
  const embedded = ipv4Text(value & IPV4_MASK);
  const prefix = value >> BigInt(IPV4_BITS);
  if (prefix === IPV4_MAPPED_PREFIX) {
    // A connection to `::ffff:127.0.0.1` reaches 127.0.0.1 itself (a dual-stack socket sends it
    // as IPv4), so the mapped form is judged exactly as the IPv4 address, loopback allowance too.
    const refusal = refusalOfIpv4(embedded, policy);
    return refusal === undefined ? undefined : `${address} is ${embedded} written as IPv6: ${refusal}`;
  }
  if (prefix === IPV4_COMPATIBLE_PREFIX && value !== IPV6_UNSPECIFIED) {
    // The deprecated IPv4-compatible form is judged by the IPv4 address it carries too, but never
    // as loopback: a connection to `::127.0.0.1` does not reach this machine's loopback (Linux
    // answers EHOSTUNREACH), so the loopback allowance has nothing to allow here.
    const refusal = refusalOfIpv4(embedded, NO_LOOPBACK);
    return refusal === undefined
      ? undefined
      : `${address} is ${embedded} written as IPv4-compatible IPv6: ${refusal}`;
  }
  for (const range of TRANSLATED)
    if (inPrefix(value, range.network, range.prefixBits))
      return `${address} is in the ${range.name} range, which leads to an IPv4 address through a tunnel or a translator; webhooks are not sent there`;
  if (BLOCKED.check(address, 'ipv6'))
    return `${address} is in a private, link-local, metadata or reserved range; webhooks are not sent there`;
  if (!GLOBAL_UNICAST.check(address, 'ipv6'))
    return `${address} is outside the global unicast range 2000::/3, which is reserved; webhooks are not sent there`;
  return undefined;
}

/**
 * Why `address` (an IP address, as a resolver answers or a URL writes it) may not receive
 * webhooks under `policy`; undefined when it may. Loopback (`127.0.0.0/8`, `::1`, and
 * `::ffff:127.0.0.0/104`) passes only with `policy.allowHttpLoopback`; every other refused range
 * is refused whatever the policy.
 */
export function refusalOfAddress(address: string, policy: AddressPolicy): string | undefined {
  const version = isIP(address);
  if (version === 0) return `${address} is not an IP address`;
  if (version === 4) return refusalOfIpv4(address, policy);
  // A zone (`fe80::1%eth0`) names a link of this machine, which only scoped (link-local)
  // addresses use: no receiver on the Internet has one.
  if (address.includes('%'))
    return `${address} has a zone, which only link-local addresses of this machine use; webhooks are not sent there`;
  return refusalOfIpv6(address, policy);
}

/** Whether `address` (an IP address) is loopback: `127.0.0.0/8`, `::1`, or loopback IPv4 written IPv4-mapped. */
function isLoopbackAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return LOOPBACK_IPV4.check(address, 'ipv4');
  if (version !== 6 || address.includes('%')) return false;
  const value = ipv6Value(address);
  return (
    value === IPV6_LOOPBACK ||
    (value >> BigInt(IPV4_BITS) === IPV4_MAPPED_PREFIX &&
      LOOPBACK_IPV4.check(ipv4Text(value & IPV4_MASK), 'ipv4'))
  );
}

/** The host of a URL as the resolver and the rules see it: IPv6 literals without their brackets. */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** The refusal of a name of this machine. */
function localhostRefusal(host: string): string {
  return `${host} names this machine (loopback); webhooks are not sent to it`;
}

/** The refusal of a scheme: `https`, or plain `http` to this machine only with the allowance. */
function schemeRefusal(policy: AddressPolicy): AddressRefused {
  return new AddressRefused(
    policy.allowHttpLoopback
      ? 'must be an https:// URL (plain http:// only to this machine: a loopback address or localhost)'
      : 'must be an https:// URL',
  );
}

/** Throws `AddressRefused` when `host`, an IP address, may not receive webhooks under `policy`. */
function checkAddressHost(host: string, policy: AddressPolicy): void {
  const refusal = refusalOfAddress(host, policy);
  if (refusal !== undefined) throw new AddressRefused(refusal);
}

/**
 * Checks a webhook URL when a subscription is made or changed, in this order: its length, that it
 * is absolute, no user information, no fragment; the host (an IP address by `refusalOfAddress`, a
 * name of this machine only with the loopback allowance); the scheme (`https`, or plain `http` to
 * a loopback address or a name of this machine with the allowance). The host comes before the
 * scheme so that a URL to this machine is refused as such whatever its scheme. Returns the URL as
 * the WHATWG parser normalises it (an IPv4 address written in decimal, octal or hex is dotted,
 * IPv6 is compressed, the host is lower case); throws `AddressRefused` naming the rule. The
 * addresses of a host name are checked when each attempt resolves it (`checkedLookup`).
 */
export function checkWebhookUrl(text: string, policy: AddressPolicy): URL {
  if (text.length > WEBHOOK_URL_LENGTH_MAX)
    throw new AddressRefused(`must be at most ${WEBHOOK_URL_LENGTH_MAX} characters long`);
  if (!URL.canParse(text)) throw new AddressRefused('must be an absolute URL');
  const url = new URL(text);
  if (url.username !== '' || url.password !== '')
    throw new AddressRefused('must not hold a user name or password');
  if (url.hash !== '') throw new AddressRefused('must not have a fragment');
  const host = hostOf(url);
  const address = isIP(host) !== 0;
  if (address) checkAddressHost(host, policy);
  else if (isLocalhostName(host) && !policy.allowHttpLoopback)
    throw new AddressRefused(localhostRefusal(host));
  if (url.protocol === 'https:') return url;
  const loopbackHost = address ? isLoopbackAddress(host) : isLocalhostName(host);
  if (url.protocol === 'http:' && policy.allowHttpLoopback && loopbackHost) return url;
  throw schemeRefusal(policy);
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** An `AddressRefused` as a connection's lookup reports it; the sender reads the code. */
function lookupRefusal(message: string): AddressRefused & { code: string } {
  return Object.assign(new AddressRefused(message), { code: 'EADDRREFUSED' });
}

/** How a host name is resolved: `dns.lookup` with `all`, or a stand-in that answers chosen addresses (tests). */
export type Resolver = (
  hostname: string,
  options: { all: true; family: number },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for the connections that send webhooks: refuses a name of this machine without the
 * loopback allowance, resolves the host (`resolve`, the system's resolver unless a test passes
 * another), refuses it when any of its addresses is refused (`AddressRefused`, code
 * `EADDRREFUSED`) or, for a name of this machine, is not loopback, and hands the connection only
 * the checked addresses, so it connects to what was checked.
 */
export function checkedLookup(policy: AddressPolicy, resolve: Resolver = dnsLookup) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const localhost = isLocalhostName(hostname);
    if (localhost && !policy.allowHttpLoopback) {
      // A lookup answers asynchronously, as the connection that called it expects.
      process.nextTick(() => callback(lookupRefusal(localhostRefusal(hostname)), []));
      return;
    }
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    resolve(hostname, { all: true, family }, (error, addresses) => {
      if (error !== null) {
        callback(error, []);
        return;
      }
      for (const { address } of addresses) {
        const refusal =
          refusalOfAddress(address, policy) ??
          (localhost && !isLoopbackAddress(address)
            ? `${address} is not a loopback address, yet the name is one of this machine's`
            : undefined);
        if (refusal !== undefined) {
          callback(lookupRefusal(`${hostname}: ${refusal}`), []);
          return;
        }
      }
      const first = addresses[0];
      if (first === undefined) {
        callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        return;
      }
      if (options.all === true) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

/**
 * Refuses, before an attempt connects, what the connection's lookup cannot see: an IP address
 * written in the URL (a connection to an address does no lookup), and a scheme the rules refuse,
 * such as plain `http` to a host that is not this machine, stored under other settings or before
 * the rule. A name of this machine is left to the lookup (`checkedLookup`), which refuses it
 * without the loopback allowance and otherwise connects only to its loopback addresses. Throws
 * `AddressRefused` naming the rule.
 */
export function checkLiteralHost(url: URL, policy: AddressPolicy): void {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw schemeRefusal(policy);
  const host = hostOf(url);
  if (isIP(host) !== 0) {
    checkAddressHost(host, policy);
    if (url.protocol === 'http:' && !isLoopbackAddress(host)) throw schemeRefusal(policy);
  } else if (url.protocol === 'http:' && !isLocalhostName(host)) throw schemeRefusal(policy);
}
