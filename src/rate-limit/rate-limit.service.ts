import { Inject, Injectable, Optional } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { type AppException, tooManyRequests } from '../common/errors/app-exception.js';
import type { RateLimitResult, RateLimitStore } from './sliding-window.js';

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');
/** Optional provider replacing `Date.now`, for tests. */
export const RATE_LIMIT_CLOCK = Symbol('RATE_LIMIT_CLOCK');

export interface RateLimitDecision extends RateLimitResult {
  readonly windowMs: number;
}

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** What the throttler guard is told: @nestjs/throttler's record, with the sliding window's own figures. */
export interface SlidingWindowRecord extends ThrottlerStorageRecord {
  readonly decision: RateLimitDecision;
}

const KEY = /^[a-z0-9][a-z0-9_-]*:.+$/;

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

/**
 * The one `ThrottlerStorage` of the service: @nestjs/throttler's guard counts every limit here, on
 * a true sliding window (sliding-window.ts) kept in Redis across instances or in process, failing
 * open when Redis is away. Keys are `limit:subject`.
 */
@Injectable()
export class RateLimitService implements ThrottlerStorage {
  /** The time source of the windows; replaceable so tests can move time. */
  clock: () => number;

  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    @Optional() @Inject(RATE_LIMIT_CLOCK) clock?: () => number,
  ) {
    this.clock = clock ?? Date.now;
  }

  /** Counts one request under `key` unless the window is full (`ttl` is the window in ms). */
  async increment(key: string, ttl: number, limit: number): Promise<SlidingWindowRecord> {
    return record(await this.store.hit(checked(key), limit, ttl, this.clock()), ttl);
  }

  /** What `increment` would answer, counting nothing (budgets spent only by some outcomes). */
  async peek(key: string, ttl: number, limit: number): Promise<SlidingWindowRecord> {
    return record(await this.store.peek(checked(key), limit, ttl, this.clock()), ttl);
  }

  /** True while the shared backend is unreachable and requests pass unchecked. */
  isDegraded(): boolean {
    const store = this.store as RateLimitStore & { isDegraded?: () => boolean };
    return store.isDegraded?.() ?? false;
  }
}

function checked(key: string): string {
  if (!KEY.test(key)) throw new RangeError(`invalid rate limit key: ${key}`);
  return key;
}

function record(result: RateLimitResult, windowMs: number): SlidingWindowRecord {
  const now = Date.now();
  return {
    totalHits: result.limit - result.remaining + (result.allowed ? 0 : 1),
    timeToExpire: Math.max(0, Math.ceil((result.resetAt - now) / 1000)),
    isBlocked: !result.allowed,
    timeToBlockExpire: Math.ceil(result.retryAfterMs / 1000),
    decision: { ...result, windowMs },
  };
}
