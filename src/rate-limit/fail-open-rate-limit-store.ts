import type { Logger } from 'pino';
import { assertHitArguments, type RateLimitResult, type RateLimitStore } from './sliding-window.js';

/** A store that can tell, without a round trip, that it cannot answer right now. */
export interface ConnectionAwareRateLimitStore extends RateLimitStore {
  isConnected(): boolean;
}

export interface FailOpenRateLimitStoreOptions {
  /** At most one warning per this period while the backend is down (default 30 s). */
  readonly warnIntervalMs?: number;
  readonly clock?: () => number;
}

const DEFAULT_WARN_INTERVAL_MS = 30_000;

/**
 * The interface document says the limiter fails open: an unavailable backend must not turn into
 * refused or stalled requests. Each hit that cannot be checked is allowed; operators learn about
 * it from a throttled warning, and the wrapper returns to limiting as soon as a hit succeeds.
 */
export class FailOpenRateLimitStore implements RateLimitStore {
  private readonly warnIntervalMs: number;
  private readonly clock: () => number;
  private degraded = false;
  private lastWarnAt = Number.NEGATIVE_INFINITY;
  private lastRecoveryLogAt = Number.NEGATIVE_INFINITY;
  /** Hits and errors not warned about since the last warning, reported with the next one. */
  private suppressed = 0;

  constructor(
    private readonly inner: ConnectionAwareRateLimitStore,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    options: FailOpenRateLimitStoreOptions = {},
  ) {
    this.warnIntervalMs = options.warnIntervalMs ?? DEFAULT_WARN_INTERVAL_MS;
    this.clock = options.clock ?? Date.now;
  }

  hit(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult> {
    return this.guarded(key, limit, windowMs, now, () => this.inner.hit(key, limit, windowMs, now));
  }

  peek(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult> {
    return this.guarded(key, limit, windowMs, now, () => this.inner.peek(key, limit, windowMs, now));
  }

  private async guarded(
    key: string,
    limit: number,
    windowMs: number,
    now: number,
    call: () => Promise<RateLimitResult>,
  ): Promise<RateLimitResult> {
    assertHitArguments(key, limit, windowMs, now);
    // Not even trying while disconnected keeps the failure path free of any wait.
    if (!this.inner.isConnected()) return this.failOpen('not connected', limit, windowMs, now);
    let result: RateLimitResult;
    try {
      result = await call();
    } catch (error) {
      return this.failOpen(describe(error), limit, windowMs, now);
    }
    this.reportHealthy();
    return result;
  }

  /** Called after a successful hit, and by the client's `ready` event so recovery shows without traffic. */
  reportHealthy(): void {
    if (!this.degraded) return;
    this.degraded = false;
    // Throttled like the warning, so a flapping connection cannot flood the log either way.
    const at = this.clock();
    if (at - this.lastRecoveryLogAt < this.warnIntervalMs) return;
    this.lastRecoveryLogAt = at;
    this.logger.info('rate limiter backend is back; limiting again');
  }

  /** Also fed by the client's own error events, so an outage is reported even with no traffic. */
  reportError(error: unknown): void {
    this.degraded = true;
    this.warn(describe(error));
  }

  /** True while hits are being allowed unchecked (or would be, because the backend is not connected). */
  isDegraded(): boolean {
    return this.degraded || !this.inner.isConnected();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private failOpen(reason: string, limit: number, windowMs: number, now: number): RateLimitResult {
    this.degraded = true;
    this.warn(reason);
    // Best guess that keeps the headers sensible: as if this were the first hit of a fresh window.
    return { allowed: true, limit, remaining: Math.max(0, limit - 1), resetAt: now + windowMs, retryAfterMs: 0 };
  }

  private warn(reason: string): void {
    const at = this.clock();
    if (at - this.lastWarnAt < this.warnIntervalMs) {
      this.suppressed++;
      return;
    }
    this.logger.warn(
      { reason, suppressedSinceLastWarning: this.suppressed },
      'rate limiter backend unavailable; allowing requests unchecked (fail open)',
    );
    this.lastWarnAt = at;
    this.suppressed = 0;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
