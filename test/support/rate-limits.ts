import { expect } from '@jest/globals';
import { tierDefinition } from '../../src/common/tiers.js';
import { LIMITS, type Limit, type LimitName } from '../../src/rate-limit/limits.js';
import { RateLimitService } from '../../src/rate-limit/rate-limit.service.js';
import type { TestApp } from '../harness/test-app.js';

/**
 * Spends all of a budget but `left` requests directly in the store, as earlier requests would have
 * (a plan's bucket at the rate of `tier`), so a test reaches the limit without sending them all.
 */
export async function spendRateLimit(
  t: TestApp,
  name: LimitName,
  subject: string,
  left: number,
  tier = 'free',
): Promise<void> {
  const limiter = t.app.get(RateLimitService);
  const declared: Limit = LIMITS[name];
  const limit = typeof declared.limit === 'number' ? declared.limit : tierDefinition(tier).rates[declared.limit.plan];
  for (let i = 0; i < limit - left; i++) await limiter.increment(`${name}:${subject}`, declared.windowMs, limit);
}

/** The service's 429: `rate_limited`, with Retry-After and its seconds in the sentence. */
export function expectRateLimited(response: {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}): void {
  expect(response.status).toBe(429);
  expect(response.body.code).toBe('rate_limited');
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  expect(response.body.error).toContain(`Try again in ${response.headers['retry-after']} seconds`);
}
