import ipaddr from 'ipaddr.js';

export interface PerIpLimit {
  /** Bucket name for `RateLimitService.consume`; distinct from the tenant buckets. */
  readonly bucket: string;
  /** Requests per minute per client address. */
  readonly limit: number;
}

/**
 * Per-IP protection applied before the tenant limit (interface document, "Limits → Request rate").
 * The document leaves the numbers "not shown"; these are the project's documented values and
 * docs/decisions.md must state the same ones. Login and password reset are low because they guard
 * credentials and mail sending; challenge and validate are high enough for many devices behind
 * one carrier NAT, with the per-organization limit doing the real metering.
 */
export const PER_IP_LIMITS = {
  login: { bucket: 'ip-login', limit: 10 },
  passwordReset: { bucket: 'ip-password-reset', limit: 5 },
  challenge: { bucket: 'ip-challenge', limit: 120 },
  validate: { bucket: 'ip-validate', limit: 60 },
} as const satisfies Record<string, PerIpLimit>;

export type PerIpLimitName = keyof typeof PER_IP_LIMITS;

/**
 * The subject a client address is limited under. IPv4-mapped IPv6 counts as the IPv4 address, and
 * an IPv6 client counts by its /64, since one subscriber usually holds a whole /64 and could
 * otherwise rotate addresses to multiply its budget.
 */
export function ipSubject(ip: string | undefined): string {
  if (ip === undefined || !ipaddr.isValid(ip)) return 'unknown';
  let address = ipaddr.parse(ip);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address();
  }
  if (address.kind() === 'ipv4') return address.toString();
  const prefix = (address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${prefix.join(':')}::/64`;
}
