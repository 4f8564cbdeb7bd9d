import type { ConditionOperator } from '../../common/rules/operators.js';

/**
 * Claim definitions as the claims feature stores them, and the device context they are
 * evaluated against. Shapes follow the "Claim definition" section of the interface document.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A successfully typed claim value; a `date` claim is carried as its ISO 8601 string. */
export type ClaimValue = Exclude<JsonValue, null>;

export const CLAIM_TYPES = ['static', 'conditional', 'dynamic', 'external'] as const;
export type ClaimType = (typeof CLAIM_TYPES)[number];

export const CLAIM_DATA_TYPES = ['string', 'number', 'boolean', 'array', 'object', 'date'] as const;
export type ClaimDataType = (typeof CLAIM_DATA_TYPES)[number];

export const RULE_OPERATORS = ['AND', 'OR'] as const;
export type RuleOperator = (typeof RULE_OPERATORS)[number];

export const CONDITION_FIELDS = [
  'device_model',
  'os_version',
  'app_version',
  'risk_score',
  'attestation_count',
  'country',
  'jailbreak_detected',
  'device_integrity',
  'first_seen_days',
  'suspicious_events',
] as const;
export type ConditionField = (typeof CONDITION_FIELDS)[number];

export interface Condition {
  field: ConditionField;
  operator: ConditionOperator;
  value: string;
}

export interface ConditionalRule {
  /** Assigned by the API; the engine does not need it. */
  id?: string;
  operator: RuleOperator;
  conditions: Condition[];
  value: string;
  priority: number;
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const AUTHENTICATION_TYPES = ['basic', 'bearer', 'api_key', 'oauth2'] as const;
export type AuthenticationType = (typeof AUTHENTICATION_TYPES)[number];

export interface ExternalAuthentication {
  type: AuthenticationType;
  credentials: Record<string, string>;
}

export interface ResponseMapping {
  jsonPath: string;
  defaultValue?: string | null;
  transformExpression?: string | null;
}

export interface ExternalConfig {
  endpoint: string;
  method: HttpMethod;
  headers?: Record<string, string> | null;
  queryParameters?: Record<string, string> | null;
  bodyTemplate?: string | null;
  responseMapping: ResponseMapping;
  /** 0 or absent: no caching. */
  cacheSeconds?: number | null;
  /** Absent: DEFAULT_TIMEOUT_SECONDS. */
  timeoutSeconds?: number | null;
  /** Absent: no retry. */
  retryCount?: number | null;
  authentication?: ExternalAuthentication | null;
}

export interface ValidationRules {
  required?: boolean;
  minLength?: number | null;
  maxLength?: number | null;
  pattern?: string | null;
  minValue?: number | null;
  maxValue?: number | null;
  allowedValues?: JsonValue[] | null;
  customValidation?: string | null;
}

export interface ClaimDefinition {
  id: string;
  claimKey: string;
  claimName: string;
  claimType: ClaimType;
  dataType: ClaimDataType;
  priority: number;
  isActive: boolean;
  staticValue: string | null;
  conditionalRules: ConditionalRule[] | null;
  dynamicExpression: string | null;
  externalConfig: ExternalConfig | null;
  validationRules: ValidationRules | null;
}

export interface DeviceContext {
  keyId: string;
  deviceModel?: string;
  osVersion?: string;
  appVersion?: string;
  riskScore: number;
  attestationCount: number;
  jailbreakDetected: boolean;
  country?: string;
  deviceIntegrity?: string;
  firstSeenDays?: number;
  suspiciousEvents?: number;
  additionalData?: Record<string, string>;
}

export interface ClaimTestResult {
  claimKey: string;
  evaluatedValue: string | null;
  dataType: ClaimDataType;
  /** Milliseconds. */
  evaluationTime: number;
  errors: string[] | null;
}

/** A problem in a claim definition, named by its path in the request body (`conditionalRules[0].value`). */
export interface FieldError {
  field: string;
  message: string;
}

/** Largest string a claim may produce, so a single claim cannot bloat a token. */
export const MAX_CLAIM_VALUE_LENGTH = 10_240;
