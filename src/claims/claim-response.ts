import type { CustomClaim } from './custom-claim.entity.js';
import type { ClaimTestResult } from './engine/index.js';
import { redactExternalConfig } from './external-secrets.js';

function configurationOf(claim: CustomClaim) {
  return {
    staticValue: claim.staticValue,
    conditionalRules: claim.conditionalRules,
    dynamicExpression: claim.dynamicExpression,
    externalConfig: claim.externalConfig ? redactExternalConfig(claim.externalConfig) : null,
    validationRules: claim.validationRules,
  };
}

/** The session surface: camelCase, the type-specific fields and validationRules under `configuration`. */
export function toClaimResponse(claim: CustomClaim) {
  return {
    id: claim.id,
    claimKey: claim.claimKey,
    claimName: claim.claimName,
    claimType: claim.claimType,
    dataType: claim.dataType,
    description: claim.description,
    priority: claim.priority,
    isActive: claim.isActive,
    configuration: configurationOf(claim),
    createdAt: claim.createdAt,
    updatedAt: claim.updatedAt,
  };
}

/**
 * The console surface: snake_case at top level, nested objects in their own (camelCase) schema.
 * The type-specific fields appear at top level, as the interface document lists them, and under
 * `configuration`, as on the session surface, so a client of either shape reads them.
 */
export function toConsoleClaimResponse(claim: CustomClaim) {
  const { staticValue, conditionalRules, dynamicExpression, externalConfig, validationRules } = configurationOf(claim);
  const configuration = {
    static_value: staticValue,
    conditional_rules: conditionalRules,
    dynamic_expression: dynamicExpression,
    external_config: externalConfig,
    validation_rules: validationRules,
  };
  return {
    id: claim.id,
    claim_key: claim.claimKey,
    claim_name: claim.claimName,
    claim_type: claim.claimType,
    data_type: claim.dataType,
    description: claim.description,
    priority: claim.priority,
    is_active: claim.isActive,
    ...configuration,
    configuration,
    created_at: claim.createdAt,
    updated_at: claim.updatedAt,
  };
}

export function toConsoleTestResult(result: ClaimTestResult) {
  return {
    claim_key: result.claimKey,
    evaluated_value: result.evaluatedValue,
    data_type: result.dataType,
    evaluation_time: result.evaluationTime,
    errors: result.errors,
  };
}
