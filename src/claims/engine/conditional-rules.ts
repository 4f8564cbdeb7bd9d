import { compileConditionTest } from '../../common/rules/conditions.js';
import { parseListValue } from '../../common/rules/list-value.js';
import {
  CONDITION_OPERATORS,
  isConditionOperator,
  isNegatedOperator,
  isOrderingOperator,
  positiveOperator,
  type ConditionOperator,
} from '../../common/rules/operators.js';
import { operandOf, parseBoolean, parseDecimal } from '../../common/rules/typed-comparison.js';
import { isVersion } from '../../common/version.js';
import { ClaimEvaluationError } from './claim-evaluation-error.js';
import { CONDITION_FIELDS, MAX_CLAIM_VALUE_LENGTH, RULE_OPERATORS } from './claim-types.js';
import type { DeviceContext, FieldError, RuleOperator } from './claim-types.js';
import { CONDITION_FIELD_SPECS } from './device-variables.js';
import type { FieldKind } from './device-variables.js';
import { formatFieldErrors, isIntegerInRange, isOneOf, isRecord } from './input-checks.js';

/**
 * Claim conditional rules on the rule kernel (src/common/rules/): what is the claims' own is the
 * rule shape (AND/OR, priority, limits), which device fields exist and how each compares, that a
 * field the device did not report fails every operator but the negated ones, which it passes, that
 * `in_list` splits on every comma, and the messages of a refused condition.
 */

export const MAX_RULES = 50;
export const MAX_CONDITIONS_PER_RULE = 20;
export const MAX_CONDITION_VALUE_LENGTH = 1000;

type Predicate = (context: DeviceContext) => boolean;

export interface CompiledRule {
  operator: RuleOperator;
  conditions: Predicate[];
  value: string;
  priority: number;
}

interface ConditionProblem {
  readonly part: 'operator' | 'value';
  readonly message: string;
}

/** Why one expected value does not fit its field, or null when it does. */
function expectedValueProblem(kind: FieldKind, text: string): string | null {
  switch (kind) {
    case 'text':
      return null;
    case 'number':
      return parseDecimal(text) === null ? `${JSON.stringify(text)} is not a number` : null;
    case 'version':
      return isVersion(text) ? null : `${JSON.stringify(text)} is not a version number`;
    case 'boolean':
      return parseBoolean(text) === null ? `${JSON.stringify(text)} is not true or false` : null;
  }
}

/**
 * The first problem of a condition whose operator or value does not fit its field: a true/false
 * field takes equality only, and a value compared typed (equality, order, list items) must be of
 * the field's type. A negated operator is checked as the one it negates.
 */
function conditionProblem(kind: FieldKind, operator: ConditionOperator, text: string): ConditionProblem | null {
  const positive = positiveOperator(operator);
  if (kind === 'boolean' && positive !== 'equals' && positive !== 'in_list') {
    return { part: 'operator', message: `operator ${positive} does not apply to a true/false field` };
  }
  if (positive === 'equals' || isOrderingOperator(positive)) {
    const message = expectedValueProblem(kind, text);
    return message === null ? null : { part: 'value', message };
  }
  if (positive === 'in_list') {
    const items = parseListValue(text, 'plain');
    if (items.length === 0) return { part: 'value', message: 'list has no items' };
    for (const item of items) {
      const message = expectedValueProblem(kind, item);
      if (message !== null) return { part: 'value', message };
    }
  }
  return null;
}

function isConditionValue(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_CONDITION_VALUE_LENGTH;
}

function buildPredicate(input: Record<string, unknown>, path: string, problems: FieldError[]): Predicate | null {
  const { field, operator, value } = input;
  if (!isOneOf(CONDITION_FIELDS, field)) {
    problems.push({ field: `${path}.field`, message: `must be one of ${CONDITION_FIELDS.join(', ')}` });
  }
  if (!isConditionOperator(operator)) {
    problems.push({ field: `${path}.operator`, message: `must be one of ${CONDITION_OPERATORS.join(', ')}` });
  }
  if (!isConditionValue(value)) {
    problems.push({
      field: `${path}.value`,
      message: `must be a string of at most ${MAX_CONDITION_VALUE_LENGTH} characters`,
    });
  }
  if (!isOneOf(CONDITION_FIELDS, field) || !isConditionOperator(operator) || !isConditionValue(value)) {
    return null;
  }
  const spec = CONDITION_FIELD_SPECS[field];
  const problem = conditionProblem(spec.kind, operator, value);
  if (problem) {
    problems.push({ field: `${path}.${problem.part}`, message: problem.message });
    return null;
  }
  // A number compared typed is read as claims type numbers, white space around it allowed.
  const typed = positiveOperator(operator) === 'equals' || isOrderingOperator(operator);
  const expected = spec.kind === 'number' && typed ? value.trim() : value;
  const compiled = compileConditionTest({ kind: spec.kind, operator, value: expected }, 'plain');
  if (!compiled.ok) {
    problems.push({ field: `${path}.${compiled.field}`, message: compiled.message });
    return null;
  }
  const { test } = compiled;
  const negated = isNegatedOperator(operator);
  return (context) => {
    const actual = spec.read(context);
    return actual === undefined || actual === null ? negated : test(operandOf(actual, spec.kind));
  };
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
