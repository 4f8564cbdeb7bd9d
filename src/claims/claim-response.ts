import type { CustomClaim } from './custom-claim.entity.js';
import type { ClaimTestResult } from './engine/index.js';
import { redactExternalConfig } from './external-secrets.js';

/** A claim's type-specific fields. */
export interface ClaimConfigurationResponse {
  staticValue: string | null;
  conditionalRules: CustomClaim['conditionalRules'];
  dynamicExpression: string | null;
  /** Secrets (header values, credentials) are never returned. */
  externalConfig: CustomClaim['externalConfig'];
  validationRules: CustomClaim['validationRules'];
}

function configurationOf(claim: CustomClaim): ClaimConfigurationResponse {
  return {
    staticValue: claim.staticValue,
    conditionalRules: claim.conditionalRules,
    dynamicExpression: claim.dynamicExpression,
    externalConfig: claim.externalConfig ? redactExternalConfig(claim.externalConfig) : null,
    validationRules: claim.validationRules,
  };
}

/** The session surface: camelCase, the type-specific fields and validationRules under `configuration`. */
export interface ClaimResponse {
  id: string;
  claimKey: string;
  claimName: string;
  claimType: CustomClaim['claimType'];
  dataType: CustomClaim['dataType'];
  description: string | null;
  priority: number;
  isActive: boolean;
  configuration: ClaimConfigurationResponse;
  createdAt: Date;
  updatedAt: Date;
}

export function toClaimResponse(claim: CustomClaim): ClaimResponse {
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
/** A claim definition on the console surface (snake_case). */
export interface ConsoleClaimResponse {
  id: string;
  claim_key: string;
  claim_name: string;
  claim_type: CustomClaim['claimType'];
  data_type: CustomClaim['dataType'];
  description: string | null;
  priority: number;
  is_active: boolean;
  static_value: string | null;
  conditional_rules: CustomClaim['conditionalRules'];
  dynamic_expression: string | null;
  external_config: CustomClaim['externalConfig'];
  validation_rules: CustomClaim['validationRules'];
  /** The type-specific fields again, grouped. */
  configuration: {
    static_value: string | null;
    conditional_rules: CustomClaim['conditionalRules'];
    dynamic_expression: string | null;
    external_config: CustomClaim['externalConfig'];
    validation_rules: CustomClaim['validationRules'];
  };
  created_at: Date;
  updated_at: Date;
}

export function toConsoleClaimResponse(claim: CustomClaim): ConsoleClaimResponse {
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

export interface ConsoleClaimTestResult {
  claim_key: string;
  evaluated_value: ClaimTestResult['evaluatedValue'];
  data_type: ClaimTestResult['dataType'];
  /** Milliseconds. */
  evaluation_time: number;
  errors: ClaimTestResult['errors'];
}

export function toConsoleTestResult(result: ClaimTestResult): ConsoleClaimTestResult {
  return {
    claim_key: result.claimKey,
    evaluated_value: result.evaluatedValue,
    data_type: result.dataType,
    evaluation_time: result.evaluationTime,
    errors: result.errors,
  };
}
