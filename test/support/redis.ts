import { Redis } from 'ioredis';

/** The machine's Redis, when one runs (CI's second pass and developer machines); tests skip without it. */
export const LOCAL_REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** Whether a Redis server answers PING at `url` within half a second. */
export async function redisAnswers(url: string = LOCAL_REDIS_URL): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, connectTimeout: 500, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}
