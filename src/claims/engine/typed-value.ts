import { parseDecimal } from '../../common/rules/typed-comparison.js';
import { ClaimEvaluationError } from './claim-evaluation-error.js';
import { MAX_CLAIM_VALUE_LENGTH } from './claim-types.js';
import type { ClaimDataType, ClaimValue, JsonValue } from './claim-types.js';

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

function offsetMinutes(zone: string | undefined): number | null {
  if (zone === undefined || zone === 'Z') return 0;
  const digits = zone.replace(':', '');
  const hours = Number(digits.slice(1, 3));
  const minutes = Number(digits.slice(3, 5));
  if (hours > 23 || minutes > 59) return null;
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}

/**
 * Parses ISO 8601 dates and date-times. A date-time without offset is read as UTC so the
 * result never depends on the server's time zone; impossible dates (Feb 30) are refused
 * rather than rolled over as Date.parse does.
 */
export function parseIsoDate(input: string): Date | null {
  const match = ISO_DATE.exec(input.trim());
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0));
  const millis = Number((match[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offset = offsetMinutes(match[8]);
  if (offset === null || hour > 23 || minute > 59 || second > 59) return null;
  const utc = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis));
  utc.setUTCFullYear(year);
  if (utc.getUTCMonth() !== month - 1 || utc.getUTCDate() !== day) return null;
  return new Date(utc.getTime() - offset * 60_000);
}

function parseJson(raw: string): JsonValue | undefined {
  try {
    return JSON.parse(raw) as JsonValue;
  } catch {
    return undefined;
  }
}

/** Converts a claim's string form to its declared data type; a mismatch is an evaluation error. */
export function toTypedValue(raw: string, dataType: ClaimDataType): ClaimValue {
  const fail = (expected: string): never => {
    throw new ClaimEvaluationError(`value ${preview(raw)} is not ${expected}`);
  };
  switch (dataType) {
    case 'string':
      return raw;
    case 'number':
      return parseDecimal(raw) ?? fail('a finite number');
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : fail("'true' or 'false'");
    case 'array': {
      const parsed = parseJson(raw);
      return Array.isArray(parsed) ? parsed : fail('a JSON array');
    }
    case 'object': {
      const parsed = parseJson(raw);
      return isJsonObject(parsed) ? parsed : fail('a JSON object');
    }
    case 'date':
      return parseIsoDate(raw)?.toISOString() ?? fail('an ISO 8601 date');
    default:
      // Reached only by definitions stored without validation.
      throw new ClaimEvaluationError(`unknown dataType ${String(dataType)}`);
  }
}

export function isJsonObject(value: unknown): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The string a typed value is shown as in test results (`evaluatedValue`). */
export function serializeClaimValue(value: ClaimValue): string {
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/**
 * The string form of a value produced by an expression or an external source, before typing.
 * Null means "no value".
 */
export function toRawValue(value: JsonValue): string | null {
  if (value === null) return null;
  const raw = serializeClaimValue(value);
  if (raw.length > MAX_CLAIM_VALUE_LENGTH) {
    throw new ClaimEvaluationError(`value is longer than ${MAX_CLAIM_VALUE_LENGTH} characters`);
  }
  return raw;
}

function preview(raw: string): string {
  return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}...` : raw);
}
