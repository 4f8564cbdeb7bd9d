import { describe, expect, it } from '@jest/globals';
import { ClaimEvaluationError } from './claim-evaluation-error.js';
import { MAX_CLAIM_VALUE_LENGTH } from './claim-types.js';
import type { ClaimDataType } from './claim-types.js';
import { parseIsoDate, serializeClaimValue, toRawValue, toTypedValue } from './typed-value.js';

describe('typing claim values', () => {
  it.each<[ClaimDataType, string, unknown]>([
    ['string', ' as is ', ' as is '],
    ['number', '42', 42],
    ['number', '-1.5e2', -150],
    ['number', ' 0.25 ', 0.25],
    ['boolean', 'true', true],
    ['boolean', 'false', false],
    ['array', '[1,"a",{"b":null}]', [1, 'a', { b: null }]],
    ['object', '{"tier":"gold","n":[1]}', { tier: 'gold', n: [1] }],
    ['date', '2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['date', '2024-02-29T10:20:30Z', '2024-02-29T10:20:30.000Z'],
    ['date', '2024-02-29T10:20:30.123456+02:00', '2024-02-29T08:20:30.123Z'],
    ['date', '2024-03-01T01:00-0130', '2024-03-01T02:30:00.000Z'],
    ['date', '2024-02-29T10:20', '2024-02-29T10:20:00.000Z'],
  ])('%s %j becomes %j', (dataType, raw, expected) => {
    expect(toTypedValue(raw, dataType)).toEqual(expected);
  });

  it.each<[ClaimDataType, string]>([
    ['number', 'abc'],
    ['number', ''],
    ['number', '0x10'],
    ['number', 'Infinity'],
    ['number', '1e400'],
    ['boolean', 'TRUE'],
    ['boolean', '1'],
    ['array', '{"a":1}'],
    ['array', '[1,'],
    ['object', '[1]'],
    ['object', 'null'],
    ['date', '2023-02-29'],
    ['date', '2024-13-01'],
    ['date', '2024-01-01T24:00:00Z'],
    ['date', '01/02/2024'],
    ['date', 'yesterday'],
  ])('%s %j is a conversion error', (dataType, raw) => {
    expect(() => toTypedValue(raw, dataType)).toThrow(ClaimEvaluationError);
  });

  it('reads a date-time without offset as UTC, whatever the server zone', () => {
    expect(parseIsoDate('2024-06-01T12:00:00')?.toISOString()).toBe('2024-06-01T12:00:00.000Z');
  });

  it('serializes typed values for display', () => {
    expect(serializeClaimValue({ a: [1, true] })).toBe('{"a":[1,true]}');
    expect(serializeClaimValue(1.5)).toBe('1.5');
    expect(serializeClaimValue(false)).toBe('false');
  });

  it('turns expression results into their string form and caps the size', () => {
    expect(toRawValue(null)).toBeNull();
    expect(toRawValue([1, 'x'])).toBe('[1,"x"]');
    expect(() => toRawValue('x'.repeat(MAX_CLAIM_VALUE_LENGTH + 1))).toThrow('longer than');
  });
});
