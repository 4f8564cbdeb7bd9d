import { parseDecimal } from '../../common/rules/typed-comparison.js';
import { ClaimEvaluationError } from './claim-evaluation-error.js';
import { MAX_CLAIM_VALUE_LENGTH } from './claim-types.js';
import type { JsonValue } from './claim-types.js';

/** Conversions and checks shared by the expression evaluator and its functions. */

export function describeType(value: JsonValue): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

export function fail(message: string): never {
  throw new ClaimEvaluationError(message);
}

export function checkedString(value: string): string {
  if (value.length > MAX_CLAIM_VALUE_LENGTH) fail(`string longer than ${MAX_CLAIM_VALUE_LENGTH} characters`);
  return value;
}

export function checkedNumber(value: number): number {
  if (!Number.isFinite(value)) fail('arithmetic produced a non-finite number');
  return value;
}

export function isTruthy(value: JsonValue): boolean {
  return typeof value === 'object' ? value !== null : Boolean(value);
}

/** Null becomes '' so optional device fields concatenate cleanly. */
export function stringify(value: JsonValue): string {
  if (value === null) return '';
  return checkedString(typeof value === 'object' ? JSON.stringify(value) : String(value));
}

export function numberify(value: JsonValue): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') {
    return parseDecimal(value) ?? fail(`cannot convert ${JSON.stringify(value.slice(0, 40))} to a number`);
  }
  return fail(`cannot convert ${describeType(value)} to a number`);
}

export function expectNumber(value: JsonValue, where: string): number {
  return typeof value === 'number' ? value : fail(`${where} expects a number, got ${describeType(value)}`);
}

export function expectString(value: JsonValue, where: string): string {
  return typeof value === 'string' ? value : fail(`${where} expects a string, got ${describeType(value)}`);
}

/** Structural equality; JSON form is canonical enough for values that came from JSON or literals. */
export function valuesEqual(a: JsonValue, b: JsonValue): boolean {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a === b;
  return JSON.stringify(a) === JSON.stringify(b);
}
