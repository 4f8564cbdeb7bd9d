import { describe, expect, it } from '@jest/globals';
import { ClaimEvaluationError } from './claim-evaluation-error.js';
import { MAX_REGEX_LENGTH, compileSafeRegex, regexProblem, testSafeRegex } from './safe-regex.js';

describe('regex guard', () => {
  it.each([
    '^iPhone\\d+,\\d+$',
    '^(iPad|iPhone)',
    '^[a-z]+@[a-z]+\\.[a-z]{2,}$',
    '(ab)?c+',
    '[(+*)]+',
    '\\(a+\\)+',
    '(?:https?://)?x',
    '(?<name>a)b*',
  ])('accepts %s', (pattern) => {
    expect(regexProblem(pattern)).toBeNull();
  });

  it.each([
    ['(a+)+$', 'nested quantifiers'],
    ['(a*)*', 'nested quantifiers'],
    ['((ab)+c)+', 'nested quantifiers'],
    ['(a?){2,}', 'nested quantifiers'],
    ['(?:\\d+){3}', 'nested quantifiers'],
    ['(x+x+)+y', 'nested quantifiers'],
    ['(a)\\1', 'backreferences'],
    ['(', 'invalid pattern'],
    ['[', 'invalid pattern'],
    ['', 'empty'],
    ['a'.repeat(MAX_REGEX_LENGTH + 1), 'longer than'],
  ])('refuses %s', (pattern, reason) => {
    expect(regexProblem(pattern)).toContain(reason);
    expect(() => compileSafeRegex(pattern)).toThrow(ClaimEvaluationError);
  });

  it('matches like a plain RegExp', () => {
    const pattern = compileSafeRegex('^iPhone1[45]');
    expect(testSafeRegex(pattern, 'iPhone15,2')).toBe(true);
    expect(testSafeRegex(pattern, 'iPhone13,2')).toBe(false);
  });

  it('stops a super-linear match the static check lets through', () => {
    const pattern = compileSafeRegex('^a*a*a*a*a*b$');
    const started = Date.now();
    expect(() => testSafeRegex(pattern, 'a'.repeat(5000))).toThrow('took too long');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
