import { describe, expect, it } from '@jest/globals';
import { hasAtMostDecimalPlaces } from './decimal-places.js';

describe('hasAtMostDecimalPlaces', () => {
  it('admits decimals within the places, however they are written', () => {
    for (const value of [0, 1, 12.5, 12.345, 99.999, 100, 1e2, 5e-3]) {
      expect([value, hasAtMostDecimalPlaces(value, 3)]).toEqual([value, true]);
    }
  });

  it('refuses what needs more places or is not a finite number', () => {
    for (const value of [1e-7, 12.3456, 0.0001, Number.MIN_VALUE, Infinity, NaN, '1']) {
      expect([value, hasAtMostDecimalPlaces(value, 3)]).toEqual([value, false]);
    }
  });
});
