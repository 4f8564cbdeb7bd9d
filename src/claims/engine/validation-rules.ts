import { ClaimEvaluationError } from './claim-evaluation-error.js';
import { MAX_CLAIM_VALUE_LENGTH } from './claim-types.js';
import type { ClaimDataType, ClaimValue, FieldError, JsonValue, ValidationRules } from './claim-types.js';
import { compileExpression, evaluateExpression, validateExpression } from './expression-language.js';
import type { ExpressionScope } from './expression-language.js';
import { valuesEqual } from './expression-values.js';
import { isIntegerInRange, isRecord } from './input-checks.js';
import { compileLinearRegex } from '../../common/rules/linear-regex.js';
import { parseDecimal } from '../../common/rules/typed-comparison.js';
import { serializeClaimValue, toTypedValue } from './typed-value.js';

export const MAX_ALLOWED_VALUES = 100;

/** Arrays are measured in items, every other type by the length of its string form. */
function lengthOf(value: ClaimValue): number {
  return Array.isArray(value) ? value.length : serializeClaimValue(value).length;
}

function numericValue(value: ClaimValue): number | null {
  return typeof value === 'number' ? value : parseDecimal(serializeClaimValue(value));
}

/** Allowed values are compared after typing them like the claim, so `1.0` allows `1` for a number. */
function isAllowed(value: ClaimValue, allowed: readonly JsonValue[], dataType: ClaimDataType): boolean {
  return allowed.some((item) => {
    const raw = typeof item === 'string' ? item : JSON.stringify(item);
    try {
      return valuesEqual(toTypedValue(raw, dataType), value);
    } catch (error) {
      if (error instanceof ClaimEvaluationError) return false;
      throw error;
    }
  });
}

function customValidationError(source: string, value: ClaimValue, scope: ExpressionScope): string | null {
  try {
    const verdict = evaluateExpression(compileExpression(source, { allowValue: true }), { ...scope, value });
    return verdict === true ? null : 'value failed customValidation';
  } catch (error) {
    if (error instanceof ClaimEvaluationError) return `customValidation: ${error.message}`;
    throw error;
  }
}

function rangeErrors(value: ClaimValue, rules: ValidationRules): string[] {
  const { minValue, maxValue } = rules;
  if (typeof minValue !== 'number' && typeof maxValue !== 'number') return [];
  const number = numericValue(value);
  if (number === null) return ['minValue and maxValue need a numeric value'];
  const errors: string[] = [];
  if (typeof minValue === 'number' && number < minValue) errors.push(`value is less than minValue ${minValue}`);
  if (typeof maxValue === 'number' && number > maxValue) errors.push(`value is greater than maxValue ${maxValue}`);
  return errors;
}

/** Every rule the typed value breaks; `required` is handled by the caller, which sees missing values. */
export function applyValidationRules(
  rules: ValidationRules,
  value: ClaimValue,
  dataType: ClaimDataType,
  scope: ExpressionScope,
): string[] {
  const errors: string[] = [];
  const length = lengthOf(value);
  if (typeof rules.minLength === 'number' && length < rules.minLength) {
    errors.push(`length is less than minLength ${rules.minLength}`);
  }
  if (typeof rules.maxLength === 'number' && length > rules.maxLength) {
    errors.push(`length is greater than maxLength ${rules.maxLength}`);
  }
  if (typeof rules.pattern === 'string') {
    const compiled = compileLinearRegex(rules.pattern);
    if (!compiled.ok) throw new ClaimEvaluationError(`pattern ${compiled.message}`);
    if (!compiled.regex.test(serializeClaimValue(value))) errors.push(`value does not match pattern ${rules.pattern}`);
  }
  errors.push(...rangeErrors(value, rules));
  if (Array.isArray(rules.allowedValues) && !isAllowed(value, rules.allowedValues, dataType)) {
    errors.push('value is not one of allowedValues');
  }
  if (typeof rules.customValidation === 'string') {
    const error = customValidationError(rules.customValidation, value, scope);
    if (error) errors.push(error);
  }
  return errors;
}

function isAbsent(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}

function checkBounds(rules: Record<string, unknown>, path: string, problems: FieldError[]): void {
  const { minLength, maxLength, minValue, maxValue } = rules;
  for (const [name, bound] of [
    ['minLength', minLength],
    ['maxLength', maxLength],
  ] as const) {
    if (!isAbsent(bound) && !isIntegerInRange(bound, 0, MAX_CLAIM_VALUE_LENGTH)) {
      problems.push({ field: `${path}.${name}`, message: `must be an integer from 0 to ${MAX_CLAIM_VALUE_LENGTH}` });
    }
  }
  for (const [name, bound] of [
    ['minValue', minValue],
    ['maxValue', maxValue],
  ] as const) {
    if (!isAbsent(bound) && !(typeof bound === 'number' && Number.isFinite(bound))) {
      problems.push({ field: `${path}.${name}`, message: 'must be a number' });
    }
  }
  if (typeof minLength === 'number' && typeof maxLength === 'number' && minLength > maxLength) {
    problems.push({ field: `${path}.maxLength`, message: 'must not be less than minLength' });
  }
  if (typeof minValue === 'number' && typeof maxValue === 'number' && minValue > maxValue) {
    problems.push({ field: `${path}.maxValue`, message: 'must not be less than minValue' });
  }
}

function checkAllowedValues(
  allowed: unknown,
  dataType: ClaimDataType | null,
  path: string,
  problems: FieldError[],
): void {
  if (isAbsent(allowed)) return;
  if (!Array.isArray(allowed) || allowed.length > MAX_ALLOWED_VALUES) {
    problems.push({ field: path, message: `must be an array of at most ${MAX_ALLOWED_VALUES} values` });
    return;
  }
  allowed.forEach((item, index) => {
    const raw = typeof item === 'string' ? item : JSON.stringify(item);
    try {
      if (dataType) toTypedValue(raw, dataType);
    } catch (error) {
      if (!(error instanceof ClaimEvaluationError)) throw error;
      problems.push({ field: `${path}[${index}]`, message: error.message });
    }
  });
}

/** Problems in a `validationRules` object; dataType is null when the claim's own dataType is invalid. */
export function checkValidationRules(
  input: unknown,
  dataType: ClaimDataType | null,
  path: string,
  problems: FieldError[],
): void {
  if (isAbsent(input)) return;
  if (!isRecord(input)) {
    problems.push({ field: path, message: 'must be an object' });
    return;
  }
  const { required, pattern, customValidation } = input;
  if (!isAbsent(required) && typeof required !== 'boolean') {
    problems.push({ field: `${path}.required`, message: 'must be a boolean' });
  }
  checkBounds(input, path, problems);
  if (!isAbsent(pattern)) {
    const compiled = typeof pattern === 'string' ? compileLinearRegex(pattern) : null;
    const problem = compiled ? (compiled.ok ? null : compiled.message) : 'must be a string';
    if (problem) problems.push({ field: `${path}.pattern`, message: problem });
  }
  checkAllowedValues(input.allowedValues, dataType, `${path}.allowedValues`, problems);
  if (!isAbsent(customValidation)) {
    const errors =
      typeof customValidation === 'string'
        ? validateExpression(customValidation, { allowValue: true })
        : ['must be a string'];
    for (const message of errors) problems.push({ field: `${path}.customValidation`, message });
  }
}
