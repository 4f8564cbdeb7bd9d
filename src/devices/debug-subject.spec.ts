import { describe, expect, it } from '@jest/globals';
import { debugSubject, debugTokenIdOf } from './debug-subject.js';

const ID = '0b8f6a52-3c1e-4d5f-9a7b-1c2d3e4f5a6b';

describe('debug subjects', () => {
  it('reads the debug token back from the subject, with or without a device id', () => {
    expect(debugTokenIdOf(debugSubject(ID, undefined))).toBe(ID);
    expect(debugTokenIdOf(debugSubject(ID, 'ci-runner:7'))).toBe(ID);
  });

  it('finds no debug token in an attested key id or a malformed subject', () => {
    expect(debugTokenIdOf('q1xKx7Ej0mX3Qy6c1e4V0w2l1L6p2m5h3o1y1r0t9aQ=')).toBeNull();
    expect(debugTokenIdOf('debug:not-a-uuid')).toBeNull();
    expect(debugTokenIdOf(`debug:${ID}x`)).toBeNull();
  });
});
