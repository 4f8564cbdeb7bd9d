import { Inject, Injectable, Optional } from '@nestjs/common';
import { type AppException, tooManyRequests } from '../common/errors/app-exception.js';
import { ipSubject, PER_IP_LIMITS, type PerIpLimitName } from './per-ip-limits.js';
import type { RateLimitResult, RateLimitStore } from './sliding-window.js';

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');
/** Optional provider replacing `Date.now`, for tests. */
export const RATE_LIMIT_CLOCK = Symbol('RATE_LIMIT_CLOCK');
/** The interface document's limits are per minute. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

export interface RateLimitDecision extends RateLimitResult {
  readonly bucket: string;
  readonly windowMs: number;
}

/** The part of an Express `Response` the headers need, so guards, controllers and tests can pass theirs. */
export interface RateLimitHeaderTarget {
  setHeader(name: string, value: string): unknown;
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9_-]*$/;

/** The store key `bucket:subject`; a colon-free bucket keeps two buckets' keys from colliding. */
function keyOf(bucket: string, subject: string): string {
  if (!BUCKET_NAME.test(bucket)) throw new RangeError(`invalid rate limit bucket name: ${bucket}`);
  if (subject.length === 0) throw new RangeError('rate limit subject must not be empty');
  return `${bucket}:${subject}`;
}

/** Seconds a refused client must wait: rounded up so it never retries early, and at least 1. */
export function retryAfterSeconds(decision: RateLimitDecision): number {
  return Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
}

export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(decision.limit),
    'X-RateLimit-Remaining': String(decision.remaining),
    // Unix seconds, rounded up: a client waiting until then finds the capacity back, never before.
    'X-RateLimit-Reset': String(Math.ceil(decision.resetAt / 1000)),
  };
}

/** The 429 envelope: `error` reads as a sentence with the wait, and `Retry-After` says the same. */
export function rateLimitExceeded(decision: RateLimitDecision): AppException {
  const seconds = retryAfterSeconds(decision);
  const period = decision.windowMs === 60_000 ? 'this minute' : `in ${Math.round(decision.windowMs / 1000)} seconds`;
  // The headers ride on the exception too, because the error filter is what writes the 429.
  return tooManyRequests(`Rate limit exceeded: too many requests ${period}.`, seconds, {
    headers: rateLimitHeaders(decision),
  });
}

/** The one entry point for every bucket: tenant buckets and per-IP protection alike. */
@Injectable()
export class RateLimitService {
  /** The time source of the windows; replaceable so tests can move time. */
  clock: () => number;

  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    @Optional() @Inject(RATE_LIMIT_CLOCK) clock?: () => number,
  ) {
    this.clock = clock ?? Date.now;
  }

  /** Counts one request of `subject` (an organization id, a client address) against `bucket`. */
  async consume(
    bucket: string,
    subject: string,
    limit: number,
    windowMs: number = RATE_LIMIT_WINDOW_MS,
  ): Promise<RateLimitDecision> {
    const result = await this.store.hit(keyOf(bucket, subject), limit, windowMs, this.clock());
    return { ...result, bucket, windowMs };
  }

  /** What `consume` would answer, spending nothing (budgets spent only by some outcomes). */
  async peek(
    bucket: string,
    subject: string,
    limit: number,
    windowMs: number = RATE_LIMIT_WINDOW_MS,
  ): Promise<RateLimitDecision> {
    const result = await this.store.peek(keyOf(bucket, subject), limit, windowMs, this.clock());
    return { ...result, bucket, windowMs };
  }

  /** Writes the rate-limit headers and throws the 429 when the decision is a refusal. */
  apply(response: RateLimitHeaderTarget, decision: RateLimitDecision): void {
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) response.setHeader(name, value);
    if (!decision.allowed) throw rateLimitExceeded(decision);
  }

  /** `consume` then `apply`: what a guard or controller calls before doing the work. */
  async enforce(
    response: RateLimitHeaderTarget,
    bucket: string,
    subject: string,
    limit: number,
    windowMs?: number,
  ): Promise<RateLimitDecision> {
    const decision = await this.consume(bucket, subject, limit, windowMs);
    this.apply(response, decision);
    return decision;
  }

  /** Per-IP protection for login, password reset, challenge and validate. */
  enforcePerIp(
    response: RateLimitHeaderTarget,
    name: PerIpLimitName,
    ip: string | undefined,
  ): Promise<RateLimitDecision> {
    const { bucket, limit } = PER_IP_LIMITS[name];
    return this.enforce(response, bucket, ipSubject(ip), limit);
  }

  /** True while the shared backend is unreachable and requests pass unchecked. */
  isDegraded(): boolean {
    const store = this.store as RateLimitStore & { isDegraded?: () => boolean };
    return store.isDegraded?.() ?? false;
  }
}
