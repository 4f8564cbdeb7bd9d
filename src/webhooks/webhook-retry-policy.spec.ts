import { describe, expect, it } from '@jest/globals';
import { DEFAULT_RETRY_SCHEDULE, MAX_ATTEMPTS, afterAttempt, isSuccessStatus } from './webhook-retry-policy.js';

describe('afterAttempt', () => {
  it('waits 10 s after the first failure and 60 s after the second, then gives up', () => {
    expect(MAX_ATTEMPTS).toBe(3);
    expect(afterAttempt(1, false, DEFAULT_RETRY_SCHEDULE)).toEqual({ status: 'pending', retryInMs: 10_000 });
    expect(afterAttempt(2, false, DEFAULT_RETRY_SCHEDULE)).toEqual({ status: 'pending', retryInMs: 60_000 });
    expect(afterAttempt(3, false, DEFAULT_RETRY_SCHEDULE)).toEqual({ status: 'failed' });
  });

  it('ends the delivery at the first success', () => {
    expect(afterAttempt(1, true, DEFAULT_RETRY_SCHEDULE)).toEqual({ status: 'succeeded' });
    expect(afterAttempt(3, true, DEFAULT_RETRY_SCHEDULE)).toEqual({ status: 'succeeded' });
  });

  it('follows a shortened schedule', () => {
    expect(afterAttempt(2, false, { baseDelayMs: 100, factor: 2 })).toEqual({ status: 'pending', retryInMs: 200 });
  });
});

describe('isSuccessStatus', () => {
  it.each([200, 201, 204, 299])('counts %s as success', (status) => expect(isSuccessStatus(status)).toBe(true));
  it.each([null, 199, 301, 304, 400, 410, 500])('counts %s as failure', (status) =>
    expect(isSuccessStatus(status)).toBe(false),
  );
});
