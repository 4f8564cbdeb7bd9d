import { compareParsedVersions, parseVersion } from '../../common/version.js';
import type { ParsedVersion } from '../../common/version.js';
import { CONDITION_OPERATORS, CONTEXT_ATTRIBUTES, CUSTOM_ATTRIBUTE_PREFIX, isConditionOperator } from './flag-types.js';
import type { EvaluationContext, FlagCondition, ValidationProblem } from './flag-types.js';
import { parseFiniteNumber } from './flag-values.js';
import { compileLinearRegex } from '../../common/rules/linear-regex.js';

/**
 * How an attribute's values order: versions semantically, the risk score numerically, and
 * anything else numerically when both sides are numbers, else as strings.
 */
type ComparisonKind = 'version' | 'number' | 'auto';

/** A value parsed once into every form its comparison kind needs. */
export interface Operand {
  readonly text: string;
  /** NaN when the text is not a finite decimal number. */
  readonly number: number;
  readonly version: ParsedVersion | null;
}

export interface CompiledCondition {
  readonly attribute: string;
  readonly operator: string;
  readonly expected: string;
  /** Called only with a present value: a missing attribute fails every operator, negated ones included. */
  readonly test: (actual: Operand) => boolean;
}

export interface ConditionInput {
  readonly attribute: string;
  readonly operator: string;
  readonly value: string;
}

function comparisonKind(attribute: string): ComparisonKind {
  if (attribute === 'os_version' || attribute === 'app_version') return 'version';
  return attribute === 'risk_score' ? 'number' : 'auto';
}

function toOperand(text: string, kind: ComparisonKind): Operand {
  return {
    text,
    number: kind === 'version' ? NaN : parseFiniteNumber(text),
    version: kind === 'version' ? parseVersion(text) : null,
  };
}

function isKnownAttribute(attribute: string): boolean {
  if (attribute.startsWith(CUSTOM_ATTRIBUTE_PREFIX)) return attribute.length > CUSTOM_ATTRIBUTE_PREFIX.length;
  return (CONTEXT_ATTRIBUTES as readonly string[]).includes(attribute);
}

function presentText(value: string | null | undefined): string | null {
  // An empty string carries no information a rule could target, so it counts as missing.
  return typeof value === 'string' && value !== '' ? value : null;
}

function rawAttribute(context: EvaluationContext, attribute: string): string | null {
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
      const text = rawAttribute(this.context, attribute);
      operand = text === null ? null : toOperand(text, comparisonKind(attribute));
      this.operands.set(attribute, operand);
    }
    return operand;
  }
}

/** Items of an `in_list` value: comma-separated, trimmed, empty items dropped; `\,` is a literal comma. */
export function parseListValue(value: string): string[] {
  const items: string[] = [];
  let current = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === '\\' && (value[i + 1] === ',' || value[i + 1] === '\\')) {
      current += value[++i];
    } else if (ch === ',') {
      items.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  items.push(current);
  return items.map((item) => item.trim()).filter((item) => item !== '');
}

function operandsEqual(kind: ComparisonKind, a: Operand, b: Operand): boolean {
  if (kind === 'version') {
    return a.version && b.version ? compareParsedVersions(a.version, b.version) === 0 : a.text === b.text;
  }
  if (!Number.isNaN(a.number) && !Number.isNaN(b.number)) return a.number === b.number;
  return kind === 'auto' && a.text === b.text;
}

/** Negative, zero or positive; null when the two cannot be ordered (the condition then fails). */
function compareOperands(kind: ComparisonKind, a: Operand, b: Operand): number | null {
  if (kind === 'version') return a.version && b.version ? compareParsedVersions(a.version, b.version) : null;
  if (!Number.isNaN(a.number) && !Number.isNaN(b.number)) return a.number - b.number;
  if (kind === 'number') return null;
  return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
}

const never = (): boolean => false;

function ordered(
  kind: ComparisonKind,
  expected: Operand,
  accept: (sign: number) => boolean,
): (actual: Operand) => boolean {
  return (actual) => {
    const sign = compareOperands(kind, actual, expected);
    return sign !== null && accept(sign);
  };
}

function compileTest(condition: FlagCondition): (actual: Operand) => boolean {
  const kind = comparisonKind(condition.attribute);
  const expectedText = condition.value;
  const expected = toOperand(expectedText, kind);
  switch (condition.operator) {
    case 'equals':
      return (actual) => operandsEqual(kind, actual, expected);
    case 'not_equals':
      return (actual) => !operandsEqual(kind, actual, expected);
    case 'greater_than':
      return ordered(kind, expected, (sign) => sign > 0);
    case 'less_than':
      return ordered(kind, expected, (sign) => sign < 0);
    case 'greater_than_or_equal':
      return ordered(kind, expected, (sign) => sign >= 0);
    case 'less_than_or_equal':
      return ordered(kind, expected, (sign) => sign <= 0);
    case 'contains':
      return (actual) => actual.text.includes(expectedText);
    case 'not_contains':
      return (actual) => !actual.text.includes(expectedText);
    case 'starts_with':
      return (actual) => actual.text.startsWith(expectedText);
    case 'ends_with':
      return (actual) => actual.text.endsWith(expectedText);
    case 'regex': {
      const compiled = compileLinearRegex(expectedText);
      if (!compiled.ok) return never;
      const { regex } = compiled;
      return (actual) => regex.test(actual.text);
    }
    case 'in_list':
    case 'not_in_list': {
      const items = parseListValue(expectedText).map((item) => toOperand(item, kind));
      const wanted = condition.operator === 'in_list';
      return (actual) => items.some((item) => operandsEqual(kind, actual, item)) === wanted;
    }
    default:
      // Stored data that predates validation must not crash evaluation; it just never matches.
      return never;
  }
}

export function compileCondition(condition: FlagCondition): CompiledCondition {
  return {
    attribute: condition.attribute,
    operator: condition.operator,
    expected: condition.value,
    test: compileTest(condition),
  };
}

export function conditionPasses(condition: CompiledCondition, context: PreparedContext): boolean {
  const actual = context.operand(condition.attribute);
  return actual !== null && condition.test(actual);
}

const ORDERING_OPERATORS: ReadonlySet<string> = new Set([
  'greater_than',
  'less_than',
  'greater_than_or_equal',
  'less_than_or_equal',
]);

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
    const compiled = compileLinearRegex(value);
    if (!compiled.ok) problem('value', compiled.message);
  } else if (operator === 'in_list' || operator === 'not_in_list') {
    const items = parseListValue(value);
    if (items.length === 0) problem('value', 'must list at least one comma-separated value');
    else if (kind === 'number' && items.some((item) => Number.isNaN(parseFiniteNumber(item)))) {
      problem('value', 'must list numbers only');
    }
  } else if (
    kind === 'number' &&
    (ORDERING_OPERATORS.has(operator) || operator === 'equals' || operator === 'not_equals')
  ) {
    if (Number.isNaN(parseFiniteNumber(value))) problem('value', 'must be a number');
  } else if (kind === 'version' && ORDERING_OPERATORS.has(operator) && parseVersion(value) === null) {
    problem('value', 'must be a version number such as 2.1.0');
  }
  return problems;
}
