import { ClaimEvaluationError } from './claim-evaluation-error.js';
import { CLAIM_DATA_TYPES, CLAIM_TYPES, MAX_CLAIM_VALUE_LENGTH } from './claim-types.js';
import type { ClaimDataType, ClaimType, FieldError } from './claim-types.js';
import { compileConditionalRules } from './conditional-rules.js';
import { validateExpression } from './expression-language.js';
import { checkExternalConfig } from './external-config.js';
import { isOneOf, isRecord } from './input-checks.js';
import { toTypedValue } from './typed-value.js';
import { checkValidationRules } from './validation-rules.js';

export interface ClaimDefinitionValidationOptions {
  /** Mirrors WEBHOOK_ALLOW_PRIVATE_NETWORKS for external endpoints. */
  allowPrivateNetworks?: boolean;
}

function checkTypedValue(value: string, dataType: ClaimDataType | null, field: string, problems: FieldError[]): void {
  if (!dataType) return;
  try {
    toTypedValue(value, dataType);
  } catch (error) {
    if (!(error instanceof ClaimEvaluationError)) throw error;
    problems.push({ field, message: `${error.message} (dataType ${dataType})` });
  }
}

function checkStaticValue(value: unknown, dataType: ClaimDataType | null, problems: FieldError[]): void {
  if (typeof value !== 'string' || value.length > MAX_CLAIM_VALUE_LENGTH) {
    problems.push({
      field: 'staticValue',
      message: `is required for a static claim: a string of at most ${MAX_CLAIM_VALUE_LENGTH} characters`,
    });
    return;
  }
  checkTypedValue(value, dataType, 'staticValue', problems);
}

function checkConditionalRules(rules: unknown, dataType: ClaimDataType | null, problems: FieldError[]): void {
  if (rules === null || rules === undefined) {
    problems.push({ field: 'conditionalRules', message: 'is required for a conditional claim' });
    return;
  }
  compileConditionalRules(rules, 'conditionalRules', problems);
  if (!Array.isArray(rules)) return;
  rules.forEach((rule, index) => {
    if (isRecord(rule) && typeof rule.value === 'string') {
      checkTypedValue(rule.value, dataType, `conditionalRules[${index}].value`, problems);
    }
  });
}

function checkDynamicExpression(expression: unknown, problems: FieldError[]): void {
  if (typeof expression !== 'string') {
    problems.push({ field: 'dynamicExpression', message: 'is required for a dynamic claim' });
    return;
  }
  for (const message of validateExpression(expression)) problems.push({ field: 'dynamicExpression', message });
}

function checkConfiguration(
  claimType: ClaimType,
  input: Record<string, unknown>,
  dataType: ClaimDataType | null,
  options: ClaimDefinitionValidationOptions,
  problems: FieldError[],
): void {
  switch (claimType) {
    case 'static':
      return checkStaticValue(input.staticValue, dataType, problems);
    case 'conditional':
      return checkConditionalRules(input.conditionalRules, dataType, problems);
    case 'dynamic':
      return checkDynamicExpression(input.dynamicExpression, problems);
    case 'external':
      if (input.externalConfig === null || input.externalConfig === undefined) {
        problems.push({ field: 'externalConfig', message: 'is required for an external claim' });
        return;
      }
      return checkExternalConfig(
        input.externalConfig,
        { allowPrivateNetworks: options.allowPrivateNetworks ?? false },
        'externalConfig',
        problems,
      );
  }
}

/**
 * Problems in the type-specific part of a claim definition (claimType, dataType, the
 * configuration field of that type and validationRules), each naming the field as in the
 * request body. Fields of other claim types are not looked at: the API decides whether they
 * are refused (create) or ignored (update).
 */
export function validateClaimDefinition(input: unknown, options: ClaimDefinitionValidationOptions = {}): FieldError[] {
  if (!isRecord(input)) return [{ field: 'claim', message: 'must be an object' }];
  const problems: FieldError[] = [];
  const { claimType } = input;
  const dataType = isOneOf(CLAIM_DATA_TYPES, input.dataType) ? input.dataType : null;
  if (!dataType) problems.push({ field: 'dataType', message: `must be one of ${CLAIM_DATA_TYPES.join(', ')}` });
  if (isOneOf(CLAIM_TYPES, claimType)) checkConfiguration(claimType, input, dataType, options, problems);
  else problems.push({ field: 'claimType', message: `must be one of ${CLAIM_TYPES.join(', ')}` });
  checkValidationRules(input.validationRules, dataType, 'validationRules', problems);
  return problems;
}
