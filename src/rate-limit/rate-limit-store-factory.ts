import type { RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { FailOpenRateLimitStore } from './fail-open-rate-limit-store.js';
import { MemoryRateLimitStore, type MemoryRateLimitStoreOptions } from './memory-rate-limit-store.js';
import { createRateLimitRedisClient, RedisRateLimitStore } from './redis-rate-limit-store.js';
import type { RateLimitStore } from './sliding-window.js';

/** What the service and health reporting need from whichever store was chosen. */
export interface ManagedRateLimitStore extends RateLimitStore {
  isDegraded(): boolean;
}

export interface CreateRateLimitStoreOptions {
  /** Null: one instance, windows kept in process (DESIGN.md section 1). */
  readonly redisUrl: string | null;
  readonly logger: Logger;
  readonly keyPrefix?: string;
  /** Tests shorten reconnect delays; production keeps the defaults. */
  readonly redisOptions?: RedisOptions;
  readonly memory?: MemoryRateLimitStoreOptions;
}

/**
 * Several instances must share one budget (DESIGN.md section 3), hence Redis when configured,
 * wrapped so that Redis trouble lets requests through instead of failing them.
 */
export function createRateLimitStore(options: CreateRateLimitStoreOptions): ManagedRateLimitStore {
  if (options.redisUrl === null) return new MemoryRateLimitStore(options.memory);
  const client = createRateLimitRedisClient(options.redisUrl, options.redisOptions);
  const store = new FailOpenRateLimitStore(
    new RedisRateLimitStore(client, { keyPrefix: options.keyPrefix }),
    options.logger,
  );
  // Without an error listener ioredis prints every failed reconnect to the console itself.
  client.on('error', (error: unknown) => store.reportError(error));
  client.on('ready', () => store.reportHealthy());
  return store;
}
