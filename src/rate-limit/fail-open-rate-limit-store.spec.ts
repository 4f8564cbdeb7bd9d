import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { FailOpenRateLimitStore, type ConnectionAwareRateLimitStore } from './fail-open-rate-limit-store.js';
import { createRateLimitRedisClient, RedisRateLimitStore } from './redis-rate-limit-store.js';
import { createRateLimitStore } from './rate-limit-store-factory.js';
import type { RateLimitResult } from './sliding-window.js';
import { redisAnswers } from '../../test/support/redis.js';

const REDIS_URL = process.env.RATE_LIMIT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MINUTE = 60_000;
const prefix = `rl:test:${randomUUID()}:`;

const redisUp = await redisAnswers(REDIS_URL);

interface LogLine {
  level: number;
  msg: string;
  reason?: string;
  suppressedSinceLastWarning?: number;
}

/** A real pino logger writing into an array, so the assertions see exactly what operators would. */
function captureLogger(): { logger: Logger; lines: LogLine[]; warnings: () => LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info', base: undefined }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines, warnings: () => lines.filter((l) => l.level === 40) };
}

async function eventually(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A TCP proxy in front of the test Redis that can be stopped and started (Redis "goes away") or
 * made to hold Redis's replies (Redis "hangs") without touching the shared Redis itself.
 */
class TcpProxy {
  port = 0;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private hung = false;
  private readonly held: Array<[Socket, Buffer]> = [];

  constructor(private readonly target: URL) {}

  async start(): Promise<void> {
    const server = createServer((downstream) => {
      const upstream = connect(Number(this.target.port || 6379), this.target.hostname);
      for (const socket of [downstream, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
      }
      downstream.on('error', () => upstream.destroy());
      upstream.on('error', () => downstream.destroy());
      downstream.on('close', () => upstream.destroy());
      upstream.on('close', () => downstream.destroy());
      downstream.on('data', (chunk: Buffer) => upstream.write(chunk));
      upstream.on('data', (chunk: Buffer) => {
        if (this.hung) this.held.push([downstream, chunk]);
        else downstream.write(chunk);
      });
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  hang(): void {
    this.hung = true;
  }

  /** Delivers the held replies in order, so the client's reply queue stays in step. */
  resume(): void {
    this.hung = false;
    for (const [socket, chunk] of this.held.splice(0)) socket.write(chunk);
  }
}

/** An inner store whose health and answers the test dictates. */
class ScriptedStore implements ConnectionAwareRateLimitStore {
  connected = true;
  failure: Error | null = null;
  hits = 0;

  isConnected(): boolean {
    return this.connected;
  }

  hit(_key: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult> {
    this.hits++;
    if (this.failure) return Promise.reject(this.failure);
    return Promise.resolve({ allowed: false, limit, remaining: 0, resetAt: now + windowMs, retryAfterMs: 5_000 });
  }

  peek(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitResult> {
    return this.hit(key, limit, windowMs, now);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('FailOpenRateLimitStore (no Redis needed)', () => {
  it('allows a hit the backend cannot answer, and warns at most once per 30 s', async () => {
    let now = 0;
    const inner = new ScriptedStore();
    const { logger, warnings, lines } = captureLogger();
    const store = new FailOpenRateLimitStore(inner, logger, { clock: () => now });

    inner.failure = new Error('Command timed out');
    expect(await store.hit('k', 10, MINUTE, 1_000)).toEqual({
      allowed: true,
      limit: 10,
      remaining: 9,
      resetAt: 1_000 + MINUTE,
      retryAfterMs: 0,
    });
    expect(store.isDegraded()).toBe(true);
    store.reportError(new Error('connect ECONNREFUSED'));
    for (now = 1_000; now < 30_000; now += 1_000) await store.hit('k', 10, MINUTE, now);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ reason: 'Command timed out' });

    now = 30_000;
    await store.hit('k', 10, MINUTE, now);
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1].suppressedSinceLastWarning).toBe(30);

    // Back to the backend's own answers as soon as one succeeds.
    inner.failure = null;
    expect((await store.hit('k', 10, MINUTE, now)).allowed).toBe(false);
    expect(store.isDegraded()).toBe(false);
    expect(lines.filter((l) => l.level === 30).map((l) => l.msg)).toEqual([
      'rate limiter backend is back; limiting again',
    ]);
  });

  it('does not even try while the backend reports it is not connected', async () => {
    const inner = new ScriptedStore();
    inner.connected = false;
    const store = new FailOpenRateLimitStore(inner, captureLogger().logger);
    expect((await store.hit('k', 10, MINUTE, 0)).allowed).toBe(true);
    expect(inner.hits).toBe(0);
    expect(store.isDegraded()).toBe(true);
  });

  it('still rejects programming errors instead of hiding them as an outage', async () => {
    const store = new FailOpenRateLimitStore(new ScriptedStore(), captureLogger().logger);
    await expect(store.hit('k', -1, MINUTE, 0)).rejects.toThrow(RangeError);
    expect(store.isDegraded()).toBe(false);
  });
});

describe('fail-open Redis store pointed at a closed port', () => {
  it('allows hits, reports degraded and logs one warning', async () => {
    const { logger, warnings } = captureLogger();
    const store = createRateLimitStore({
      redisUrl: 'redis://127.0.0.1:1',
      logger,
      redisOptions: { retryStrategy: () => 20 },
    });
    try {
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await store.hit('k', 1, MINUTE, Date.now()));
      expect(results.every((r) => r.allowed)).toBe(true);
      expect(store.isDegraded()).toBe(true);
      // Let several reconnect attempts fail: their error events must not add warnings.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(warnings()).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});

(redisUp ? describe : describe.skip)(
  redisUp
    ? 'fail-open Redis store when Redis goes away and comes back'
    : `fail-open Redis store when Redis goes away — SKIPPED, no Redis answered at ${REDIS_URL}`,
  () => {
    afterAll(async () => {
      const cleaner = new Redis(REDIS_URL);
      try {
        const keys = await cleaner.keys(`${prefix}*`);
        if (keys.length > 0) await cleaner.del(...keys);
      } finally {
        cleaner.disconnect();
      }
    });

    function wire(url: string) {
      const client = createRateLimitRedisClient(url, { retryStrategy: () => 20 });
      const { logger, lines, warnings } = captureLogger();
      const store = new FailOpenRateLimitStore(new RedisRateLimitStore(client, { keyPrefix: prefix }), logger);
      client.on('error', (error: unknown) => store.reportError(error));
      client.on('ready', () => store.reportHealthy());
      return { client, store, lines, warnings };
    }

    it('fails open while the proxy to Redis is down and limits again once it is back', async () => {
      const proxy = new TcpProxy(new URL(REDIS_URL));
      await proxy.start();
      const { client, store, warnings, lines } = wire(`redis://127.0.0.1:${proxy.port}`);
      const key = `outage-${randomUUID()}`;
      try {
        await eventually(() => client.status === 'ready', 'first connection');
        expect((await store.hit(key, 1, MINUTE, Date.now())).allowed).toBe(true);
        expect((await store.hit(key, 1, MINUTE, Date.now())).allowed).toBe(false);

        await proxy.stop();
        await eventually(() => client.status !== 'ready', 'the client to notice');
        // Over the limit, yet allowed: the limiter cannot check, so it lets requests through.
        expect((await store.hit(key, 1, MINUTE, Date.now())).allowed).toBe(true);
        expect(store.isDegraded()).toBe(true);
        expect(warnings().length).toBeGreaterThanOrEqual(1);

        await proxy.start();
        await eventually(() => client.status === 'ready', 'the reconnection');
        expect(await store.hit(key, 1, MINUTE, Date.now())).toMatchObject({ allowed: false });
        expect(store.isDegraded()).toBe(false);
        expect(lines.some((l) => l.msg === 'rate limiter backend is back; limiting again')).toBe(true);
        expect(warnings()).toHaveLength(1);
      } finally {
        await store.close();
        await proxy.stop();
      }
    });

    it('fails open when Redis stops answering (command timeout) and recovers', async () => {
      const proxy = new TcpProxy(new URL(REDIS_URL));
      await proxy.start();
      const { client, store } = wire(`redis://127.0.0.1:${proxy.port}`);
      const key = `hang-${randomUUID()}`;
      try {
        await eventually(() => client.status === 'ready', 'first connection');
        expect((await store.hit(key, 1, MINUTE, Date.now())).allowed).toBe(true);

        proxy.hang();
        expect((await store.hit(key, 1, MINUTE, Date.now())).allowed).toBe(true);
        expect(store.isDegraded()).toBe(true);

        proxy.resume();
        // On a loaded machine the first command after the resume may still pass the 200 ms command
        // timeout and fail open: the store is back once a command answers, and that answer counts.
        let answer = await store.hit(key, 1, MINUTE, Date.now());
        for (let tries = 0; store.isDegraded() && tries < 20; tries += 1) {
          answer = await store.hit(key, 1, MINUTE, Date.now());
        }
        expect(store.isDegraded()).toBe(false);
        expect(answer.allowed).toBe(false);
      } finally {
        await store.close();
        await proxy.stop();
      }
    });

    it('fails open across client.disconnect() and recovers when ioredis reconnects', async () => {
      const { client, store } = wire(REDIS_URL);
      const key = `drop-${randomUUID()}`;
      try {
        await eventually(() => client.status === 'ready', 'first connection');
        expect((await store.hit(key, 1, MINUTE, Date.now())).allowed).toBe(true);

        // disconnect(true) drops the socket the way a network failure would, then reconnects.
        const closed = once(client, 'close');
        client.disconnect(true);
        await closed;
        expect((await store.hit(key, 1, MINUTE, Date.now())).allowed).toBe(true);
        expect(store.isDegraded()).toBe(true);

        await eventually(() => client.status === 'ready', 'the reconnection');
        expect((await store.hit(key, 1, MINUTE, Date.now())).allowed).toBe(false);
        expect(store.isDegraded()).toBe(false);
      } finally {
        await store.close();
      }
    });
  },
);
