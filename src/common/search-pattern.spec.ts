import { describe, expect, it } from '@jest/globals';
import { containsPattern } from './search-pattern.js';

describe('containsPattern', () => {
  it('wraps the search in wildcards', () => {
    expect(containsPattern('dark mode')).toBe('%dark mode%');
  });

  it('takes LIKE wildcards and the escape character literally', () => {
    expect(containsPattern('100%')).toBe('%100\\%%');
    expect(containsPattern('snake_case')).toBe('%snake\\_case%');
    expect(containsPattern('C:\\path')).toBe('%C:\\\\path%');
  });
});
