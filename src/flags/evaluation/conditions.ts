import { compileConditionTest, type ConditionTest } from '../../common/rules/conditions.js';
import { parseListValue } from '../../common/rules/list-value.js';
import {
  CONDITION_OPERATORS,
  isConditionOperator,
  isListOperator,
  isOrderingOperator,
} from '../../common/rules/operators.js';
import { parseFiniteNumber, toOperand, type Operand, type ValueKind } from '../../common/rules/typed-comparison.js';
import { parseVersion } from '../../common/version.js';
import { CONTEXT_ATTRIBUTES, CUSTOM_ATTRIBUTE_PREFIX } from './flag-types.js';
import type { EvaluationContext, FlagCondition, ValidationProblem } from './flag-types.js';

/**
 * Flag rule conditions on the rule kernel (src/common/rules/): what is the flags' own is which
 * attributes exist and how each compares (versions semantically, the risk score numerically,
 * anything else numerically when both sides are numbers, else as text), that a missing attribute
 * fails every operator, negated ones included, that `in_list` reads `\,` as a literal comma, and
 * the messages of a refused condition.
 */

export interface CompiledCondition {
  readonly attribute: string;
  readonly operator: string;
  readonly expected: string;
  /** Called only with a present value: a missing attribute fails every operator, negated ones included. */
  readonly test: ConditionTest;
}

export interface ConditionInput {
  readonly attribute: string;
  readonly operator: string;
  readonly value: string;
}

function comparisonKind(attribute: string): ValueKind {
  if (attribute === 'os_version' || attribute === 'app_version') return 'version';
  return attribute === 'risk_score' ? 'number' : 'auto';
}

function isKnownAttribute(attribute: string): boolean {
  if (attribute.startsWith(CUSTOM_ATTRIBUTE_PREFIX)) return attribute.length > CUSTOM_ATTRIBUTE_PREFIX.length;
  return (CONTEXT_ATTRIBUTES as readonly string[]).includes(attribute);
}

function presentText(value: string | null | undefined): string | null {
  // An empty string carries no information a rule could target, so it counts as missing.
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The text a context gives an attribute, null when missing (an empty string counts as missing). */
export function attributeText(context: EvaluationContext, attribute: string): string | null {
  switch (attribute) {
    case 'device_model':
      return presentText(context.deviceModel);
    case 'os_version':
      return presentText(context.osVersion);
    case 'app_version':
      return presentText(context.appVersion);
    case 'device_id':
      return presentText(context.deviceId);
    case 'risk_score':
      return typeof context.riskScore === 'number' && Number.isFinite(context.riskScore)
        ? String(context.riskScore)
        : null;
    case 'locale':
      return presentText(context.locale);
    case 'country':
      return presentText(context.country);
    case 'user_id':
      return presentText(context.userId);
    case 'attestation_status':
      return presentText(context.attestationStatus);
  }
  if (!attribute.startsWith(CUSTOM_ATTRIBUTE_PREFIX) || !context.custom) return null;
  const key = attribute.slice(CUSTOM_ATTRIBUTE_PREFIX.length);
  // Own keys only: `custom.constructor` must not read Object.prototype.
  return Object.hasOwn(context.custom, key) ? presentText(context.custom[key]) : null;
}

/**
 * One request's context, with each attribute parsed at most once however many flags and
 * rules look at it.
 */
export class PreparedContext {
  private readonly operands = new Map<string, Operand | null>();

  constructor(private readonly context: EvaluationContext) {}

  operand(attribute: string): Operand | null {
    let operand = this.operands.get(attribute);
    if (operand === undefined) {
      const text = attributeText(this.context, attribute);
      operand = text === null ? null : toOperand(text, comparisonKind(attribute));
      this.operands.set(attribute, operand);
    }
    return operand;
  }
}

const never = (): boolean => false;

export function compileCondition(condition: FlagCondition): CompiledCondition {
  const compiled = compileConditionTest(
    { kind: comparisonKind(condition.attribute), operator: condition.operator, value: condition.value },
    'escaped',
  );
  return {
    attribute: condition.attribute,
    operator: condition.operator,
    expected: condition.value,
    // Stored data that predates validation (an unknown operator, a pattern RE2 refuses) must not
    // crash evaluation; it just never matches.
    test: compiled.ok ? compiled.test : never,
  };
}

export function conditionPasses(condition: CompiledCondition, context: PreparedContext): boolean {
  const actual = context.operand(condition.attribute);
  return actual !== null && condition.test(actual);
}

/** Problems with one condition; `fieldPrefix` places the field names inside a larger request body. */
export function validateCondition(condition: ConditionInput, fieldPrefix = ''): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const problem = (field: string, message: string) => problems.push({ field: `${fieldPrefix}${field}`, message });
  const { attribute, operator, value } = condition;

  if (!isKnownAttribute(attribute)) {
    problem('attribute', `must be one of ${CONTEXT_ATTRIBUTES.join(', ')} or ${CUSTOM_ATTRIBUTE_PREFIX}<key>`);
  }
  if (!isConditionOperator(operator)) {
    problem('operator', `must be one of ${CONDITION_OPERATORS.join(', ')}`);
    return problems;
  }
  if (value === '') {
    problem('value', 'must not be empty');
    return problems;
  }

  const kind = comparisonKind(attribute);
  if (operator === 'regex') {
    const compiled = compileConditionTest({ kind, operator, value }, 'escaped');
    if (!compiled.ok) problem('value', compiled.message);
  } else if (isListOperator(operator)) {
    const items = parseListValue(value, 'escaped');
    if (items.length === 0) problem('value', 'must list at least one comma-separated value');
    else if (kind === 'number' && items.some((item) => Number.isNaN(parseFiniteNumber(item)))) {
      problem('value', 'must list numbers only');
    }
  } else if (
    kind === 'number' &&
    (isOrderingOperator(operator) || operator === 'equals' || operator === 'not_equals')
  ) {
    if (Number.isNaN(parseFiniteNumber(value))) problem('value', 'must be a number');
  } else if (kind === 'version' && isOrderingOperator(operator) && parseVersion(value) === null) {
    problem('value', 'must be a version number such as 2.1.0');
  }
  return problems;
}
