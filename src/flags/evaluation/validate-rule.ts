import { validateCondition } from './conditions.js';
import type { ConditionInput } from './conditions.js';
import type { FlagValueType, ValidationProblem } from './flag-types.js';
import { parseFlagValue } from './flag-values.js';

/** A rule as submitted: ids are assigned by the service and operators are not yet known to be valid. */
export interface FlagRuleInput {
  readonly name: string;
  readonly priority: number;
  readonly conditions: readonly ConditionInput[];
  readonly rolloutPercentage: number | null;
  readonly value: string;
}

export interface FlagEnvironmentInput {
  readonly value: string;
  readonly rules: readonly FlagRuleInput[];
}

function valueProblem(field: string, valueType: FlagValueType, raw: string): ValidationProblem[] {
  const parsed = parseFlagValue(valueType, raw);
  return parsed.ok ? [] : [{ field, message: `${parsed.message} (the flag's type is ${valueType})` }];
}

/**
 * Problems with one rule, each naming its field (relative to the rule unless `fieldPrefix`
 * places it, e.g. `rules[2].`), for a 422 response. Empty when the rule is valid.
 */
export function validateRule(rule: FlagRuleInput, valueType: FlagValueType, fieldPrefix = ''): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  if (rule.name.trim() === '') problems.push({ field: `${fieldPrefix}name`, message: 'must not be empty' });
  if (!Number.isSafeInteger(rule.priority))
    problems.push({ field: `${fieldPrefix}priority`, message: 'must be an integer' });
  const rollout = rule.rolloutPercentage;
  if (rollout !== null && !(Number.isFinite(rollout) && rollout >= 0 && rollout <= 100)) {
    problems.push({ field: `${fieldPrefix}rolloutPercentage`, message: 'must be between 0 and 100, or null' });
  }
  problems.push(...valueProblem(`${fieldPrefix}value`, valueType, rule.value));
  rule.conditions.forEach((condition, index) => {
    problems.push(...validateCondition(condition, `${fieldPrefix}conditions[${index}].`));
  });
  return problems;
}

/** Problems with a PUT of one environment's configuration (`value` and `rules`). */
export function validateEnvironmentConfig(config: FlagEnvironmentInput, valueType: FlagValueType): ValidationProblem[] {
  return [
    ...valueProblem('value', valueType, config.value),
    ...config.rules.flatMap((rule, index) => validateRule(rule, valueType, `rules[${index}].`)),
  ];
}
