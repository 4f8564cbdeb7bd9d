import { describe, expect, it } from '@jest/globals';
import { compileLinearRegex, MAX_REGEX_LENGTH } from './linear-regex.js';

function compiled(pattern: string) {
  const result = compileLinearRegex(pattern);
  if (!result.ok) throw new Error(result.message);
  return result.regex;
}

describe('compileLinearRegex', () => {
  it('matches as tenants write patterns: anchors, classes, alternation, repetition', () => {
    expect(compiled('^iPhone1[45],').test('iPhone14,2')).toBe(true);
    expect(compiled('^iPhone1[45],').test('iPad13,1')).toBe(false);
    expect(compiled('beta|canary').test('app-canary-7')).toBe(true);
    expect(compiled('^\\d+\\.\\d+(\\.\\d+)?$').test('17.4.1')).toBe(true);
    expect(compiled('(?i)^PIXEL').test('pixel 8')).toBe(true);
  });

  it('takes the classic catastrophic patterns and answers them on long inputs (linear time)', () => {
    // A backtracking engine needs 2^n steps for these; RE2 answers at once, so the suite would
    // time out here rather than pass if the engine were not linear.
    const attack = `${'a'.repeat(50_000)}!`;
    for (const pattern of ['^(a|a)*$', '^(a+)+$', '^(a*)*b$', '^(.*a){20}$', '^(\\w+\\s?)*$']) {
      expect([pattern, compiled(pattern).test(attack)]).toEqual([pattern, false]);
    }
  });

  it('refuses what RE2 cannot run, saying why', () => {
    for (const pattern of ['(a)\\1', '(?<=a)b', '(?=a)', 'a(?!b)', '[unclosed', '(']) {
      const result = compileLinearRegex(pattern);
      expect([pattern, result.ok]).toEqual([pattern, false]);
      expect(result.ok ? '' : result.message).toMatch(/^must be a regular expression RE2 accepts/);
    }
    expect(compileLinearRegex('')).toEqual({ ok: false, message: 'must not be an empty pattern' });
    expect(compileLinearRegex('a'.repeat(MAX_REGEX_LENGTH + 1)).ok).toBe(false);
    expect(compileLinearRegex('a'.repeat(MAX_REGEX_LENGTH)).ok).toBe(true);
  });
});
