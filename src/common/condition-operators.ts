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
