import { describe, expect, it } from '@jest/globals';
import { MemoryRateLimitStore } from './memory-rate-limit-store.js';

const T0 = 1_700_000_000_000;
const MINUTE = 60_000;

describe('MemoryRateLimitStore bookkeeping', () => {
  it('forgets the least recently used key beyond maxKeys', async () => {
    const store = new MemoryRateLimitStore({ maxKeys: 3, cleanupIntervalMs: 0 });
    await store.hit('a', 1, MINUTE, T0);
    await store.hit('b', 1, MINUTE, T0);
    await store.hit('c', 1, MINUTE, T0);
    // Touching `a` makes `b` the least recently used.
    expect((await store.hit('a', 1, MINUTE, T0)).allowed).toBe(false);
    await store.hit('d', 1, MINUTE, T0);
    expect(store.size).toBe(3);
    expect((await store.hit('a', 1, MINUTE, T0)).allowed).toBe(false);
    expect((await store.hit('c', 1, MINUTE, T0)).allowed).toBe(false);
    // `b` was evicted earlier, so it starts afresh (pushing out `d`, now the least recently used).
    expect((await store.hit('b', 1, MINUTE, T0)).allowed).toBe(true);
    expect(store.size).toBe(3);
    await store.close();
  });

  it('sweeps keys whose hits have all left their window, and only those', async () => {
    let now = T0;
    const store = new MemoryRateLimitStore({ cleanupIntervalMs: 0, clock: () => now });
    await store.hit('old', 5, MINUTE, T0);
    await store.hit('short', 5, 1_000, T0 + 30_000);
    await store.hit('recent', 5, MINUTE, T0 + 30_000);
    now = T0 + MINUTE;
    store.sweep();
    expect(store.size).toBe(1);
    expect(await store.hit('recent', 5, MINUTE, now)).toMatchObject({ remaining: 3 });
    await store.close();
  });

  it('does not keep a key for a hit that was refused outright', async () => {
    const store = new MemoryRateLimitStore({ cleanupIntervalMs: 0 });
    await store.hit('nothing', 0, MINUTE, T0);
    expect(store.size).toBe(0);
    await store.close();
  });

  it('runs its sweep on an unref’d timer and stops it on close', async () => {
    const store = new MemoryRateLimitStore({ cleanupIntervalMs: 10, clock: () => T0 + 10 * MINUTE });
    await store.hit('idle', 1, MINUTE, T0);
    // Polls rather than sleeping a fixed time, so a slow machine only makes it take longer.
    for (let waited = 0; store.size > 0 && waited < 5_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(store.size).toBe(0);
    await store.close();
  });

  it('stays correct across many prunings (compaction of the timestamp array)', async () => {
    const store = new MemoryRateLimitStore({ cleanupIntervalMs: 0 });
    // One hit per second for ten minutes at limit 60: every hit fits, exactly 60 are always counted.
    for (let i = 0; i < 600; i++) {
      const result = await store.hit('steady', 60, MINUTE, T0 + i * 1_000);
      expect(result.allowed).toBe(true);
      expect(result.remaining).toBe(i < 60 ? 59 - i : 0);
      expect(result.resetAt).toBe(T0 + Math.max(0, i - 59) * 1_000 + MINUTE);
    }
    expect((await store.hit('steady', 60, MINUTE, T0 + 599_500)).allowed).toBe(false);
    await store.close();
  });

  it('places a hit from a clock that stepped back in order', async () => {
    const store = new MemoryRateLimitStore({ cleanupIntervalMs: 0 });
    await store.hit('skew', 3, MINUTE, T0 + 10_000);
    await store.hit('skew', 3, MINUTE, T0);
    const third = await store.hit('skew', 3, MINUTE, T0 + 20_000);
    expect(third).toMatchObject({ remaining: 0, resetAt: T0 + MINUTE });
    // The hit at T0 leaves first even though it was recorded second.
    expect(await store.hit('skew', 3, MINUTE, T0 + MINUTE)).toMatchObject({
      allowed: true,
      resetAt: T0 + 10_000 + MINUTE,
    });
    await store.close();
  });

  it('is never degraded', async () => {
    const store = new MemoryRateLimitStore({ cleanupIntervalMs: 0 });
    expect(store.isDegraded()).toBe(false);
    await store.close();
  });
});
