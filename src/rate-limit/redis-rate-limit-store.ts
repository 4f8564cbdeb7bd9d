import { randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { assertHitArguments, type RateLimitResult, type RateLimitStore } from './sliding-window.js';

export const REDIS_KEY_PREFIX = 'rl:';

/**
 * Client settings for a limiter that must never make a request wait on Redis: commands fail at
 * once while disconnected instead of queueing, and a hung server costs at most ~200 ms.
 * ioredis keeps reconnecting in the background, so the limiter recovers without a restart.
 */
export const RATE_LIMIT_REDIS_OPTIONS: Readonly<RedisOptions> = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 1_000,
  commandTimeout: 200,
  retryStrategy: (attempt: number) => Math.min(attempt * 100, 2_000),
  // ioredis arms this (un-unref'd) timer even when disconnecting an already dead socket, so the
  // default 2 s would hold up process exit after a shutdown during an outage.
  disconnectTimeout: 500,
};

export function createRateLimitRedisClient(url: string, overrides: RedisOptions = {}): Redis {
  return new Redis(url, { ...RATE_LIMIT_REDIS_OPTIONS, ...overrides });
}

/**
 * One round trip, atomic, so concurrent instances cannot both take the last slot.
 * Mirrors `describeWindow` in sliding-window.ts. Numbers are formatted with %.17g because Lua's
 * default number-to-string keeps only 14 digits, which would corrupt epoch-ms scores.
 * KEYS[1] sorted set (score = hit time); ARGV: now, windowMs, limit, unique member, record ('1' to
 * record the hit, '0' to only look).
 * Returns { allowed, count, resetAt, retryAfterMs }.
 */
const SLIDING_WINDOW_HIT = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.17g', now - window))
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  if ARGV[5] == '1' then
    redis.call('ZADD', key, ARGV[1], ARGV[4])
    count = count + 1
  end
  allowed = 1
end
local resetAt = now + window
local retryAfter = 0
if count > 0 then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  resetAt = tonumber(oldest[2]) + window
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  local ttl = math.max(1, math.ceil(tonumber(newest[2]) + window - now))
  redis.call('PEXPIRE', key, string.format('%.17g', ttl))
end
if allowed == 0 then
  if limit > 0 and count >= limit then
    local freeing = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
    retryAfter = tonumber(freeing[2]) + window - now
  else
    retryAfter = window
  end
end
return { allowed, count, string.format('%.17g', resetAt), string.format('%.17g', math.max(0, retryAfter)) }
`;

type SlidingWindowReply = [allowed: number, count: number, resetAt: string, retryAfterMs: string];

interface SlidingWindowCommand {
  rateLimitSlidingWindowHit(
    key: string,
    now: string,
    windowMs: string,
    limit: string,
    member: string,
    record: '0' | '1',
  ): Promise<SlidingWindowReply>;
}

export interface RedisRateLimitStoreOptions {
  /** Defaults to `rl:`; tests use a longer unique prefix so parallel runs do not share keys. */
  readonly keyPrefix?: string;
}

/**
 * Shared store for several instances: one sorted set per key. The windows are as exact as the
 * instances' clocks agree (each hit carries its caller's `now`), which NTP keeps to milliseconds.
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly keyPrefix: string;
  /** Members must be unique or two hits in the same millisecond would collapse into one. */
  private readonly instanceId = randomBytes(6).toString('base64url');
  private sequence = 0;

  constructor(
    readonly client: Redis,
    options: RedisRateLimitStoreOptions = {},
  ) {
    this.keyPrefix = options.keyPrefix ?? REDIS_KEY_PREFIX;
    // defineCommand sends EVALSHA and falls back to EVAL only when the server lacks the script.
    client.defineCommand('rateLimitSlidingWindowHit', { numberOfKeys: 1, lua: SLIDING_WINDOW_HIT });
  }

  hit(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult> {
    return this.run(key, limit, windowMs, now, '1');
  }

  peek(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult> {
    return this.run(key, limit, windowMs, now, '0');
  }

  private async run(
    key: string,
    limit: number,
    windowMs: number,
    now: number,
    record: '0' | '1',
  ): Promise<RateLimitResult> {
    assertHitArguments(key, limit, windowMs, now);
    const member = `${now}:${this.instanceId}:${(this.sequence = (this.sequence + 1) % Number.MAX_SAFE_INTEGER)}`;
    const reply = await (this.client as Redis & SlidingWindowCommand).rateLimitSlidingWindowHit(
      this.keyPrefix + key,
      String(now),
      String(windowMs),
      String(limit),
      member,
      record,
    );
    const [allowed, count, resetAt, retryAfterMs] = reply;
    return {
      allowed: allowed === 1,
      limit,
      remaining: Math.max(0, limit - count),
      resetAt: Number(resetAt),
      retryAfterMs: Number(retryAfterMs),
    };
  }

  /** Ready means commands will be sent now rather than rejected. */
  isConnected(): boolean {
    return this.client.status === 'ready';
  }

  async close(): Promise<void> {
    if (this.client.status === 'end') return;
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // Fall through: a connection that cannot say goodbye is simply dropped.
      }
    }
    this.client.disconnect();
  }
}
