import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';

describe('toolchain', () => {
  it('runs ESM TypeScript', () => {
    expect(createHash('sha256').update('a').digest('hex')).toHaveLength(64);
  });
});
