import { describe, expect, it } from '@jest/globals';
import {
  compareOperands,
  operandOf,
  operandsEqual,
  parseDecimal,
  parseFiniteNumber,
  toOperand,
  type ValueKind,
} from './typed-comparison.js';

function equal(kind: ValueKind, a: string, b: string): boolean {
  return operandsEqual(kind, toOperand(a, kind), toOperand(b, kind));
}

function order(kind: ValueKind, a: string, b: string): number | null {
  const sign = compareOperands(kind, toOperand(a, kind), toOperand(b, kind));
  return sign === null ? null : Math.sign(sign);
}

describe('parseFiniteNumber', () => {
  it('reads decimal notation only', () => {
    expect(parseFiniteNumber('12.5')).toBe(12.5);
    expect(parseFiniteNumber('+3')).toBe(3);
    expect([' ', '', '0x1f', '1_000', 'Infinity', '1e999'].map(parseFiniteNumber).every(Number.isNaN)).toBe(true);
  });

  it('takes the text exactly as written', () => {
    expect(parseFiniteNumber(' 4')).toBeNaN();
    expect(parseFiniteNumber('.5')).toBe(0.5);
    expect(parseFiniteNumber('-1.5e2')).toBe(-150);
  });
});

describe('parseDecimal', () => {
  it('allows surrounding white space and answers null for anything else that is not a finite decimal', () => {
    expect(parseDecimal(' 0.25 ')).toBe(0.25);
    expect(parseDecimal('-1.5e2')).toBe(-150);
    expect(['abc', '', '0x10', 'Infinity', '1e400', '1 2'].map(parseDecimal)).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
  });
});

describe('typed comparison', () => {
  it('compares numbers by value, never as text, and orders nothing against a non-number', () => {
    expect(equal('number', '75', '75.0')).toBe(true);
    expect(equal('number', '7', '75')).toBe(false);
    expect(order('number', '75', '100')).toBe(-1);
    expect(order('number', '1e1', '9')).toBe(1);
    expect(equal('number', 'high', 'high')).toBe(false);
    expect(order('number', '75', 'high')).toBeNull();
  });

  it('compares versions semantically and falls back to identical text when either side is not a version', () => {
    expect(equal('version', '2.10', '2.10.0')).toBe(true);
    expect(order('version', '2.10.0', '2.9')).toBe(1);
    expect(order('version', '17.4-beta.2', '17.4')).toBe(-1);
    expect(order('version', '2.1.3.4', '2.1.3.5')).toBe(-1);
    expect(equal('version', 'nightly', 'nightly')).toBe(true);
    expect(equal('version', 'nightly', '1.0')).toBe(false);
    expect(order('version', 'nightly', '1.0')).toBeNull();
  });

  it('compares text case-sensitively by code units, numbers included', () => {
    expect(equal('text', 'US', 'us')).toBe(false);
    expect(order('text', 'iPhone15,2', 'iPhone14')).toBe(1);
    expect(order('text', '10', '9')).toBe(-1);
    expect(equal('text', '10', '10.0')).toBe(false);
  });

  it('compares numbers when both sides are numbers and text otherwise, in the auto kind', () => {
    expect(order('auto', '10', '9')).toBe(1);
    expect(equal('auto', '10', '10.0')).toBe(true);
    expect(order('auto', '10', 'x')).toBe(-1);
    expect(equal('auto', '10', '0xa')).toBe(false);
    expect(order('auto', 'b', 'a')).toBe(1);
  });

  it('reads booleans case-insensitively and never orders them', () => {
    expect(equal('boolean', 'TRUE', ' true ')).toBe(true);
    expect(equal('boolean', 'false', 'true')).toBe(false);
    expect(order('boolean', 'true', 'true')).toBeNull();
    expect(operandsEqual('boolean', operandOf(false, 'boolean'), toOperand('False', 'boolean'))).toBe(true);
  });

  it('keeps the value of a typed number and its text for text operators', () => {
    const risk = operandOf(42, 'number');
    expect(risk).toEqual({ text: '42', number: 42, version: null });
    expect(operandsEqual('number', risk, toOperand('42.0', 'number'))).toBe(true);
    expect(operandOf(42, 'text')).toEqual({ text: '42', number: NaN, version: null });
  });

  it('parses each operand once into the forms its kind needs', () => {
    expect(toOperand('2.1', 'version')).toEqual({
      text: '2.1',
      number: NaN,
      version: { parts: [2, 1], prerelease: [] },
    });
    expect(toOperand('2.1', 'auto')).toEqual({ text: '2.1', number: 2.1, version: null });
    expect(toOperand('2.1', 'text')).toEqual({ text: '2.1', number: NaN, version: null });
  });
});
