/**
 * The one rate-limiting mechanism every bucket uses: a true sliding window over hit timestamps.
 *
 * A hit at `now` counts the hits whose timestamps fall in `(now - windowMs, now]`, so a hit made at
 * `t` stops counting at exactly `t + windowMs`. Unlike a fixed window there is no boundary at which
 * the whole budget comes back at once (no double burst around the minute mark): capacity returns
 * one hit at a time, as each old hit slides out.
 *
 * A refused hit is NOT recorded. Were it recorded, a client that keeps retrying after the limit
 * would keep its own window full and stay locked out for as long as it retries; not recording it
 * means the lockout ends when the hits that were actually served age out, whatever the client does
 * meanwhile. The cost is that refused requests are free for the client, which is fine because
 * refusing is cheap for us.
 */
export interface RateLimitResult {
  readonly allowed: boolean;
  readonly limit: number;
  /** Hits still available in the window after this one. */
  readonly remaining: number;
  /** Epoch ms at which the oldest counted hit leaves the window (one hit of capacity comes back). */
  readonly resetAt: number;
  /** 0 when allowed; otherwise ms until a hit would be allowed again. */
  readonly retryAfterMs: number;
}

export interface RateLimitStore {
  /**
   * Records a hit for `key` at `now` (integer epoch ms) unless `limit` hits already count in the
   * window. Keys are opaque: callers build them from bucket and subject.
   */
  hit(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult>;
  /**
   * What a hit at `now` would be told, without recording anything: for budgets spent only by
   * some outcomes (failed sign-ins), which are checked before the request and hit after it.
   */
  peek(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult>;
  /** Releases timers and connections; the store is unusable afterwards. */
  close(): Promise<void>;
}

/** Programmer errors must surface even through the fail-open wrapper, so every store checks first. */
export function assertHitArguments(key: string, limit: number, windowMs: number, now: number): void {
  if (key.length === 0) throw new RangeError('rate limit key must not be empty');
  if (!Number.isInteger(limit) || limit < 0)
    throw new RangeError(`rate limit must be a non-negative integer, got ${limit}`);
  if (!Number.isInteger(windowMs) || windowMs <= 0) {
    throw new RangeError(`rate limit window must be a positive integer of ms, got ${windowMs}`);
  }
  if (!Number.isFinite(now)) throw new RangeError(`rate limit clock must be finite, got ${now}`);
}

/**
 * Builds the result from the timestamps that count after the hit was (or was not) recorded.
 * `nth(i)` is the i-th oldest counted timestamp. Kept here so the in-memory store and the Lua
 * script (which mirrors it) cannot drift apart silently; the shared spec runs on both.
 */
export function describeWindow(
  allowed: boolean,
  count: number,
  limit: number,
  windowMs: number,
  now: number,
  nth: (index: number) => number,
): RateLimitResult {
  const resetAt = count > 0 ? nth(0) + windowMs : now + windowMs;
  let retryAfterMs = 0;
  if (!allowed) {
    // With count above limit (the limit was lowered, e.g. a tier downgrade) several hits must leave
    // before one fits: the one that frees the slot is the (count - limit)-th oldest.
    retryAfterMs = limit > 0 && count >= limit ? nth(count - limit) + windowMs - now : windowMs;
  }
  return { allowed, limit, remaining: Math.max(0, limit - count), resetAt, retryAfterMs: Math.max(0, retryAfterMs) };
}
