import { describe, expect, it } from '@jest/globals';
import { canonicalJson } from './canonical-json.js';

describe('canonicalJson', () => {
  it('sorts the keys of every object, however deep, and keeps array order', () => {
    const value = { b: 1, a: { z: [3, { y: 1, x: 2 }], c: null }, A: true };
    expect(canonicalJson(value)).toBe('{"A":true,"a":{"c":null,"z":[3,{"x":2,"y":1}]},"b":1}');
  });

  it('leaves out undefined members like JSON.stringify and keeps unicode as is', () => {
    expect(canonicalJson({ b: undefined, a: 'é✓' })).toBe('{"a":"é✓"}');
  });

  it('gives the same bytes for the same content in any key order', () => {
    expect(canonicalJson({ x: 1, y: { b: 2, a: 1 } })).toBe(canonicalJson({ y: { a: 1, b: 2 }, x: 1 }));
  });

  it('writes dates as JSON.stringify does, and scalars and arrays unchanged', () => {
    const at = new Date('2024-05-01T10:00:00.000Z');
    expect(canonicalJson({ at, list: [{ b: 1, a: at }] })).toBe(
      '{"at":"2024-05-01T10:00:00.000Z","list":[{"a":"2024-05-01T10:00:00.000Z","b":1}]}',
    );
    expect([null, 1.5, 'x', true, [2, 1]].map((value) => canonicalJson(value))).toEqual([
      'null',
      '1.5',
      '"x"',
      'true',
      '[2,1]',
    ]);
  });

  it('keeps a __proto__ key that parsed JSON carries as a key', () => {
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":1}}'))).toBe('{"__proto__":{"x":1},"b":1}');
  });
});
