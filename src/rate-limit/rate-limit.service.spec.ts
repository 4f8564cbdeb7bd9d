import { describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Request, Response } from 'express';
import { pino } from 'pino';
import { AllExceptionsFilter } from '../common/errors/all-exceptions.filter.js';
import { AppException } from '../common/errors/app-exception.js';
import type { AppConfig } from '../config/app-config.js';
import { AppConfigModule } from '../config/config.module.js';
import { MemoryRateLimitStore } from './memory-rate-limit-store.js';
import { PER_IP_LIMITS } from './per-ip-limits.js';
import { RateLimitModule } from './rate-limit.module.js';
import { RATE_LIMIT_STORE, RateLimitService, type RateLimitDecision } from './rate-limit.service.js';
import type { RateLimitStore } from './sliding-window.js';

const T0 = 1_700_000_000_500;

class HeaderRecorder {
  readonly headers: Record<string, string> = {};
  setHeader(name: string, value: string | number | readonly string[]): this {
    this.headers[name] = String(value);
    return this;
  }
}

function serviceAt(start: number) {
  const clock = { now: start };
  const store = new MemoryRateLimitStore({ cleanupIntervalMs: 0 });
  return { service: new RateLimitService(store, () => clock.now), clock, store };
}

function caught(action: () => void): AppException {
  try {
    action();
  } catch (error) {
    if (error instanceof AppException) return error;
    throw error;
  }
  throw new Error('expected an AppException');
}

describe('RateLimitService', () => {
  it('counts per bucket and subject over a 60 s window', async () => {
    const { service } = serviceAt(T0);
    expect(await service.consume('attest', 'org-1', 2)).toMatchObject({
      allowed: true,
      remaining: 1,
      windowMs: 60_000,
    });
    expect(await service.consume('attest', 'org-1', 2)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await service.consume('attest', 'org-1', 2)).toMatchObject({ allowed: false, bucket: 'attest' });
    expect((await service.consume('flags', 'org-1', 2)).allowed).toBe(true);
    expect((await service.consume('attest', 'org-2', 2)).allowed).toBe(true);
  });

  it('sets X-RateLimit-Limit, -Remaining and -Reset (Unix seconds, rounded up) on allowed requests', async () => {
    const { service } = serviceAt(T0);
    const response = new HeaderRecorder();
    await service.enforce(response, 'challenge', 'org-1', 60);
    expect(response.headers).toEqual({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '59',
      // T0 + 60 s is 1_700_000_060.5 s: rounded up, so a client waiting until then is never early.
      'X-RateLimit-Reset': '1700000061',
    });
  });

  it('refuses with a 429 whose message says how long to wait, and Retry-After in seconds', async () => {
    const { service, clock } = serviceAt(T0);
    await service.consume('attest', 'org-1', 1);
    clock.now = T0 + 48_000;
    const response = new HeaderRecorder();
    const decision = await service.consume('attest', 'org-1', 1);
    const error = caught(() => service.apply(response, decision));

    expect(error.getStatus()).toBe(429);
    expect(error.code).toBe('rate_limited');
    expect(error.message).toBe('Rate limit exceeded: too many requests this minute. Try again in 12 seconds.');
    expect(error.details.headers).toEqual({
      'Retry-After': '12',
      'X-RateLimit-Limit': '1',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '1700000061',
    });
    expect(response.headers['X-RateLimit-Remaining']).toBe('0');
  });

  it('rounds the wait up and never below one second', () => {
    const { service } = serviceAt(T0);
    const refused = (retryAfterMs: number): RateLimitDecision => ({
      allowed: false,
      limit: 5,
      remaining: 0,
      resetAt: T0 + retryAfterMs,
      retryAfterMs,
      bucket: 'attest',
      windowMs: 60_000,
    });
    const eleven = caught(() => service.apply(new HeaderRecorder(), refused(11_001)));
    expect(eleven.details.headers?.['Retry-After']).toBe('12');
    const short = caught(() => service.apply(new HeaderRecorder(), refused(0)));
    expect(short.details.headers?.['Retry-After']).toBe('1');
    expect(short.message).toBe('Rate limit exceeded: too many requests this minute. Try again in 1 second.');
  });

  it('reaches the client as the error envelope with Retry-After', async () => {
    const { service } = serviceAt(T0);
    await service.consume('apikey', 'org-1', 1);
    const decision = await service.consume('apikey', 'org-1', 1);
    const error = caught(() => service.apply(new HeaderRecorder(), decision));

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

  it('applies the per-IP table, by address, before any tenant limit', async () => {
    const { service } = serviceAt(T0);
    const login = PER_IP_LIMITS.login.limit;
    for (let i = 0; i < login; i++) await service.enforcePerIp(new HeaderRecorder(), 'login', '203.0.113.7');
    await expect(service.enforcePerIp(new HeaderRecorder(), 'login', '203.0.113.7')).rejects.toMatchObject({
      code: 'rate_limited',
    });
    // Another address, and the same address on another endpoint, have their own budgets.
    await expect(service.enforcePerIp(new HeaderRecorder(), 'login', '203.0.113.8')).resolves.toBeDefined();
    await expect(service.enforcePerIp(new HeaderRecorder(), 'challenge', '203.0.113.7')).resolves.toBeDefined();
  });

  it('rejects bucket names that could collide with another bucket’s keys', async () => {
    const { service } = serviceAt(T0);
    await expect(service.consume('attest:org', '1', 5)).rejects.toThrow(RangeError);
    await expect(service.consume('attest', '', 5)).rejects.toThrow(RangeError);
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
  it('provides the service from APP_CONFIG and closes its store on shutdown', async () => {
    const config = { redisUrl: null, logLevel: 'silent' } as unknown as AppConfig;
    @Module({ imports: [AppConfigModule.forRoot(config), RateLimitModule] })
    class TestRoot {}

    const app = await NestFactory.createApplicationContext(TestRoot, { logger: false });
    const service = app.get(RateLimitService);
    const store = app.get<MemoryRateLimitStore>(RATE_LIMIT_STORE);
    expect(store).toBeInstanceOf(MemoryRateLimitStore);
    expect((await service.consume('flags', 'org-1', 3)).remaining).toBe(2);
    expect(store.size).toBe(1);
    await app.close();
    expect(store.size).toBe(0);
  });
});
