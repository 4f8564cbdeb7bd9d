import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { testConfig } from '../../test/fakes/config.js';
import { FakeRedisClient } from '../../test/fakes/redis-client.js';

// The probe's Redis client is the in-memory one: no connection leaves the process.
const clients: FakeRedisClient[] = [];
jest.unstable_mockModule('ioredis', () => ({
  Redis: function Redis(url: string, options: Record<string, unknown>) {
    const client = new FakeRedisClient(url, options);
    clients.push(client);
    return client;
  },
}));
const { RedisProbe } = await import('./redis-probe.js');

const REDIS_URL = 'redis://:redis-pass-5@cache.internal:6379/0';

describe('RedisProbe (readiness of Redis when REDIS_URL is set)', () => {
  const configured = () => new RedisProbe({ ...testConfig, redisUrl: REDIS_URL });

  beforeEach(() => {
    clients.length = 0;
  });

  it('is not part of readiness, and opens no connection, when REDIS_URL is unset', async () => {
    const probe = new RedisProbe({ ...testConfig, redisUrl: null });
    expect(probe.configured).toBe(false);
    expect(await probe.check()).toEqual({ status: 'healthy' });
    expect(clients).toEqual([]);
  });

  it('connects on the first check, not at startup, and reports a PONG as healthy with its round trip', async () => {
    const probe = configured();
    expect(probe.configured).toBe(true);
    expect(clients[0].connects).toBe(0);
    expect(await probe.check()).toEqual({ status: 'healthy', latencyMs: expect.any(Number) });
    expect(await probe.check()).toEqual({ status: 'healthy', latencyMs: expect.any(Number) });
    expect(clients[0].connects).toBe(1);
  });

  it('reports a Redis it cannot reach as unhealthy with latency -1, in fixed words without the URL or its password', async () => {
    const probe = configured();
    clients[0].answer = 'refused';
    const report = await probe.check();
    expect(report).toEqual({ status: 'unhealthy', latencyMs: -1, error: 'redis unreachable' });
    expect(JSON.stringify(report)).not.toMatch(/redis-pass-5|cache\.internal|ECONNREFUSED/);
  });

  it('reports any answer to PING other than PONG as unreachable', async () => {
    const probe = configured();
    clients[0].answer = 'LOADING Redis is loading the dataset in memory';
    expect(await probe.check()).toEqual({ status: 'unhealthy', latencyMs: -1, error: 'redis unreachable' });
  });

  it('reports Redis healthy again once it answers, without a restart', async () => {
    const probe = configured();
    const client = clients[0];
    client.answer = 'refused';
    expect((await probe.check()).status).toBe('unhealthy');
    client.answer = 'PONG';
    client.status = 'ready'; // the client reconnected by itself
    expect((await probe.check()).status).toBe('healthy');
  });

  it('bounds the check: connecting and the PING each give up after 500 ms, with no queueing and no retry of the command', () => {
    configured();
    expect(clients[0].url).toBe(REDIS_URL);
    expect(clients[0].options).toMatchObject({
      lazyConnect: true,
      connectTimeout: 500,
      commandTimeout: 500,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
  });

  it('does not crash the service when the connection reports an error', () => {
    configured();
    expect(() => clients[0].emit('error', new Error('read ECONNRESET'))).not.toThrow();
  });

  it('closes its connection when the service shuts down', () => {
    const probe = configured();
    probe.onModuleDestroy();
    expect(clients[0].disconnected).toBe(true);
  });
});
