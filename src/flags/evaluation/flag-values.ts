import { parseFiniteNumber } from '../../common/rules/typed-comparison.js';
import type { FlagValue, FlagValueType, JsonValue } from './flag-types.js';

export type FlagValueParseResult =
  { readonly ok: true; readonly value: FlagValue } | { readonly ok: false; readonly message: string };

const INTEGER_PATTERN = /^-?(?:0|[1-9]\d*)$/;

export function parseFlagValue(type: FlagValueType, raw: string): FlagValueParseResult {
  switch (type) {
    case 'boolean':
      if (raw === 'true') return { ok: true, value: true };
      if (raw === 'false') return { ok: true, value: false };
      return { ok: false, message: 'must be true or false' };
    case 'integer': {
      const value = INTEGER_PATTERN.test(raw) ? Number(raw) : NaN;
      return Number.isSafeInteger(value)
        ? { ok: true, value }
        : { ok: false, message: 'must be a whole number between -(2^53-1) and 2^53-1' };
    }
    case 'double': {
      const value = parseFiniteNumber(raw);
      return Number.isNaN(value) ? { ok: false, message: 'must be a finite decimal number' } : { ok: true, value };
    }
    case 'string':
      return { ok: true, value: raw };
    case 'json':
      try {
        return { ok: true, value: JSON.parse(raw) as JsonValue };
      } catch {
        return { ok: false, message: 'must be valid JSON' };
      }
  }
}

export function isValidFlagValue(type: FlagValueType, raw: string): boolean {
  return parseFlagValue(type, raw).ok;
}
