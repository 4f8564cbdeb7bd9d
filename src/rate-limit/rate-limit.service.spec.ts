import { describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ThrottlerStorage } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { pino } from 'pino';
import { AllExceptionsFilter } from '../common/errors/all-exceptions.filter.js';
import type { AppConfig } from '../config/app-config.js';
import { AppConfigModule } from '../config/config.module.js';
import { MemoryRateLimitStore } from './memory-rate-limit-store.js';
import { RateLimitModule } from './rate-limit.module.js';
import {
  RATE_LIMIT_STORE,
  RateLimitService,
  rateLimitExceeded,
  rateLimitHeaders,
  type RateLimitDecision,
} from './rate-limit.service.js';
import type { RateLimitStore } from './sliding-window.js';

const T0 = 1_700_000_000_500;

function serviceAt(start: number) {
  const clock = { now: start };
  const store = new MemoryRateLimitStore({ cleanupIntervalMs: 0 });
  return { service: new RateLimitService(store, () => clock.now), clock, store };
}

function refused(retryAfterMs: number): RateLimitDecision {
  return { allowed: false, limit: 5, remaining: 0, resetAt: T0 + retryAfterMs, retryAfterMs, windowMs: 60_000 };
}

describe('RateLimitService', () => {
  it('counts per key over the window it is given, as @nestjs/throttler storage records', async () => {
    const { service } = serviceAt(T0);
    expect(await service.increment('attest:org-1', 60_000, 2)).toMatchObject({
      totalHits: 1,
      isBlocked: false,
      decision: { allowed: true, remaining: 1, windowMs: 60_000 },
    });
    expect(await service.increment('attest:org-1', 60_000, 2)).toMatchObject({ totalHits: 2, isBlocked: false });
    const third = await service.increment('attest:org-1', 60_000, 2);
    expect(third).toMatchObject({ isBlocked: true, decision: { allowed: false, remaining: 0 } });
    expect(third.timeToBlockExpire).toBe(60);
    expect((await service.increment('flags:org-1', 60_000, 2)).isBlocked).toBe(false);
    expect((await service.increment('attest:org-2', 60_000, 2)).isBlocked).toBe(false);
  });

  it('peeks without counting', async () => {
    const { service } = serviceAt(T0);
    await service.increment('login-failures-ip:203.0.113.7', 900_000, 1);
    expect((await service.peek('login-failures-ip:203.0.113.7', 900_000, 1)).isBlocked).toBe(true);
    expect((await service.peek('login-failures-ip:203.0.113.8', 900_000, 1)).isBlocked).toBe(false);
    expect((await service.peek('login-failures-ip:203.0.113.8', 900_000, 1)).isBlocked).toBe(false);
  });

  it('writes X-RateLimit-Limit, -Remaining and -Reset (Unix seconds, rounded up)', async () => {
    const { service } = serviceAt(T0);
    const { decision } = await service.increment('challenge:org-1', 60_000, 60);
    expect(rateLimitHeaders(decision)).toEqual({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '59',
      'X-RateLimit-Reset': String(Math.ceil((T0 + 60_000) / 1000)),
    });
  });

  it('rounds the wait up and never below one second', () => {
    expect(rateLimitExceeded(refused(11_001)).details.headers?.['Retry-After']).toBe('12');
    const short = rateLimitExceeded(refused(0));
    expect(short.details.headers?.['Retry-After']).toBe('1');
    expect(short.message).toBe('Rate limit exceeded: too many requests this minute. Try again in 1 second.');
  });

  it('reaches the client as the error envelope with Retry-After', async () => {
    const { service } = serviceAt(T0);
    await service.increment('apikey:org-1', 60_000, 1);
    const error = rateLimitExceeded((await service.increment('apikey:org-1', 60_000, 1)).decision);

    const written: { status?: number; body?: Record<string, unknown>; headers: Record<string, string> } = {
      headers: {},
    };
    const response = {
      headersSent: false,
      setHeader(name: string, value: string) {
        written.headers[name] = value;
        return this;
      },
      status(code: number) {
        written.status = code;
        return this;
      },
      json(body: Record<string, unknown>) {
        written.body = body;
        return this;
      },
    };
    const request = { requestId: 'req-1', method: 'POST', originalUrl: '/v1/x', path: '/v1/x' };
    new AllExceptionsFilter(pino({ level: 'silent' })).middleware(
      error,
      request as unknown as Request,
      response as unknown as Response,
      () => undefined,
    );

    expect(written.status).toBe(429);
    expect(written.body).toEqual({
      error: 'Rate limit exceeded: too many requests this minute. Try again in 60 seconds.',
      code: 'rate_limited',
      requestId: 'req-1',
    });
    expect(written.headers['Retry-After']).toBe('60');
  });

  it('refuses keys that are not `limit:subject`', async () => {
    const { service } = serviceAt(T0);
    await expect(service.increment('attest', 60_000, 5)).rejects.toThrow(RangeError);
    await expect(service.increment('attest:', 60_000, 5)).rejects.toThrow(RangeError);
    await expect(service.peek('Attest:org', 60_000, 5)).rejects.toThrow(RangeError);
  });

  it('reports degraded only when its store does', () => {
    const degraded: RateLimitStore & { isDegraded(): boolean } = {
      hit: () => Promise.reject(new Error('unused')),
      peek: () => Promise.reject(new Error('unused')),
      close: () => Promise.resolve(),
      isDegraded: () => true,
    };
    expect(new RateLimitService(degraded).isDegraded()).toBe(true);
    expect(serviceAt(T0).service.isDegraded()).toBe(false);
  });
});

describe('RateLimitModule', () => {
  it('provides the service as the throttler storage from APP_CONFIG and closes its store on shutdown', async () => {
    const config = { redisUrl: null, logLevel: 'silent' } as unknown as AppConfig;
    @Module({ imports: [AppConfigModule.forRoot(config), RateLimitModule] })
    class TestRoot {}

    const app = await NestFactory.createApplicationContext(TestRoot, { logger: false });
    const service = app.get(RateLimitService);
    expect(app.get(ThrottlerStorage)).toBe(service);
    const store = app.get<MemoryRateLimitStore>(RATE_LIMIT_STORE);
    expect(store).toBeInstanceOf(MemoryRateLimitStore);
    expect((await service.increment('flags:org-1', 60_000, 3)).decision.remaining).toBe(2);
    expect(store.size).toBe(1);
    await app.close();
    expect(store.size).toBe(0);
  });
});
