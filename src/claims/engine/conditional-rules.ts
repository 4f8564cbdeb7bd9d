import { compareVersions, isVersion } from '../../common/version.js';
import { ClaimEvaluationError } from './claim-evaluation-error.js';
import { CONDITION_FIELDS, CONDITION_OPERATORS, MAX_CLAIM_VALUE_LENGTH, RULE_OPERATORS } from './claim-types.js';
import type { ConditionOperator, DeviceContext, FieldError, RuleOperator } from './claim-types.js';
import { CONDITION_FIELD_SPECS } from './device-variables.js';
import type { FieldKind } from './device-variables.js';
import { formatFieldErrors, isIntegerInRange, isOneOf, isRecord } from './input-checks.js';
import { parseDecimal } from './typed-value.js';
import { compileLinearRegex } from '../../common/rules/linear-regex.js';

export const MAX_RULES = 50;
export const MAX_CONDITIONS_PER_RULE = 20;
export const MAX_CONDITION_VALUE_LENGTH = 1000;

type DeviceValue = string | number | boolean;
type Expected = string | number | boolean;
type Matcher = (actual: DeviceValue) => boolean;
type Predicate = (context: DeviceContext) => boolean;

export interface CompiledRule {
  operator: RuleOperator;
  conditions: Predicate[];
  value: string;
  priority: number;
}

/** A condition whose operator or value does not fit its field. */
class ConditionProblem extends Error {
  constructor(
    readonly part: 'operator' | 'value',
    message: string,
  ) {
    super(message);
  }
}

type NegativeOperator = 'not_equals' | 'not_contains' | 'not_in_list';
type PositiveOperator = Exclude<ConditionOperator, NegativeOperator>;

// Negative operators are exact negations, so a missing device field fails `equals` and passes `not_equals`.
const NEGATIONS: Readonly<Record<NegativeOperator, PositiveOperator>> = {
  not_equals: 'equals',
  not_contains: 'contains',
  not_in_list: 'in_list',
};

function isNegative(operator: ConditionOperator): operator is NegativeOperator {
  return Object.hasOwn(NEGATIONS, operator);
}

function parseExpected(kind: FieldKind, text: string): Expected {
  switch (kind) {
    case 'string':
      return text;
    case 'number':
      return parseDecimal(text) ?? fail(`${JSON.stringify(text)} is not a number`);
    case 'version':
      return isVersion(text) ? text.trim() : fail(`${JSON.stringify(text)} is not a version number`);
    case 'boolean': {
      const normalized = text.trim().toLowerCase();
      return normalized === 'true'
        ? true
        : normalized === 'false'
          ? false
          : fail(`${JSON.stringify(text)} is not true or false`);
    }
  }
}

function fail(message: string): never {
  throw new ConditionProblem('value', message);
}

/** Negative, zero or positive like a comparator; null when the device value cannot be compared. */
function compare(kind: FieldKind, actual: DeviceValue, expected: Expected): number | null {
  switch (kind) {
    case 'number':
      return typeof actual === 'number' ? actual - (expected as number) : null;
    case 'version':
      return compareVersions(String(actual), expected as string);
    case 'boolean':
      return actual === expected ? 0 : 1;
    case 'string': {
      const text = String(actual);
      return text === expected ? 0 : text < (expected as string) ? -1 : 1;
    }
  }
}

function listItems(text: string): string[] {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  if (items.length === 0) fail('list has no items');
  return items;
}

function orderingMatcher(kind: FieldKind, text: string, accepts: (order: number) => boolean): Matcher {
  const expected = parseExpected(kind, text);
  return (actual) => {
    const order = compare(kind, actual, expected);
    return order !== null && accepts(order);
  };
}

function positiveMatcher(kind: FieldKind, operator: PositiveOperator, text: string): Matcher {
  if (kind === 'boolean' && operator !== 'equals' && operator !== 'in_list') {
    throw new ConditionProblem('operator', `operator ${operator} does not apply to a true/false field`);
  }
  switch (operator) {
    case 'equals': {
      const expected = parseExpected(kind, text);
      return (actual) => compare(kind, actual, expected) === 0;
    }
    case 'greater_than':
      return orderingMatcher(kind, text, (order) => order > 0);
    case 'less_than':
      return orderingMatcher(kind, text, (order) => order < 0);
    case 'greater_than_or_equal':
      return orderingMatcher(kind, text, (order) => order >= 0);
    case 'less_than_or_equal':
      return orderingMatcher(kind, text, (order) => order <= 0);
    case 'in_list': {
      const expected = listItems(text).map((item) => parseExpected(kind, item));
      return (actual) => expected.some((item) => compare(kind, actual, item) === 0);
    }
    case 'contains':
      return (actual) => String(actual).includes(text);
    case 'starts_with':
      return (actual) => String(actual).startsWith(text);
    case 'ends_with':
      return (actual) => String(actual).endsWith(text);
    case 'regex': {
      const compiled = compileLinearRegex(text);
      if (!compiled.ok) fail(compiled.message);
      const { regex } = compiled;
      return (actual) => regex.test(String(actual));
    }
  }
}

function isConditionValue(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_CONDITION_VALUE_LENGTH;
}

function buildPredicate(input: Record<string, unknown>, path: string, problems: FieldError[]): Predicate | null {
  const { field, operator, value } = input;
  if (!isOneOf(CONDITION_FIELDS, field)) {
    problems.push({ field: `${path}.field`, message: `must be one of ${CONDITION_FIELDS.join(', ')}` });
  }
  if (!isOneOf(CONDITION_OPERATORS, operator)) {
    problems.push({ field: `${path}.operator`, message: `must be one of ${CONDITION_OPERATORS.join(', ')}` });
  }
  if (!isConditionValue(value)) {
    problems.push({
      field: `${path}.value`,
      message: `must be a string of at most ${MAX_CONDITION_VALUE_LENGTH} characters`,
    });
  }
  if (!isOneOf(CONDITION_FIELDS, field) || !isOneOf(CONDITION_OPERATORS, operator) || !isConditionValue(value)) {
    return null;
  }
  const spec = CONDITION_FIELD_SPECS[field];
  try {
    const negated = isNegative(operator);
    const matcher = positiveMatcher(spec.kind, negated ? NEGATIONS[operator] : operator, value);
    return (context) => {
      const actual = spec.read(context);
      const matched = actual !== undefined && actual !== null && matcher(actual);
      return negated ? !matched : matched;
    };
  } catch (error) {
    if (!(error instanceof ConditionProblem)) throw error;
    problems.push({ field: `${path}.${error.part}`, message: error.message });
    return null;
  }
}

function compileConditions(input: unknown, path: string, problems: FieldError[]): Predicate[] {
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_CONDITIONS_PER_RULE) {
    problems.push({ field: path, message: `must be an array of 1 to ${MAX_CONDITIONS_PER_RULE} conditions` });
    return [];
  }
  return input.flatMap((condition, index) => {
    const conditionPath = `${path}[${index}]`;
    if (!isRecord(condition)) {
      problems.push({ field: conditionPath, message: 'must be an object with field, operator and value' });
      return [];
    }
    return buildPredicate(condition, conditionPath, problems) ?? [];
  });
}

function compileRule(input: unknown, path: string, problems: FieldError[]): CompiledRule | null {
  if (!isRecord(input)) {
    problems.push({ field: path, message: 'must be an object with operator, conditions, value and priority' });
    return null;
  }
  const before = problems.length;
  const { operator, value, priority, id } = input;
  if (!isOneOf(RULE_OPERATORS, operator)) problems.push({ field: `${path}.operator`, message: 'must be AND or OR' });
  if (typeof value !== 'string' || value.length > MAX_CLAIM_VALUE_LENGTH) {
    problems.push({
      field: `${path}.value`,
      message: `must be a string of at most ${MAX_CLAIM_VALUE_LENGTH} characters`,
    });
  }
  if (!isIntegerInRange(priority, -1_000_000, 1_000_000)) {
    problems.push({ field: `${path}.priority`, message: 'must be an integer' });
  }
  if (id !== undefined && id !== null && typeof id !== 'string') {
    problems.push({ field: `${path}.id`, message: 'must be a string' });
  }
  const conditions = compileConditions(input.conditions, `${path}.conditions`, problems);
  if (problems.length > before) return null;
  return { operator: operator as RuleOperator, conditions, value: value as string, priority: priority as number };
}

/**
 * Checks and compiles rules, reporting problems by path (`conditionalRules[1].conditions[0].value`).
 * The result is sorted by priority; equal priorities keep their order in the definition.
 */
export function compileConditionalRules(input: unknown, path: string, problems: FieldError[]): CompiledRule[] {
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_RULES) {
    problems.push({ field: path, message: `must be an array of 1 to ${MAX_RULES} rules` });
    return [];
  }
  const rules = input.flatMap((rule, index) => compileRule(rule, `${path}[${index}]`, problems) ?? []);
  return rules.sort((a, b) => a.priority - b.priority);
}

function ruleMatches(rule: CompiledRule, context: DeviceContext): boolean {
  return rule.operator === 'AND'
    ? rule.conditions.every((condition) => condition(context))
    : rule.conditions.some((condition) => condition(context));
}

/** The value of the first matching rule in priority order, or null when none matches. */
export function evaluateConditionalRules(rules: unknown, context: DeviceContext): string | null {
  const problems: FieldError[] = [];
  const compiled = compileConditionalRules(rules, 'conditionalRules', problems);
  if (problems.length > 0) throw new ClaimEvaluationError(formatFieldErrors(problems));
  return compiled.find((rule) => ruleMatches(rule, context))?.value ?? null;
}
