const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Whom a route limit counts: the client address, the e-mail address in the body, or the SDK's app. */
export type LimitSubject = 'ip' | 'email' | 'newEmail' | 'app';

export interface RouteLimit {
  readonly limit: number;
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
}

/**
 * Limits declared on routes with `@RateLimit(...)` and enforced by `RouteRateLimitGuard` over the
 * sliding-window store. E-mail addresses are counted by their SHA-256, never stored in the clear.
 */
export const ROUTE_LIMITS = {
  /** Sign-ups from one client address: enough for a classroom, not for a mail cannon. */
  'register-ip': { limit: 20, windowMs: HOUR, by: 'ip', refusal: 'rate_limited' },
  /** Accepted sign-ups for one address: the 4th within an hour is refused and sends no mail. */
  'register-email': { limit: 3, windowMs: HOUR, by: 'email', spentBy: 202, refusal: 'rate_limited' },
  /** Reset mails for one address. */
  'forgot-password-email': { limit: 3, windowMs: HOUR, by: 'email', spentBy: 200, refusal: 'rate_limited' },
  /** Confirmation mails to one new address. */
  'change-email-address': { limit: 3, windowMs: HOUR, by: 'newEmail', spentBy: 200, refusal: 'rate_limited' },
  /**
   * SDK feedback writes (tickets, messages, feature requests, votes) from one client address:
   * generous, since many devices share a carrier's address, but a script inventing voter ids stops.
   */
  'sdk-feedback-client': { limit: 60, windowMs: MINUTE, by: 'ip', refusal: 'rate_limited' },
  /** SDK feedback writes of one app, whatever the addresses. */
  'sdk-feedback-app': { limit: 600, windowMs: MINUTE, by: 'app', refusal: 'rate_limited' },
  /** Wrong passwords for one account; successful sign-ins spend nothing. */
  'login-failures-account': {
    limit: 10,
    windowMs: 15 * MINUTE,
    by: 'email',
    spentBy: 401,
    refusal: 'invalid_credentials',
  },
  /** Wrong passwords from one client address, across accounts (credential stuffing). */
  'login-failures-ip': { limit: 30, windowMs: 15 * MINUTE, by: 'ip', spentBy: 401, refusal: 'rate_limited' },
} as const satisfies Record<string, RouteLimit>;

export type RouteLimitName = keyof typeof ROUTE_LIMITS;

export const ROUTE_LIMITS_KEY = 'routeLimits';
