import { SERVICE_SET_CLAIMS } from '../device-tokens/token-claims.js';
import { randomUUID } from 'node:crypto';
import { DEFAULT_TIMEOUT_SECONDS } from './engine/external-config.js';
import { validateClaimDefinition } from './engine/index.js';
import type {
  ClaimDataType,
  ClaimType,
  ConditionalRule,
  ExternalConfig,
  FieldError,
  ValidationRules,
} from './engine/index.js';

/** Starts with a letter; letters, digits and underscore only. */
export const CLAIM_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;
export const MAX_CLAIM_KEY_LENGTH = 64;
export const MAX_CLAIM_NAME_LENGTH = 100;
export const MAX_DESCRIPTION_LENGTH = 1000;
export const MAX_PRIORITY = 1_000_000;

export function claimKeyProblem(key: unknown): string | null {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_CLAIM_KEY_LENGTH) {
    return `must be a string of 1 to ${MAX_CLAIM_KEY_LENGTH} characters`;
  }
  if (!CLAIM_KEY_PATTERN.test(key)) return 'must start with a letter and hold only letters, digits and underscores';
  if (SERVICE_SET_CLAIMS.has(key.toLowerCase())) return `"${key}" is reserved`;
  return null;
}

/** The configuration fields of a claim: one per claim type, plus validation rules for all. */
export interface ClaimConfiguration {
  staticValue?: string | null;
  conditionalRules?: unknown;
  dynamicExpression?: string | null;
  externalConfig?: unknown;
  validationRules?: unknown;
}

/** A claim to create, as either surface gives it (camelCase, type-specific fields top-level). */
export interface ClaimInput extends ClaimConfiguration {
  claimKey: string;
  claimName: string;
  claimType: ClaimType;
  dataType: ClaimDataType;
  description?: string | null;
  priority?: number;
  isActive?: boolean;
}

/** An update: any subset of the fields. */
export type ClaimPatch = Partial<ClaimInput>;

/** An unsaved claim to test: key and name are optional, nothing else changes. */
export type ClaimTestInput = Omit<ClaimInput, 'claimKey' | 'claimName'> & { claimKey?: string; claimName?: string };

export type ConfigurationField = 'staticValue' | 'conditionalRules' | 'dynamicExpression' | 'externalConfig';

export const CONFIGURATION_FIELD: Readonly<Record<ClaimType, ConfigurationField>> = {
  static: 'staticValue',
  conditional: 'conditionalRules',
  dynamic: 'dynamicExpression',
  external: 'externalConfig',
};

const CONFIGURATION_FIELDS = Object.values(CONFIGURATION_FIELD);

/** A create carries exactly the configuration field of its type; null counts as absent. */
export function foreignConfigurationProblems(input: ClaimConfiguration, claimType: ClaimType): FieldError[] {
  return CONFIGURATION_FIELDS.filter(
    (field) => field !== CONFIGURATION_FIELD[claimType] && input[field] !== undefined && input[field] !== null,
  ).map((field) => ({ field, message: `is not allowed for a ${claimType} claim` }));
}

/** Key and type cannot change; an unchanged value is accepted (a client may send the whole claim back). */
export function immutableFieldProblems(
  patch: ClaimPatch,
  claim: Pick<ClaimInput, 'claimKey' | 'claimType'>,
): FieldError[] {
  const problems: FieldError[] = [];
  if (patch.claimKey !== undefined && patch.claimKey !== claim.claimKey) {
    problems.push({ field: 'claimKey', message: 'cannot be changed' });
  }
  if (patch.claimType !== undefined && patch.claimType !== claim.claimType) {
    problems.push({ field: 'claimType', message: 'cannot be changed' });
  }
  return problems;
}

/** Whether an update gives anything to apply to a claim of this type (another type's field is ignored). */
export function hasUpdatableField(patch: ClaimPatch, claimType: ClaimType): boolean {
  return [
    patch.claimName,
    patch.dataType,
    patch.description,
    patch.priority,
    patch.isActive,
    patch[CONFIGURATION_FIELD[claimType]],
    patch.validationRules,
  ].some((value) => value !== undefined);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Problems of the type-specific part of a complete definition, named in camelCase. */
export function definitionProblems(
  definition: ClaimConfiguration & { claimType: ClaimType; dataType: ClaimDataType },
  allowPrivateNetworks: boolean,
): FieldError[] {
  const problems = validateClaimDefinition(definition, { allowPrivateNetworks });
  if (definition.claimType === 'conditional' && Array.isArray(definition.conditionalRules)) {
    definition.conditionalRules.forEach((rule: unknown, index) => {
      const id = (rule as { id?: unknown } | null)?.id;
      if (typeof id === 'string' && !UUID.test(id)) {
        problems.push({ field: `conditionalRules[${index}].id`, message: 'must be a UUID' });
      }
    });
  }
  return problems;
}

/**
 * The stored form of a validated configuration: only the documented members, every optional
 * one present, and an id for each conditional rule that came without one.
 */
export function normalizeConfiguration(
  claimType: ClaimType,
  value: unknown,
): string | ConditionalRule[] | ExternalConfig {
  switch (claimType) {
    case 'static':
    case 'dynamic':
      return value as string;
    case 'conditional':
      return (value as ConditionalRule[]).map((rule) => ({
        id: rule.id ?? randomUUID(),
        operator: rule.operator,
        conditions: rule.conditions.map(({ field, operator, value: expected }) => ({
          field,
          operator,
          value: expected,
        })),
        value: rule.value,
        priority: rule.priority,
      }));
    case 'external':
      return normalizeExternalConfig(value as ExternalConfig);
  }
}

function normalizeExternalConfig(config: ExternalConfig): ExternalConfig {
  return {
    endpoint: config.endpoint,
    method: config.method,
    headers: config.headers ?? {},
    queryParameters: config.queryParameters ?? {},
    bodyTemplate: config.bodyTemplate ?? null,
    responseMapping: {
      jsonPath: config.responseMapping.jsonPath,
      defaultValue: config.responseMapping.defaultValue ?? null,
      transformExpression: config.responseMapping.transformExpression ?? null,
    },
    cacheSeconds: config.cacheSeconds ?? 0,
    timeoutSeconds: config.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    retryCount: config.retryCount ?? 0,
    authentication: config.authentication
      ? { type: config.authentication.type, credentials: { ...config.authentication.credentials } }
      : null,
  };
}

export function normalizeValidationRules(value: unknown): ValidationRules | null {
  if (value === null || value === undefined) return null;
  const rules = value as ValidationRules;
  return {
    required: rules.required ?? false,
    minLength: rules.minLength ?? null,
    maxLength: rules.maxLength ?? null,
    pattern: rules.pattern ?? null,
    minValue: rules.minValue ?? null,
    maxValue: rules.maxValue ?? null,
    allowedValues: rules.allowedValues ?? null,
    customValidation: rules.customValidation ?? null,
  };
}
