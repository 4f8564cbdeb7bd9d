import { describe, expect, it } from '@jest/globals';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from './json-depth.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('jsonDepthExceeds', () => {
  it('admits nesting up to the limit and refuses one level more, for arrays and objects', () => {
    expect(jsonDepthExceeds(bytes(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(jsonDepthExceeds(bytes(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    const objects = '{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1);
    expect(jsonDepthExceeds(bytes(objects))).toBe(true);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ note: '['.repeat(500), quoted: 'say \\"[[[[" twice', list: [[1]] });
    expect(jsonDepthExceeds(bytes(text))).toBe(false);
  });

  it('reads siblings as the same depth, and answers 100,000 levels in one pass', () => {
    expect(jsonDepthExceeds(bytes(`[${'[],'.repeat(10_000)}[]]`))).toBe(false);
    expect(jsonDepthExceeds(bytes(nested(100_000)))).toBe(true);
  });
});
