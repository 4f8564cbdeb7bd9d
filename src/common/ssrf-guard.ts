import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Outbound requests to addresses chosen by customers (webhooks, external claims) must not
 * reach the service's own network. Every resolved address is checked, not only the first,
 * because the connection may use any of them.
 */

export type UnsafeUrlReason = 'invalid_url' | 'scheme_not_allowed' | 'unresolvable_host' | 'non_public_address';

/**
 * Every refusal says the same sentence, whatever the reason (kept in `reason` for logs), so the
 * check cannot be used to learn which internal host names resolve or to what.
 */
export function refusedUrlMessage(allowPrivateNetworks: boolean): string {
  return allowPrivateNetworks
    ? 'URL must be an http or https URL whose host resolves'
    : 'URL must be an https URL of a publicly reachable host';
}

export class UnsafeUrlError extends Error {
  override readonly name = 'UnsafeUrlError';

  constructor(
    readonly reason: UnsafeUrlReason,
    allowPrivateNetworks = false,
  ) {
    super(refusedUrlMessage(allowPrivateNetworks));
  }
}

export interface SsrfGuardOptions {
  /** For local development and tests: admits private addresses and plain http. */
  allowPrivateNetworks: boolean;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** RFC 8215's local-use NAT64 prefix, which ipaddr.js does not classify. */
const LOCAL_NAT64 = ipaddr.parseCIDR('64:ff9b:1::/48');

/**
 * True only for globally routable unicast addresses. Anything ipaddr.js classifies otherwise
 * (private, loopback, link-local, unique-local, multicast, CGNAT, documentation, and the IPv6
 * forms that carry an IPv4 address: NAT64, 6to4, Teredo) is refused. IPv4-mapped
 * (`::ffff:a.b.c.d`) and IPv4-compatible (`::a.b.c.d`, deprecated but still routed by some
 * stacks) addresses are judged by the IPv4 address they carry, so `[::127.0.0.1]` and
 * `[::a9fe:a9fe]` (169.254.169.254) are refused.
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const address = ipaddr.parse(ip);
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) return embedded.range() === 'unicast';
  return v6.range() === 'unicast' && !v6.match(LOCAL_NAT64);
}

/** The IPv4 address of an IPv4-mapped or IPv4-compatible IPv6 address. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const [a, b, c, d, e, f, g, h] = address.parts;
  const compatible = a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0 && (g !== 0 || h > 1);
  const mapped = a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0xffff;
  if (!compatible && !mapped) return null;
  return new ipaddr.IPv4([g >> 8, g & 0xff, h >> 8, h & 0xff]);
}

/** The URL, when it parses and uses an allowed scheme (https; http too with private networks allowed). */
export function parseOutboundUrl(url: string, allowPrivateNetworks: boolean): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UnsafeUrlError('invalid_url', allowPrivateNetworks);
  }
  const schemes = allowPrivateNetworks ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol)) throw new UnsafeUrlError('scheme_not_allowed', allowPrivateNetworks);
  return parsed;
}

async function resolveHost(hostname: string): Promise<ResolvedAddress[]> {
  // URL keeps the brackets of an IPv6 literal; the resolver wants the bare address.
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  try {
    const addresses = await lookup(host, { all: true });
    return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
  } catch {
    throw new UnsafeUrlError('unresolvable_host');
  }
}

/**
 * Resolves the URL's host and returns the address to connect to, or throws UnsafeUrlError with
 * the one refusal message, so the check cannot be used to map internal DNS.
 */
export async function assertPublicUrl(url: string, options: SsrfGuardOptions): Promise<ResolvedAddress> {
  const parsed = parseOutboundUrl(url, options.allowPrivateNetworks);
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolveHost(parsed.hostname);
  } catch (error) {
    throw error instanceof UnsafeUrlError ? new UnsafeUrlError(error.reason, options.allowPrivateNetworks) : error;
  }
  if (addresses.length === 0) throw new UnsafeUrlError('unresolvable_host', options.allowPrivateNetworks);
  if (!options.allowPrivateNetworks && !addresses.every(({ address }) => isPublicAddress(address))) {
    throw new UnsafeUrlError('non_public_address');
  }
  return addresses[0];
}

/**
 * For code that connects itself (webhook delivery, OpenID discovery and token calls): the URL
 * when its scheme is allowed and, for an address literal (connected to without a lookup), the
 * address is public. Host names are judged at connection time by `guardedLookup`.
 */
export function checkedOutboundUrl(raw: string, allowPrivateNetworks: boolean): URL {
  const url = parseOutboundUrl(raw, allowPrivateNetworks);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) && !allowPrivateNetworks && !isPublicAddress(host)) throw new UnsafeUrlError('non_public_address');
  return url;
}

/**
 * A `lookup` for http(s).request that resolves like the system resolver but fails when any
 * address of the host is not public, so the rule applies to the address actually connected to
 * and DNS rebinding between a check and the connection cannot slip through.
 */
export function guardedLookup(allowPrivateNetworks: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(new UnsafeUrlError('unresolvable_host', allowPrivateNetworks), '', 0);
      if (!addresses.length) return callback(new UnsafeUrlError('unresolvable_host', allowPrivateNetworks), '', 0);
      if (!allowPrivateNetworks && !addresses.every(({ address }) => isPublicAddress(address))) {
        return callback(new UnsafeUrlError('non_public_address'), '', 0);
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
