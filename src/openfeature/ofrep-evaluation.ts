import {
  applicableOverride,
  evaluateFlag,
  overridesOf,
  parseFlagValue,
  type AppFlagSet,
  type CompiledFlag,
  type EvaluationResult,
  type FlagValue,
} from '../flags/index.js';
import type { OfrepEvaluationRequest } from './ofrep-context.js';

/**
 * One flag's OFREP answer, from the flags kernel's own evaluation (evaluateFlag: the rules,
 * prerequisites and rollout buckets of GET /api/v1/flags, with the device's overrides as GET /flags
 * applies them). Pure: no framework.
 *
 * Reasons (OpenFeature's resolution reasons):
 * - `TARGETING_MATCH`: a rule matched (no partial rollout), or a device override applies.
 * - `SPLIT`: the matching rule has a rollout strictly between 0 and 100 %: the device's bucket put it in.
 * - `STATIC`: the environment is on with no active rule and no prerequisite: everyone gets its value.
 * - `DEFAULT`: the environment is on but no rule matched (its value), or a prerequisite failed (the off value).
 * - `DISABLED`: the environment is off: the flag's default (off) value.
 * `variant` names what served: the rule's name, `override`, `value` (the environment's value) or
 * `off` (the flag's default value); `metadata` says which environment and value type.
 */

export type OfrepReason = 'STATIC' | 'TARGETING_MATCH' | 'SPLIT' | 'DEFAULT' | 'DISABLED';
export type OfrepMetadata = Record<string, string | number | boolean>;

export interface OfrepSuccess {
  readonly key: string;
  readonly value: FlagValue;
  readonly reason: OfrepReason;
  readonly variant: string;
  readonly metadata: OfrepMetadata;
}

export interface OfrepFailure {
  readonly key: string;
  readonly errorCode: 'FLAG_NOT_FOUND' | 'PARSE_ERROR' | 'GENERAL';
  readonly errorDetails: string;
}

export type OfrepFlagResult = OfrepSuccess | OfrepFailure;

export function isFailure(result: OfrepFlagResult): result is OfrepFailure {
  return 'errorCode' in result;
}

/** The flag of an app by key, or null (another app's flag, or none, is the same: not found). */
export function findFlag(set: AppFlagSet, key: string): CompiledFlag | null {
  return set.flags.find((flag) => flag.key === key) ?? null;
}

export function flagNotFound(key: string): OfrepFailure {
  return { key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `No flag of this app has the key '${key}'` };
}

/** Evaluates one flag of the set for the request's context and device. */
export function evaluateOfrep(set: AppFlagSet, flag: CompiledFlag, request: OfrepEvaluationRequest): OfrepFlagResult {
  const overrides = overridesOf(set, request.deviceKeyId);
  const candidates = overrides.get(flag.id);
  const override = candidates ? applicableOverride(candidates, request.deviceKeyId, new Date()) : null;
  // An override whose value no longer fits the flag's type is ignored, by the kernel as by GET /flags.
  const overridden = override !== null && parseFlagValue(flag.valueType, override.forcedValue).ok;
  const result = evaluateFlag(flag, request.environment, request.context, {
    set: set.flags,
    override,
    prerequisiteOverrides: { byFlagId: overrides, deviceKeyId: request.deviceKeyId },
  });
  const parsed = parseFlagValue(flag.valueType, result.resolvedValue);
  if (!parsed.ok) {
    // GET /flags leaves such a flag out; OFREP says why.
    return {
      key: flag.key,
      errorCode: 'PARSE_ERROR',
      errorDetails: `The value this flag serves is not a valid ${flag.valueType}: ${parsed.message}`,
    };
  }
  const { reason, variant, extra } = outcomeOf(flag, result, overridden);
  return {
    key: flag.key,
    value: parsed.value,
    reason,
    variant,
    metadata: { environment: result.environment, valueType: flag.valueType, ...extra },
  };
}

/** Every flag of the set, in the set's order. */
export function evaluateOfrepAll(set: AppFlagSet, request: OfrepEvaluationRequest): OfrepFlagResult[] {
  return set.flags.map((flag) => evaluateOfrep(set, flag, request));
}

function outcomeOf(
  flag: CompiledFlag,
  result: EvaluationResult,
  overridden: boolean,
): { reason: OfrepReason; variant: string; extra: OfrepMetadata } {
  if (overridden) return { reason: 'TARGETING_MATCH', variant: 'override', extra: {} };
  const config = flag.environments[result.environment];
  if (!config.enabled) return { reason: 'DISABLED', variant: 'off', extra: {} };
  const prerequisite = result.trace.find((entry) => entry.prerequisite !== undefined)?.prerequisite;
  if (prerequisite !== undefined) return { reason: 'DEFAULT', variant: 'off', extra: { prerequisite } };
  const winner = result.matchedRule === null ? undefined : result.trace.find((entry) => entry.matched);
  if (winner) {
    const rollout = winner.rolloutPercentage;
    const split = rollout !== null && rollout > 0 && rollout < 100;
    return {
      reason: split ? 'SPLIT' : 'TARGETING_MATCH',
      variant: winner.ruleName,
      extra: { ruleId: winner.ruleId, ...(split ? { rolloutPercentage: rollout } : {}) },
    };
  }
  const targeted = config.rules.length > 0 || config.prerequisites.length > 0;
  return { reason: targeted ? 'DEFAULT' : 'STATIC', variant: 'value', extra: {} };
}
