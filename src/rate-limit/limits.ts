import { sha256Hex } from '../common/crypto.js';
import ipaddr from 'ipaddr.js';
import { tierDefinition, type RateLimitBucket } from '../common/tiers.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * What a limit counts by: the client address, the e-mail address in the body (sign-up, sign-in,
 * reset), the new address of an e-mail change, the SDK's app, the SDK's organization, or the
 * organization of the API key calling, the organization a dashboard caller acts in, or that
 * organization and the app the route names (`:appID`), so another organization naming the app
 * spends its own budget, never the app's.
 */
export type LimitSubject =
  | 'ip'
  | 'email'
  | 'newEmail'
  | 'app'
  | 'organization'
  | 'apiKeyOrganization'
  | 'callerOrganization'
  | 'callerOrganizationApp';

/** The parts of a request a limit reads; the access guard has resolved tenant and caller before. */
export interface LimitedRequest {
  readonly ip?: string;
  readonly body?: unknown;
  readonly params?: Readonly<Record<string, unknown>>;
  readonly tenant?: { readonly appId: string; readonly organizationId: string; readonly serviceTier: string };
  readonly auth?: {
    readonly organizationId: string | null;
    readonly caller: { readonly kind: string; readonly serviceTier?: string };
  };
}

export interface Limit {
  /** Requests in the window; for a plan's bucket, read from the plan of the organization counted. */
  readonly limit: number | { readonly plan: RateLimitBucket };
  readonly windowMs: number;
  readonly by: LimitSubject;
  /**
   * Only answers of this status spend the budget (a failed sign-in, a sign-up that was accepted and
   * mailed); it is checked before the request. Without it every request spends.
   */
  readonly spentBy?: number;
  /**
   * How a refusal reads: `rate_limited` (429 with Retry-After), or exactly a wrong password
   * (401 `invalid_credentials`), so throttling an account reveals nothing about it.
   */
  readonly refusal: 'rate_limited' | 'invalid_credentials';
  /** Whether every answer carries `X-RateLimit-Limit`, `-Remaining` and `-Reset` (Unix seconds). */
  readonly headers: boolean;
}

/**
 * Every limit of the service, by name (the name is the store's bucket and the @nestjs/throttler
 * throttler's name). A route declares the ones it is under with `@RateLimit(...)`; the decision
 * record docs/decisions/0021 has the same table. The interface document's limits are the plan
 * buckets (per organization and minute, with headers); the others protect credentials, mail and
 * the SDK's write surfaces.
 */
export const LIMITS = {
  /** Sign-ups from one client address: enough for a classroom, not for a mail cannon. */
  'register-ip': { limit: 20, windowMs: HOUR, by: 'ip', refusal: 'rate_limited', headers: false },
  /** Accepted sign-ups for one address: the 4th within an hour is refused and sends no mail. */
  'register-email': { limit: 3, windowMs: HOUR, by: 'email', spentBy: 202, refusal: 'rate_limited', headers: false },
  /** Reset requests and reset attempts from one client address. */
  'ip-password-reset': { limit: 5, windowMs: MINUTE, by: 'ip', refusal: 'rate_limited', headers: true },
  /** Reset mails for one address. */
  'forgot-password-email': {
    limit: 3,
    windowMs: HOUR,
    by: 'email',
    spentBy: 200,
    refusal: 'rate_limited',
    headers: false,
  },
  /** Confirmation mails to one new address. */
  'change-email-address': {
    limit: 3,
    windowMs: HOUR,
    by: 'newEmail',
    spentBy: 200,
    refusal: 'rate_limited',
    headers: false,
  },
  /** SSO discovery and starts (each start stores an attempt) from one client address. */
  'sso-ip': { limit: 30, windowMs: MINUTE, by: 'ip', refusal: 'rate_limited', headers: false },
  /**
   * Command-line sign-in starts from one client address: each stores a session row (kept 30 days
   * to answer its poll as expired), so an anonymous script cannot fill the table.
   */
  'cli-session-ip': { limit: 30, windowMs: MINUTE, by: 'ip', refusal: 'rate_limited', headers: false },
  /**
   * Command-line sign-in polls from one client address: a client polls every second at most, so
   * two sign-ins at once from one address stay well inside; a script probing session ids does not.
   */
  'cli-session-poll-ip': { limit: 120, windowMs: MINUTE, by: 'ip', refusal: 'rate_limited', headers: false },
  /** SSO domain verifications of one organization: each is a DNS lookup (up to two 3 s tries). */
  'sso-domain-verify': { limit: 100, windowMs: HOUR, by: 'callerOrganization', refusal: 'rate_limited', headers: true },
  /**
   * SDK feedback writes (tickets, messages, feature requests, votes) from one client address:
   * generous, since many devices share a carrier's address, but a script inventing voter ids stops.
   */
  'sdk-feedback-client': { limit: 60, windowMs: MINUTE, by: 'ip', refusal: 'rate_limited', headers: false },
  /** SDK feedback writes of one app, whatever the addresses. */
  'sdk-feedback-app': { limit: 600, windowMs: MINUTE, by: 'app', refusal: 'rate_limited', headers: false },
  /** Challenges from one client address, before the organization's bucket. */
  'ip-challenge': { limit: 120, windowMs: MINUTE, by: 'ip', refusal: 'rate_limited', headers: true },
  /** Validates and refreshes from one client address, before the organization's bucket. */
  'ip-validate': { limit: 60, windowMs: MINUTE, by: 'ip', refusal: 'rate_limited', headers: true },
  /**
   * Debug-token creations and revocations (decision 0065): each revoked token an organization
   * exchanged is held by every instance's deny set for up to 31 days, so how many a tenant makes
   * is bounded. Far above a CI that creates a token per pipeline run.
   */
  'debug-token-create-app': {
    limit: 60,
    windowMs: HOUR,
    by: 'callerOrganizationApp',
    refusal: 'rate_limited',
    headers: false,
  },
  'debug-token-create-organization': {
    limit: 300,
    windowMs: HOUR,
    by: 'callerOrganization',
    refusal: 'rate_limited',
    headers: false,
  },
  'debug-token-revoke-app': {
    limit: 60,
    windowMs: HOUR,
    by: 'callerOrganizationApp',
    refusal: 'rate_limited',
    headers: false,
  },
  'debug-token-revoke-organization': {
    limit: 300,
    windowMs: HOUR,
    by: 'callerOrganization',
    refusal: 'rate_limited',
    headers: false,
  },
  /** The plan buckets of the interface document, per organization; declared last so their headers win. */
  challenge: {
    limit: { plan: 'challenge' },
    windowMs: MINUTE,
    by: 'organization',
    refusal: 'rate_limited',
    headers: true,
  },
  attest: { limit: { plan: 'attest' }, windowMs: MINUTE, by: 'organization', refusal: 'rate_limited', headers: true },
  flags: { limit: { plan: 'flags' }, windowMs: MINUTE, by: 'organization', refusal: 'rate_limited', headers: true },
  apikey: {
    limit: { plan: 'apikey' },
    windowMs: MINUTE,
    by: 'apiKeyOrganization',
    refusal: 'rate_limited',
    headers: true,
  },
} as const satisfies Record<string, Limit>;

export type LimitName = keyof typeof LIMITS;

export const LIMIT_NAMES = Object.keys(LIMITS) as LimitName[];

/**
 * Whom a request counts as under a limit, or null when there is nothing to count by (no e-mail
 * in the body: validation refuses the request anyway; not an API key: the key bucket does not apply).
 */
export function limitSubject(limit: Limit, request: LimitedRequest): string | null {
  const body = request.body as Record<string, unknown> | undefined;
  switch (limit.by) {
    case 'ip':
      return ipSubject(request.ip);
    case 'email':
      return emailSubject(body?.email);
    case 'newEmail':
      return emailSubject(body?.new_email);
    case 'app':
      return request.tenant?.appId ?? null;
    case 'organization':
      return request.tenant?.organizationId ?? null;
    case 'apiKeyOrganization':
      return request.auth?.caller.kind === 'apiKey' ? request.auth.organizationId : null;
    case 'callerOrganization':
      return request.auth?.organizationId ?? null;
    case 'callerOrganizationApp': {
      const appId = request.params?.appID;
      return request.auth?.organizationId && typeof appId === 'string'
        ? `${request.auth.organizationId}:${appId}`
        : null;
    }
  }
}

/** The number of requests a limit allows this request's subject. */
export function limitOf(limit: Limit, request: LimitedRequest): number {
  if (typeof limit.limit === 'number') return limit.limit;
  const tier = limit.by === 'apiKeyOrganization' ? request.auth?.caller.serviceTier : request.tenant?.serviceTier;
  return tierDefinition(tier ?? 'free').rates[limit.limit.plan];
}

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

/** An address counts by the SHA-256 of its trimmed lower-case form: the same mailbox, however typed. */
export function emailSubject(value: unknown): string | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  return sha256Hex(value.trim().toLowerCase());
}
