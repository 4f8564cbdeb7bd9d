import { describe, expect, it } from '@jest/globals';
import { parseListValue } from './list-value.js';

describe('parseListValue', () => {
  it('splits on commas, trims, drops empty items and honours escapes', () => {
    expect(parseListValue(' a, b ,,c ')).toEqual(['a', 'b', 'c']);
    expect(parseListValue('iPhone14\\,2,x\\\\y')).toEqual(['iPhone14,2', 'x\\y']);
    expect(parseListValue(' , ')).toEqual([]);
  });

  it('reads country lists as both surfaces write them', () => {
    expect(parseListValue('DE,FR,IT')).toEqual(['DE', 'FR', 'IT']);
    expect(parseListValue('DE,FR,IT', 'plain')).toEqual(['DE', 'FR', 'IT']);
    expect(parseListValue('US, DE ,FR', 'plain')).toEqual(['US', 'DE', 'FR']);
  });

  it('splits on every comma in the plain syntax, a backslash being an ordinary character', () => {
    expect(parseListValue('iPhone14\\,2, x\\\\y', 'plain')).toEqual(['iPhone14\\', '2', 'x\\\\y']);
    expect(parseListValue(' , ', 'plain')).toEqual([]);
    expect(parseListValue('', 'plain')).toEqual([]);
  });

  it('keeps a backslash that escapes nothing, and a trailing one', () => {
    expect(parseListValue('a\\b,c\\')).toEqual(['a\\b', 'c\\']);
  });
});
