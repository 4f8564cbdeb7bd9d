/**
 * The comparison operators of targeting conditions, shared by custom-claim rules and flag rules so
 * the dashboard offers one vocabulary everywhere.
 */
export const CONDITION_OPERATORS = [
  'equals',
  'not_equals',
  'greater_than',
  'less_than',
  'greater_than_or_equal',
  'less_than_or_equal',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'regex',
  'in_list',
  'not_in_list',
] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

/** The operators that are the exact negation of another, with the one each negates. */
export const NEGATED_OPERATORS = {
  not_equals: 'equals',
  not_contains: 'contains',
  not_in_list: 'in_list',
} as const satisfies Readonly<Record<string, ConditionOperator>>;
export type NegatedOperator = keyof typeof NEGATED_OPERATORS;
export type PositiveOperator = Exclude<ConditionOperator, NegatedOperator>;

export type OrderingOperator = 'greater_than' | 'less_than' | 'greater_than_or_equal' | 'less_than_or_equal';
const ORDERING_OPERATORS: ReadonlySet<string> = new Set<OrderingOperator>([
  'greater_than',
  'less_than',
  'greater_than_or_equal',
  'less_than_or_equal',
]);

export function isConditionOperator(value: unknown): value is ConditionOperator {
  return typeof value === 'string' && (CONDITION_OPERATORS as readonly string[]).includes(value);
}

export function isNegatedOperator(operator: string): operator is NegatedOperator {
  return Object.hasOwn(NEGATED_OPERATORS, operator);
}

/** The operator itself, or for a negated one the operator it negates (`not_in_list` → `in_list`). */
export function positiveOperator(operator: ConditionOperator): PositiveOperator {
  return isNegatedOperator(operator) ? NEGATED_OPERATORS[operator] : operator;
}

export function isOrderingOperator(operator: string): operator is OrderingOperator {
  return ORDERING_OPERATORS.has(operator);
}

export function isListOperator(operator: string): operator is 'in_list' | 'not_in_list' {
  return operator === 'in_list' || operator === 'not_in_list';
}
