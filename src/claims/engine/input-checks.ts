import type { FieldError } from './claim-types.js';

/** Shape checks for definitions that arrive as untyped request bodies or stored JSON. */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isOneOf<T extends string>(list: readonly T[], candidate: unknown): candidate is T {
  return typeof candidate === 'string' && (list as readonly string[]).includes(candidate);
}

export function isStringMap(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((item) => typeof item === 'string');
}

export function isIntegerInRange(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** One line for an evaluation error raised by a definition that was stored without validation. */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  return errors.map(({ field, message }) => `${field}: ${message}`).join('; ');
}
