import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';

export const USAGE_CACHE_TTL_MS = 5 * 60 * 1000;

/**
 * Usage answers, cached five minutes per organization: in Redis when REDIS_URL is set (shared by
 * every instance), else in process. A Redis failure falls back to computing the answer.
 * The clock is replaceable so tests can move time.
 */
@Injectable()
export class UsageCache implements OnModuleDestroy {
  now: () => number = Date.now;
  private readonly local = new Map<string, { value: unknown; expiresAt: number }>();
  private readonly redis: Redis | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.redis = config.redisUrl
      ? new Redis(config.redisUrl, {
          lazyConnect: false,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          commandTimeout: 200,
          connectTimeout: 1000,
        })
      : null;
    this.redis?.on('error', () => undefined);
  }

  async getOrCompute<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const cached = await this.read<T>(key);
    if (cached !== undefined) return cached;
    const value = await compute();
    await this.write(key, value);
    return value;
  }

  async onModuleDestroy(): Promise<void> {
    if (!this.redis) return;
    // QUIT needs a ready connection; one that is down or hung is dropped, or its socket and
    // reconnection timer would outlive the application.
    if (this.redis.status === 'ready') {
      const said = await this.redis.quit().then(
        () => true,
        () => false,
      );
      if (said) return;
    }
    this.redis.disconnect();
  }

  private async read<T>(key: string): Promise<T | undefined> {
    if (this.redis) {
      try {
        const raw = await this.redis.get(`usage:${key}`);
        if (!raw) return undefined;
        const entry = JSON.parse(raw) as { value: T; expiresAt: number };
        return entry.expiresAt > this.now() ? entry.value : undefined;
      } catch {
        return undefined;
      }
    }
    const entry = this.local.get(key);
    return entry && entry.expiresAt > this.now() ? (entry.value as T) : undefined;
  }

  private async write(key: string, value: unknown): Promise<void> {
    const expiresAt = this.now() + USAGE_CACHE_TTL_MS;
    if (this.redis) {
      // The entry carries its own expiry (for the replaceable clock); Redis drops it a little later.
      await this.redis
        .set(`usage:${key}`, JSON.stringify({ value, expiresAt }), 'PX', USAGE_CACHE_TTL_MS + 60_000)
        .catch(() => undefined);
      return;
    }
    if (this.local.size > 100_000) this.local.clear();
    this.local.set(key, { value, expiresAt });
  }
}
