import { assertHitArguments, describeWindow, type RateLimitResult, type RateLimitStore } from './sliding-window.js';

export interface MemoryRateLimitStoreOptions {
  /**
   * Beyond this many keys the least recently used one is forgotten. A forgotten key starts afresh,
   * so eviction errs on the side of allowing; it only happens under a flood of distinct subjects,
   * where bounded memory matters more than exactness.
   */
  readonly maxKeys?: number;
  /** How often idle keys are swept; 0 disables the timer (tests call `sweep`). */
  readonly cleanupIntervalMs?: number;
  /** Clock for the sweep only; hits carry their own `now`. */
  readonly clock?: () => number;
}

interface HitWindow {
  /** Counted timestamps, ascending, from `head` on; slots before `head` are already pruned. */
  stamps: number[];
  head: number;
  /** When the newest hit leaves the window: after this the key holds nothing and can go. */
  expiresAt: number;
}

export const DEFAULT_MAX_KEYS = 100_000;
const DEFAULT_CLEANUP_INTERVAL_MS = 60_000;
/** Pruning only moves `head`; the array is compacted once the dead prefix is worth copying away. */
const COMPACT_THRESHOLD = 64;

/** In-process store for a single instance (no REDIS_URL). */
export class MemoryRateLimitStore implements RateLimitStore {
  // A Map iterates in insertion order; re-inserting on every access keeps it in LRU order.
  private readonly windows = new Map<string, HitWindow>();
  private readonly maxKeys: number;
  private readonly clock: () => number;
  private readonly timer: NodeJS.Timeout | null;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    this.maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    if (!Number.isInteger(this.maxKeys) || this.maxKeys < 1) throw new RangeError('maxKeys must be a positive integer');
    this.clock = options.clock ?? Date.now;
    const interval = options.cleanupIntervalMs ?? DEFAULT_CLEANUP_INTERVAL_MS;
    // unref: the sweep must never be what keeps the process (or a test run) alive.
    this.timer = interval > 0 ? setInterval(() => this.sweep(), interval).unref() : null;
  }

  hit(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult> {
    // The executor turns a thrown argument error into a rejection, as from the Redis store.
    return new Promise((resolve) => resolve(this.record(key, limit, windowMs, now, true)));
  }

  peek(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult> {
    return new Promise((resolve) => resolve(this.record(key, limit, windowMs, now, false)));
  }

  private record(key: string, limit: number, windowMs: number, now: number, record: boolean): RateLimitResult {
    assertHitArguments(key, limit, windowMs, now);
    // A look at an unknown key creates nothing.
    if (!record && !this.windows.has(key)) return describeWindow(limit > 0, 0, limit, windowMs, now, () => now);
    const window = this.touch(key);
    const { stamps } = window;
    const horizon = now - windowMs;
    while (window.head < stamps.length && stamps[window.head] <= horizon) window.head++;
    if (window.head >= COMPACT_THRESHOLD && window.head * 2 >= stamps.length) {
      stamps.splice(0, window.head);
      window.head = 0;
    }

    let count = stamps.length - window.head;
    const allowed = count < limit;
    if (allowed && record) {
      insertSorted(stamps, window.head, now);
      count++;
    }
    if (count === 0) {
      this.windows.delete(key);
    } else {
      window.expiresAt = stamps[stamps.length - 1] + windowMs;
    }
    return describeWindow(allowed, count, limit, windowMs, now, (i) => stamps[window.head + i]);
  }

  /** Forgets every key whose hits have all left their window. */
  sweep(now: number = this.clock()): void {
    for (const [key, window] of this.windows) {
      if (window.expiresAt <= now) this.windows.delete(key);
    }
  }

  /** Number of keys held, for tests and metrics. */
  get size(): number {
    return this.windows.size;
  }

  /** Nothing to lose contact with: an in-process store is never degraded. */
  isDegraded(): boolean {
    return false;
  }

  close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.windows.clear();
    return Promise.resolve();
  }

  private touch(key: string): HitWindow {
    const existing = this.windows.get(key);
    if (existing) {
      this.windows.delete(key);
      this.windows.set(key, existing);
      return existing;
    }
    const created: HitWindow = { stamps: [], head: 0, expiresAt: 0 };
    this.windows.set(key, created);
    for (const oldest of this.windows.keys()) {
      if (this.windows.size <= this.maxKeys) break;
      this.windows.delete(oldest);
    }
    return created;
  }
}

/** Clocks are normally monotonic here, so this is a push; an earlier `now` is placed where it belongs. */
function insertSorted(stamps: number[], head: number, value: number): void {
  let at = stamps.length;
  while (at > head && stamps[at - 1] > value) at--;
  if (at === stamps.length) stamps.push(value);
  else stamps.splice(at, 0, value);
}
