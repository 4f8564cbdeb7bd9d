import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { ComponentReport } from './health.service.js';

const PROBE_TIMEOUT_MS = 500;

/**
 * Readiness of Redis when `REDIS_URL` is set: a PING on the probe's own connection, answered
 * within 500 ms. Rate limits fail open and caches fall back when Redis is down, but an instance
 * that cannot reach it would enforce limits alone and miss other instances' changes, so it leaves
 * the Service until Redis answers again.
 */
@Injectable()
export class RedisProbe implements OnModuleDestroy {
  private readonly redis: Redis | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.redis = config.redisUrl
      ? new Redis(config.redisUrl, {
          lazyConnect: true,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          connectTimeout: PROBE_TIMEOUT_MS,
          commandTimeout: PROBE_TIMEOUT_MS,
          retryStrategy: () => 1_000,
        })
      : null;
    this.redis?.on('error', () => undefined);
  }

  /** Whether readiness reports Redis at all. */
  get configured(): boolean {
    return this.redis !== null;
  }

  async check(): Promise<ComponentReport> {
    const redis = this.redis;
    if (!redis) return { status: 'healthy' };
    const started = performance.now();
    try {
      if (redis.status === 'wait') await redis.connect();
      if ((await redis.ping()) !== 'PONG') throw new Error('unexpected answer');
      return { status: 'healthy', latencyMs: Math.round((performance.now() - started) * 100) / 100 };
    } catch {
      return { status: 'unhealthy', latencyMs: -1, error: 'redis unreachable' };
    }
  }

  onModuleDestroy(): void {
    this.redis?.disconnect();
  }
}
