import { compareParsedVersions, parseVersion, type ParsedVersion } from '../version.js';

/**
 * How the two sides of a condition compare:
 * - `text`: as strings, by UTF-16 code units, case-sensitive;
 * - `number`: as decimal numbers; a side that is not one equals nothing and orders against nothing;
 * - `version`: as versions (src/common/version.ts); when either side is not a version they are equal
 *   only as identical text, and never ordered;
 * - `boolean`: `true` or `false`, read case-insensitively; equal or not, never ordered;
 * - `auto`: as numbers when both sides are numbers, else as text.
 */
export type ValueKind = 'text' | 'number' | 'version' | 'boolean' | 'auto';

/** A value parsed once into every form its kind compares by. */
export interface Operand {
  readonly text: string;
  /** NaN when the kind does not compare numbers or the text is not a finite decimal number. */
  readonly number: number;
  /** Null when the kind is not `version` or the text is not a version. */
  readonly version: ParsedVersion | null;
}

// Plain decimal notation only: Number() alone would also accept '', ' ', '0x1f' and 'Infinity'.
const DECIMAL_PATTERN = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The number a decimal string denotes, exactly as written; NaN when it is not a finite decimal number. */
export function parseFiniteNumber(text: string): number {
  if (!DECIMAL_PATTERN.test(text)) return NaN;
  const value = Number(text);
  return Number.isFinite(value) ? value : NaN;
}

/** The number a decimal string denotes, surrounding white space allowed; null when it is not one. */
export function parseDecimal(input: string): number | null {
  const value = parseFiniteNumber(input.trim());
  return Number.isNaN(value) ? null : value;
}

/** `true` or `false` in any case, surrounding white space allowed; null for anything else. */
export function parseBoolean(input: string): boolean | null {
  const normalized = input.trim().toLowerCase();
  return normalized === 'true' ? true : normalized === 'false' ? false : null;
}

/** The text of a boolean operand: `true` or `false` when it is one, else as given. */
function booleanText(text: string): string {
  const value = parseBoolean(text);
  return value === null ? text : String(value);
}

export function toOperand(text: string, kind: ValueKind): Operand {
  return {
    text: kind === 'boolean' ? booleanText(text) : text,
    number: kind === 'number' || kind === 'auto' ? parseFiniteNumber(text) : NaN,
    version: kind === 'version' ? parseVersion(text) : null,
  };
}

/** The operand of a typed value (a device field): a number keeps its value, whatever its text would parse to. */
export function operandOf(value: string | number | boolean, kind: ValueKind): Operand {
  if (typeof value !== 'number') return toOperand(String(value), kind);
  const text = String(value);
  return {
    text,
    number: kind === 'number' || kind === 'auto' ? value : NaN,
    version: kind === 'version' ? parseVersion(text) : null,
  };
}

export function operandsEqual(kind: ValueKind, a: Operand, b: Operand): boolean {
  switch (kind) {
    case 'version':
      return a.version && b.version ? compareParsedVersions(a.version, b.version) === 0 : a.text === b.text;
    case 'number':
      return !Number.isNaN(a.number) && !Number.isNaN(b.number) && a.number === b.number;
    case 'auto':
      return !Number.isNaN(a.number) && !Number.isNaN(b.number) ? a.number === b.number : a.text === b.text;
    case 'text':
    case 'boolean':
      return a.text === b.text;
  }
}

/** Negative, zero or positive as `a` sorts before, with or after `b`; null when the two cannot be ordered. */
export function compareOperands(kind: ValueKind, a: Operand, b: Operand): number | null {
  switch (kind) {
    case 'version':
      return a.version && b.version ? compareParsedVersions(a.version, b.version) : null;
    case 'number':
      return !Number.isNaN(a.number) && !Number.isNaN(b.number) ? a.number - b.number : null;
    case 'auto':
      return !Number.isNaN(a.number) && !Number.isNaN(b.number) ? a.number - b.number : compareText(a.text, b.text);
    case 'text':
      return compareText(a.text, b.text);
    case 'boolean':
      return null;
  }
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
