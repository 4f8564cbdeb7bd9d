import type { ConditionOperator } from '../../common/rules/operators.js';

/**
 * Shapes shared by flag evaluation. The service stores flags in these shapes; evaluation
 * itself is pure and knows nothing of persistence.
 */

export const FLAG_VALUE_TYPES = ['boolean', 'integer', 'double', 'string', 'json'] as const;
export type FlagValueType = (typeof FLAG_VALUE_TYPES)[number];

export const ENVIRONMENTS = ['production', 'staging', 'development'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** Rule attributes fed from the evaluation context; `custom.<key>` reads `context.custom[key]`. */
export const CONTEXT_ATTRIBUTES = [
  'device_model',
  'os_version',
  'app_version',
  'device_id',
  'risk_score',
  'locale',
  'country',
  'user_id',
  'attestation_status',
] as const;

export const CUSTOM_ATTRIBUTE_PREFIX = 'custom.';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A flag value in its typed form, as GET /flags serves it: a boolean, number or string, or any JSON for `json` flags. */
export type FlagValue = JsonValue;

export interface FlagCondition {
  readonly attribute: string;
  readonly operator: ConditionOperator;
  /** For `in_list` and `not_in_list`, comma-separated; `\,` is a literal comma (model ids such as `iPhone14,2`). */
  readonly value: string;
}

export interface FlagRule {
  readonly id: string;
  readonly name: string;
  /** Lower evaluates first. */
  readonly priority: number;
  readonly isActive: boolean;
  /** Every condition must pass. */
  readonly conditions: readonly FlagCondition[];
  /** 0-100, decimals allowed; null means no percentage rollout. */
  readonly rolloutPercentage: number | null;
  readonly value: string;
}

/** Another flag of the same app that must evaluate to `value` (raw form) for this flag to be on. */
export interface FlagPrerequisite {
  readonly flagKey: string;
  readonly value: string;
}

/** Longest chain of prerequisites a flag may start (A needs B needs C: 2). */
export const MAX_PREREQUISITE_DEPTH = 5;

export interface FlagEnvironmentConfig {
  readonly enabled: boolean;
  /** Served when the environment is enabled and no rule matches. */
  readonly value: string;
  readonly rules: readonly FlagRule[];
  /** Absent on flags stored before prerequisites existed: none. */
  readonly prerequisites?: readonly FlagPrerequisite[];
  /** Changes need an approved change request (Enterprise); evaluation ignores it. */
  readonly requireApproval?: boolean;
}

export interface FlagDefinition {
  readonly id: string;
  readonly key: string;
  readonly valueType: FlagValueType;
  /** Served when the environment is disabled. */
  readonly defaultValue: string;
  readonly environments: Readonly<Record<Environment, FlagEnvironmentConfig>>;
}

/** What the device tells us about itself; each field feeds the rule attribute of the same name. */
export interface EvaluationContext {
  readonly deviceModel?: string | null;
  readonly osVersion?: string | null;
  readonly appVersion?: string | null;
  /** Also the identity that percentage rollouts bucket on. */
  readonly deviceId?: string | null;
  readonly riskScore?: number | null;
  readonly locale?: string | null;
  readonly country?: string | null;
  readonly userId?: string | null;
  readonly attestationStatus?: string | null;
  readonly custom?: Readonly<Record<string, string>> | null;
}

export interface TraceCondition {
  readonly attribute: string;
  readonly operator: string;
  readonly expected: string;
  readonly actual: string | null;
  readonly passed: boolean;
}

export interface TraceEntry {
  readonly ruleName: string;
  readonly ruleId: string;
  readonly priority: number;
  readonly matched: boolean;
  readonly rolloutPercentage: number | null;
  /** Null when the rule has no rollout. */
  readonly passedRollout: boolean | null;
  readonly conditions: readonly TraceCondition[];
  readonly value: string;
  /** Set on the entry of a prerequisite that failed: the key of the flag it names. */
  readonly prerequisite?: string;
}

export interface EvaluationResult {
  readonly flagKey: string;
  readonly flagId: string;
  /** The environment whose configuration served the value. */
  readonly environment: Environment;
  /** Raw string form, as stored. */
  readonly resolvedValue: string;
  readonly valueType: FlagValueType;
  readonly matchedRule: string | null;
  readonly isDefault: boolean;
  readonly trace: readonly TraceEntry[];
}

export interface FlagOverrideRecord {
  readonly deviceKeyId: string;
  readonly forcedValue: string;
  readonly expiresAt: Date | null;
}

/** One problem with a submitted rule; `field` names the offending field for the 422 `fields` list. */
export interface ValidationProblem {
  readonly field: string;
  readonly message: string;
}

export function isEnvironment(value: string): value is Environment {
  return (ENVIRONMENTS as readonly string[]).includes(value);
}
