import { describe, expect, it } from '@jest/globals';
import { compareVersions, isVersion } from './version.js';

describe('versions', () => {
  it.each([
    ['1.0', '1.0.0', 0],
    ['2.1.3', '2.1.10', -1],
    ['2.1.3-beta', '2.1.3', -1],
    ['2.1.3-beta.2', '2.1.3-beta.10', -1],
    ['2.1.3-alpha', '2.1.3-beta', -1],
    ['2.1.3-1', '2.1.3-alpha', -1],
    ['10', '9.9.9', 1],
    ['v1.2+45', '1.2.0', 0],
  ])('orders %s against %s as %i', (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b) ?? NaN)).toBe(sign);
  });

  it('recognises version numbers and rejects the rest', () => {
    expect(['2.1.0', '1.0', '2.1.3-beta', '7'].every(isVersion)).toBe(true);
    expect(['', 'abc', '1..2', '1.2.3.4.5', '1.2-'].some(isVersion)).toBe(false);
    expect(compareVersions('x', '1.0')).toBeNull();
  });
});
