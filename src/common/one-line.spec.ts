import { describe, expect, it } from '@jest/globals';
import { oneLine } from './one-line.js';

describe('oneLine', () => {
  it('folds line breaks and runs of spaces', () => {
    expect(oneLine(' Dark\r\nmode\t please ')).toBe('Dark mode please');
  });

  it('shortens long text to 120 characters', () => {
    const result = oneLine('x'.repeat(300));
    expect(result).toHaveLength(120);
    expect(result.endsWith('…')).toBe(true);
  });
});
