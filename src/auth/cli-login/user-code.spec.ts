import { describe, expect, it } from '@jest/globals';
import { USER_CODE_FORMAT, newUserCode } from './user-code.js';

describe('CLI login user code', () => {
  it('is eight consonants in two groups, and differs between sessions', () => {
    const codes = Array.from({ length: 200 }, newUserCode);
    for (const code of codes) expect(code).toMatch(USER_CODE_FORMAT);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('uses every letter of its alphabet over many codes, so none is stuck', () => {
    const seen = new Set(Array.from({ length: 500 }, newUserCode).join('').replace(/-/g, ''));
    expect([...seen].sort().join('')).toBe('BCDFGHJKLMNPQRSTVWXZ');
  });
});
