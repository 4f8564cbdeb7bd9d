import { describe, expect, it } from '@jest/globals';
import { compileSafeRegex } from './safe-regex.js';

describe('compileSafeRegex', () => {
  it.each([
    '^[A-Z]{2}$',
    '^iPhone1[4-6],\\d$',
    '(foo|bar)+',
    '^(\\d{3})+$',
    '(a+)?',
    '(?:ab)*c+',
    '^[(+*)]+$',
    '(?<year>\\d{4})-\\d{2}',
    '(?<=x)y+',
    'a{2,}b{3}',
    '[\\]+]*',
  ])('accepts %s', (pattern) => {
    const result = compileSafeRegex(pattern);
    expect(result.ok).toBe(true);
  });

  it.each([
    '(a+)+',
    '(a*)*',
    '^(\\w+\\s?)*$',
    '((ab)*)+',
    '((a+)b)*',
    '(a?){2,5}',
    '(?:x+y*)+z',
    '(?<n>a+){2,}',
    '(.*a){3,}',
  ])('rejects the nested quantifiers in %s', (pattern) => {
    expect(compileSafeRegex(pattern)).toEqual({
      ok: false,
      message: 'must not nest quantifiers, as in (a+)+, which can backtrack catastrophically',
    });
  });

  it('rejects backreferences', () => {
    expect(compileSafeRegex('(a)\\1').ok).toBe(false);
    expect(compileSafeRegex('(?<x>a)\\k<x>').ok).toBe(false);
  });

  it('rejects patterns over 200 characters and invalid patterns', () => {
    expect(compileSafeRegex('a'.repeat(201))).toEqual({ ok: false, message: 'must be at most 200 characters' });
    expect(compileSafeRegex('(')).toEqual({ ok: false, message: 'is not a valid regular expression' });
  });

  it('compiles without the global flag, so repeated tests give the same answer', () => {
    const result = compileSafeRegex('b');
    if (!result.ok) throw new Error(result.message);
    expect([result.regex.test('abc'), result.regex.test('abc')]).toEqual([true, true]);
  });
});
