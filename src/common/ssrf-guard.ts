import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Outbound requests to addresses chosen by customers (webhooks, external claims) must not
 * reach the service's own network. Every resolved address is checked, not only the first,
 * because the connection may use any of them.
 */

export type UnsafeUrlReason = 'invalid_url' | 'scheme_not_allowed' | 'unresolvable_host' | 'non_public_address';

export class UnsafeUrlError extends Error {
  override readonly name = 'UnsafeUrlError';

  constructor(
    readonly reason: UnsafeUrlReason,
    message: string,
  ) {
    super(message);
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

/**
 * True only for globally routable unicast addresses. Anything ipaddr.js classifies otherwise
 * (private, loopback, link-local, unique-local, multicast, CGNAT, NAT64, 6to4, documentation...)
 * is refused; IPv4-mapped IPv6 addresses are judged by the IPv4 address they carry.
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  let address = ipaddr.parse(ip);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address();
  }
  return address.range() === 'unicast';
}

function parseUrl(url: string, allowPrivateNetworks: boolean): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UnsafeUrlError('invalid_url', 'URL is not valid');
  }
  const schemes = allowPrivateNetworks ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol)) {
    throw new UnsafeUrlError('scheme_not_allowed', `URL must use ${allowPrivateNetworks ? 'http or https' : 'https'}`);
  }
  return parsed;
}

async function resolveHost(hostname: string): Promise<ResolvedAddress[]> {
  // URL keeps the brackets of an IPv6 literal; the resolver wants the bare address.
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  try {
    const addresses = await lookup(host, { all: true });
    return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
  } catch {
    throw new UnsafeUrlError('unresolvable_host', `host ${host} cannot be resolved`);
  }
}

/**
 * Resolves the URL's host and returns the address to connect to, or throws UnsafeUrlError.
 * The message never names the resolved address, so the check cannot be used to map
 * internal DNS.
 */
export async function assertPublicUrl(url: string, options: SsrfGuardOptions): Promise<ResolvedAddress> {
  const parsed = parseUrl(url, options.allowPrivateNetworks);
  const addresses = await resolveHost(parsed.hostname);
  if (addresses.length === 0) throw new UnsafeUrlError('unresolvable_host', `host ${parsed.hostname} has no address`);
  if (!options.allowPrivateNetworks && !addresses.every(({ address }) => isPublicAddress(address))) {
    throw new UnsafeUrlError('non_public_address', `host ${parsed.hostname} resolves to a non-public address`);
  }
  return addresses[0];
}
