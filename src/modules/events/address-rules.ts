/**
 * Where webhooks may be sent (docs/reference.md, Webhooks; docs/adr/0024-webhook-outbox.md): a
 * webhook must not become a way into the operator's network. A URL is `https` (plain `http` only
 * when `WEBHOOK_ALLOW_HTTP_LOOPBACK` is on), without user information; its host, once resolved,
 * must have no address in a private, shared, link-local (cloud metadata services live there),
 * multicast, reserved or documentation range, nor loopback unless that setting is on. The check
 * is made on every attempt, by the lookup of the very connection that sends (`checkedLookup`), so
 * the socket connects to the address that was checked and a DNS answer that changes between a
 * check and the connection (DNS rebinding) cannot get past it. Redirects are never followed.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** The longest webhook URL accepted. */
export const WEBHOOK_URL_LENGTH_MAX = 2000;

/** Whether plain `http` and loopback receivers are allowed (`WEBHOOK_ALLOW_HTTP_LOOPBACK`, tests). */
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

/**
 * Ranges no webhook is sent to, whatever the settings (IANA special-purpose registries, RFC 6890).
 * `BlockList` checks an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) against the IPv4 ranges, so
 * writing an address as IPv6 does not get past them (and a rule on `::ffff:0:0/96` would refuse
 * every IPv4 address: test/unit/webhook-rules.test.ts).
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
  ['64:ff9b::', 96], // IPv4/IPv6 translation, likewise
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local, with the metadata address fd00:ec2::254
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Why `address` (an IP address) may not receive webhooks under `policy`; undefined when it may. */
export function refusalOfAddress(address: string, policy: AddressPolicy): string | undefined {
  const version = isIP(address);
  if (version === 0) return `${address} is not an IP address`;
  const type = version === 4 ? 'ipv4' : 'ipv6';
  if (LOOPBACK.check(address, type))
    return policy.allowHttpLoopback
      ? undefined
      : `${address} is a loopback address; webhooks are not sent to this machine`;
  if (BLOCKED.check(address, type))
    return `${address} is in a private, link-local, metadata or reserved range; webhooks are not sent there`;
  return undefined;
}

/** The host of a URL as the resolver and the rules see it: IPv6 literals without their brackets. */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Checks a webhook URL's form and, for an IP address written in it, the address: scheme,
 * length, no user information or fragment. Returns the URL; throws `AddressRefused` naming the
 * rule. Host names are checked when each attempt resolves them (`checkedLookup`).
 */
export function checkWebhookUrl(text: string, policy: AddressPolicy): URL {
  if (text.length > WEBHOOK_URL_LENGTH_MAX)
    throw new AddressRefused(`must be at most ${WEBHOOK_URL_LENGTH_MAX} characters long`);
  if (!URL.canParse(text)) throw new AddressRefused('must be an absolute URL');
  const url = new URL(text);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttpLoopback))
    throw new AddressRefused(
      policy.allowHttpLoopback ? 'must be an https:// or http:// URL' : 'must be an https:// URL',
    );
  if (url.username !== '' || url.password !== '')
    throw new AddressRefused('must not hold a user name or password');
  if (url.hash !== '') throw new AddressRefused('must not have a fragment');
  const host = hostOf(url);
  if (isIP(host) !== 0) {
    const refusal = refusalOfAddress(host, policy);
    if (refusal !== undefined) throw new AddressRefused(refusal);
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    if (!policy.allowHttpLoopback)
      throw new AddressRefused(`${host} is this machine; webhooks are not sent to it`);
  }
  return url;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for the connections that send webhooks: resolves the host, refuses it when any of
 * its addresses is refused (`AddressRefused`), and hands the connection only the checked
 * addresses, so it connects to what was checked.
 */
export function checkedLookup(policy: AddressPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    dnsLookup(hostname, { all: true, family }, (error, addresses) => {
      if (error !== null) {
        callback(error, []);
        return;
      }
      for (const { address } of addresses) {
        const refusal = refusalOfAddress(address, policy);
        if (refusal !== undefined) {
          callback(
            Object.assign(new AddressRefused(`${hostname}: ${refusal}`), { code: 'EADDRREFUSED' }),
            [],
          );
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

/** Refuses a URL whose host is an IP address the rules refuse (connections to IPs do no lookup). */
export function checkLiteralHost(url: URL, policy: AddressPolicy): void {
  const host = hostOf(url);
  if (isIP(host) === 0) return;
  const refusal = refusalOfAddress(host, policy);
  if (refusal !== undefined) throw new AddressRefused(refusal);
}
