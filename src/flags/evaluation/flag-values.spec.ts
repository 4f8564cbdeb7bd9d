import { describe, expect, it } from '@jest/globals';
import type { FlagValueType } from './flag-types.js';
import { isValidFlagValue, parseFlagValue } from './flag-values.js';

describe('parseFlagValue', () => {
  it.each<[FlagValueType, string, unknown]>([
    ['boolean', 'true', true],
    ['boolean', 'false', false],
    ['integer', '42', 42],
    ['integer', '-7', -7],
    ['integer', '0', 0],
    ['integer', '9007199254740991', Number.MAX_SAFE_INTEGER],
    ['double', '0.25', 0.25],
    ['double', '-3', -3],
    ['double', '1e-3', 0.001],
    ['double', '.5', 0.5],
    ['string', '', ''],
    ['string', 'blue', 'blue'],
    ['json', '{"theme":"dark","sizes":[1,2]}', { theme: 'dark', sizes: [1, 2] }],
    ['json', 'null', null],
    ['json', '"text"', 'text'],
    ['json', '3', 3],
  ])('parses %s %j', (type, raw, value) => {
    expect(parseFlagValue(type, raw)).toEqual({ ok: true, value });
  });

  it.each<[FlagValueType, string, string]>([
    ['boolean', 'TRUE', 'must be true or false'],
    ['boolean', '1', 'must be true or false'],
    ['boolean', '', 'must be true or false'],
    ['integer', '1.5', 'must be a whole number between -(2^53-1) and 2^53-1'],
    ['integer', '9007199254740992', 'must be a whole number between -(2^53-1) and 2^53-1'],
    ['integer', '007', 'must be a whole number between -(2^53-1) and 2^53-1'],
    ['integer', ' 1', 'must be a whole number between -(2^53-1) and 2^53-1'],
    ['integer', '', 'must be a whole number between -(2^53-1) and 2^53-1'],
    ['double', 'Infinity', 'must be a finite decimal number'],
    ['double', '1e400', 'must be a finite decimal number'],
    ['double', 'NaN', 'must be a finite decimal number'],
    ['double', '0x10', 'must be a finite decimal number'],
    ['double', '', 'must be a finite decimal number'],
    ['json', '{theme: dark}', 'must be valid JSON'],
    ['json', '', 'must be valid JSON'],
  ])('rejects %s %j', (type, raw, message) => {
    expect(parseFlagValue(type, raw)).toEqual({ ok: false, message });
    expect(isValidFlagValue(type, raw)).toBe(false);
  });

  it('accepts any string for string flags', () => {
    expect(isValidFlagValue('string', '{not json')).toBe(true);
  });
});
