import { describe, expect, it } from '@jest/globals';
import { challengeName, challengeValue, challengeVerdict } from './domain-challenge.js';

describe('the SSO domain challenge', () => {
  it('names the record under the domain and carries the token in its value', () => {
    expect(challengeName('acme.com')).toBe('_attestly-challenge.acme.com');
    expect(challengeValue('t0k')).toBe('attestly-domain-verification=t0k');
  });

  it('is proven only by a record carrying this token', () => {
    const records = (...values: string[]) => ({ kind: 'records' as const, values });
    expect(challengeVerdict(records('v=spf1', ' attestly-domain-verification=abc '), 'abc').kind).toBe('proven');
    expect(challengeVerdict(records('attestly-domain-verification=other'), 'abc').kind).toBe('missing');
    expect(challengeVerdict(records('attestly-domain-verification=abcd'), 'abc').kind).toBe('missing');
  });

  it('treats a missing name as missing and an unanswered lookup as unknown', () => {
    expect(challengeVerdict({ kind: 'absent' }, 'abc').kind).toBe('missing');
    expect(challengeVerdict({ kind: 'failed', reason: 'ETIMEOUT' }, 'abc')).toEqual({
      kind: 'unknown',
      reason: 'ETIMEOUT',
    });
  });
});
