import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { MemoryRateLimitStore } from './memory-rate-limit-store.js';
import { createRateLimitRedisClient, RedisRateLimitStore } from './redis-rate-limit-store.js';
import type { RateLimitStore } from './sliding-window.js';
import { redisAnswers } from '../../test/support/redis.js';

const REDIS_URL = process.env.RATE_LIMIT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const T0 = 1_700_000_000_000;
const MINUTE = 60_000;

const redisUp = await redisAnswers(REDIS_URL);

async function hitTimes(store: RateLimitStore, key: string, limit: number, times: number, now: number) {
  const results = [];
  for (let i = 0; i < times; i++) results.push(await store.hit(key, limit, MINUTE, now));
  return results;
}

/** The semantics every store must share; run below against the in-process store and Redis. */
function slidingWindowBehaviour(
  name: string,
  open: () => Promise<RateLimitStore>,
  describeFn: (title: string, body: () => void) => void = describe,
) {
  describeFn(name, () => {
    let store: RateLimitStore;
    let key: string;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
    });
    // A fresh key per test keeps the tests independent without flushing anything.
    const fresh = () => (key = `k-${randomUUID()}`);

    it('allows exactly `limit` hits and refuses the next one', async () => {
      fresh();
      const results = await hitTimes(store, key, 5, 6, T0);
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false]);
      expect(results.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
      expect(results.every((r) => r.limit === 5)).toBe(true);
    });

    it('reports resetAt as the oldest hit leaving the window and retryAfterMs as the wait', async () => {
      fresh();
      const first = await store.hit(key, 2, MINUTE, T0);
      expect(first).toEqual({ allowed: true, limit: 2, remaining: 1, resetAt: T0 + MINUTE, retryAfterMs: 0 });
      const second = await store.hit(key, 2, MINUTE, T0 + 10_000);
      expect(second).toEqual({ allowed: true, limit: 2, remaining: 0, resetAt: T0 + MINUTE, retryAfterMs: 0 });
      const refused = await store.hit(key, 2, MINUTE, T0 + 48_000);
      expect(refused).toEqual({ allowed: false, limit: 2, remaining: 0, resetAt: T0 + MINUTE, retryAfterMs: 12_000 });
    });

    it('gives a hit back exactly when the oldest counted hit leaves the window', async () => {
      fresh();
      await hitTimes(store, key, 3, 3, T0);
      const justBefore = await store.hit(key, 3, MINUTE, T0 + MINUTE - 1);
      expect(justBefore).toMatchObject({ allowed: false, retryAfterMs: 1 });
      // The window is (now - 60 s, now]: at exactly T0 + 60 s the hits made at T0 no longer count.
      const atEdge = await store.hit(key, 3, MINUTE, T0 + MINUTE);
      expect(atEdge).toMatchObject({ allowed: true, remaining: 2, resetAt: T0 + 2 * MINUTE });
    });

    it('slides rather than resetting: hits from the last 60 s still count after the minute mark', async () => {
      fresh();
      await hitTimes(store, key, 10, 5, T0);
      await hitTimes(store, key, 10, 5, T0 + 30_000);
      expect((await store.hit(key, 10, MINUTE, T0 + 30_001)).allowed).toBe(false);

      // A fixed window would give all ten back here; a sliding one only the five made at T0.
      const later = await hitTimes(store, key, 10, 6, T0 + 60_001);
      expect(later.map((r) => r.allowed)).toEqual([true, true, true, true, true, false]);
      expect(later[4]).toMatchObject({ remaining: 0, resetAt: T0 + 30_000 + MINUTE });
      // The next capacity comes back when the T0 + 30 s hits leave.
      expect(later[5]).toMatchObject({ resetAt: T0 + 30_000 + MINUTE, retryAfterMs: 29_999 });
    });

    it('does not count refused hits, so hammering does not extend the lockout', async () => {
      fresh();
      await hitTimes(store, key, 10, 10, T0);
      for (let t = T0 + 1_000; t < T0 + MINUTE; t += 1_000) {
        const refused = await store.hit(key, 10, MINUTE, t);
        expect(refused).toMatchObject({ allowed: false, resetAt: T0 + MINUTE, retryAfterMs: T0 + MINUTE - t });
      }
      const back = await hitTimes(store, key, 10, 11, T0 + MINUTE);
      expect(back.filter((r) => r.allowed)).toHaveLength(10);
    });

    it('counts hits made in the same millisecond separately', async () => {
      fresh();
      const results = await Promise.all([0, 1, 2, 3].map(() => store.hit(key, 3, MINUTE, T0)));
      expect(results.filter((r) => r.allowed)).toHaveLength(3);
      expect(results.map((r) => r.remaining).sort()).toEqual([0, 0, 1, 2]);
    });

    it('keeps keys apart', async () => {
      const a = `a-${randomUUID()}`;
      const b = `b-${randomUUID()}`;
      await hitTimes(store, a, 1, 1, T0);
      expect((await store.hit(a, 1, MINUTE, T0)).allowed).toBe(false);
      expect((await store.hit(b, 1, MINUTE, T0)).allowed).toBe(true);
    });

    it('peeks without recording: the answer a hit would get, and the budget untouched', async () => {
      fresh();
      expect(await store.peek(key, 2, MINUTE, T0)).toEqual({
        allowed: true,
        limit: 2,
        remaining: 2,
        resetAt: T0 + MINUTE,
        retryAfterMs: 0,
      });
      await store.hit(key, 2, MINUTE, T0);
      await store.hit(key, 2, MINUTE, T0 + 10_000);
      for (let i = 0; i < 5; i++) {
        expect(await store.peek(key, 2, MINUTE, T0 + 20_000)).toEqual({
          allowed: false,
          limit: 2,
          remaining: 0,
          resetAt: T0 + MINUTE,
          retryAfterMs: 40_000,
        });
      }
      // Peeking never spent anything: once the first hit leaves, exactly one fits again.
      expect((await store.hit(key, 2, MINUTE, T0 + MINUTE)).allowed).toBe(true);
      expect((await store.hit(key, 2, MINUTE, T0 + MINUTE)).allowed).toBe(false);
    });

    it('after a lowered limit, waits until enough old hits have left', async () => {
      fresh();
      for (const offset of [0, 10_000, 20_000, 30_000, 40_000]) await store.hit(key, 5, MINUTE, T0 + offset);
      // Five counted, limit now 3: the hits at 0 s, 10 s and 20 s must all leave before one fits.
      const refused = await store.hit(key, 3, MINUTE, T0 + 45_000);
      expect(refused).toEqual({ allowed: false, limit: 3, remaining: 0, resetAt: T0 + MINUTE, retryAfterMs: 35_000 });
      expect((await store.hit(key, 3, MINUTE, T0 + 80_000)).allowed).toBe(true);
    });

    it('refuses everything at limit 0 and asks for a whole window', async () => {
      fresh();
      expect(await store.hit(key, 0, MINUTE, T0)).toEqual({
        allowed: false,
        limit: 0,
        remaining: 0,
        resetAt: T0 + MINUTE,
        retryAfterMs: MINUTE,
      });
    });

    it('honours other window lengths', async () => {
      fresh();
      expect((await store.hit(key, 1, 1_000, T0)).allowed).toBe(true);
      expect(await store.hit(key, 1, 1_000, T0 + 999)).toMatchObject({ allowed: false, retryAfterMs: 1 });
      expect((await store.hit(key, 1, 1_000, T0 + 1_000)).allowed).toBe(true);
    });

    it('rejects nonsensical arguments instead of guessing', async () => {
      await expect(store.hit('k', -1, MINUTE, T0)).rejects.toThrow(RangeError);
      await expect(store.hit('k', 1.5, MINUTE, T0)).rejects.toThrow(RangeError);
      await expect(store.hit('k', 1, 0, T0)).rejects.toThrow(RangeError);
      await expect(store.hit('', 1, MINUTE, T0)).rejects.toThrow(RangeError);
    });
  });
}

// Each run uses its own prefix so parallel runs and leftovers never meet; afterAll deletes it.
const prefix = `rl:test:${randomUUID()}:`;
const redisClients: Redis[] = [];

async function openRedisStore(): Promise<RedisRateLimitStore> {
  const client = createRateLimitRedisClient(REDIS_URL, { lazyConnect: true });
  redisClients.push(client);
  // The offline queue is off, so commands sent before `ready` would fail: wait for it.
  await client.connect();
  return new RedisRateLimitStore(client, { keyPrefix: prefix });
}

afterAll(async () => {
  if (!redisUp) return;
  const cleaner = new Redis(REDIS_URL);
  try {
    const keys = await cleaner.keys(`${prefix}*`);
    if (keys.length > 0) await cleaner.del(...keys);
  } finally {
    cleaner.disconnect();
  }
});

slidingWindowBehaviour('sliding window: MemoryRateLimitStore', () =>
  Promise.resolve(new MemoryRateLimitStore({ cleanupIntervalMs: 0 })),
);

const redisTitle = redisUp
  ? `sliding window: RedisRateLimitStore (${REDIS_URL})`
  : `sliding window: RedisRateLimitStore — SKIPPED, no Redis answered at ${REDIS_URL}`;
slidingWindowBehaviour(redisTitle, openRedisStore, redisUp ? describe : describe.skip);

(redisUp ? describe : describe.skip)(
  redisUp
    ? 'RedisRateLimitStore across instances'
    : `RedisRateLimitStore across instances — SKIPPED, no Redis at ${REDIS_URL}`,
  () => {
    let a: RedisRateLimitStore;
    let b: RedisRateLimitStore;
    beforeAll(async () => {
      a = await openRedisStore();
      b = await openRedisStore();
    });
    afterAll(async () => {
      await Promise.all([a.close(), b.close()]);
    });

    it('uses two separate connections', () => {
      expect(a.client).not.toBe(b.client);
    });

    it('shares one budget between two instances', async () => {
      const key = `shared-${randomUUID()}`;
      const results = [];
      for (let i = 0; i < 6; i++) results.push(await (i % 2 === 0 ? a : b).hit(key, 5, MINUTE, T0 + i));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false]);
      expect(results.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
      expect((await a.hit(key, 5, MINUTE, T0 + 10)).allowed).toBe(false);
    });

    it('never hands out more than the limit under concurrent hits from both instances', async () => {
      const key = `race-${randomUUID()}`;
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).hit(key, 15, MINUTE, T0)),
      );
      expect(results.filter((r) => r.allowed)).toHaveLength(15);
    });

    it('stores hits under the rl: prefix by default, with an expiry of one window', async () => {
      const key = `test:${randomUUID()}`;
      const defaultPrefixed = new RedisRateLimitStore(a.client);
      try {
        await defaultPrefixed.hit(key, 5, MINUTE, Date.now());
        const ttl = await a.client.pttl(`rl:${key}`);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(MINUTE);
      } finally {
        await a.client.del(`rl:${key}`);
      }
    });
  },
);
