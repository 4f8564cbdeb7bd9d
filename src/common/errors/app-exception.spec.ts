import { describe, expect, it } from '@jest/globals';
import { tooManyRequests } from './app-exception.js';

describe('tooManyRequests', () => {
  it('always carries Retry-After, in whole seconds of at least 1, and says the same in its sentence', () => {
    for (const [wait, seconds] of [
      [0, 1],
      [0.2, 1],
      [59.01, 60],
      [3600, 3600],
    ] as const) {
      const refusal = tooManyRequests('Slow down.', wait, { headers: { 'X-RateLimit-Limit': '5' } });
      expect(refusal.getStatus()).toBe(429);
      expect(refusal.details.headers).toEqual({ 'X-RateLimit-Limit': '5', 'Retry-After': String(seconds) });
      expect(refusal.message).toBe(`Slow down. Try again in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`);
    }
  });
});
