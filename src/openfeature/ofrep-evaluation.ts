import {
  applicableOverride,
  evaluateFlag,
  flagByKey,
  overridesOf,
  parseFlagValue,
  type AppFlagSet,
  type CompiledFlag,
  type EvaluateFlagOptions,
  type EvaluationResult,
  type FlagOverrideRecord,
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
 * `off` (the flag's default value); `metadata` says which environment and value type. A device
 * (a device token) is not shown the targeting behind a value, which GET /flags does not show it
 * either: a rule's variant is `rule`, without `ruleId` or `rolloutPercentage` (decision 0071).
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
  return flagByKey(set.index, key);
}

export function flagNotFound(key: string): OfrepFailure {
  return { key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `No flag of this app has the key '${key}'` };
}

/** Evaluates one flag of the set for the request's context and device: the flag and its prerequisite chain only. */
export function evaluateOfrep(set: AppFlagSet, flag: CompiledFlag, request: OfrepEvaluationRequest): OfrepFlagResult {
  const overrides = overridesOf(set, request.deviceKeyId);
  return evaluateWith(flag, request, overrides, new Date(), {
    set: set.index,
    prerequisiteOverrides: { byFlagId: overrides, deviceKeyId: request.deviceKeyId },
  });
}

/**
 * Every flag of the set, in the set's (topological) order, in one pass as GET /flags evaluates
 * them: each flag is evaluated once, its prerequisites read from the values served before it.
 */
export function evaluateOfrepAll(set: AppFlagSet, request: OfrepEvaluationRequest): OfrepFlagResult[] {
  const overrides = overridesOf(set, request.deviceKeyId);
  const now = new Date();
  const served = new Map<string, string | null>();
  return set.flags.map((flag) => evaluateWith(flag, request, overrides, now, { served }));
}

function evaluateWith(
  flag: CompiledFlag,
  request: OfrepEvaluationRequest,
  overrides: ReadonlyMap<string, readonly FlagOverrideRecord[]>,
  now: Date,
  prerequisites: Pick<EvaluateFlagOptions, 'set' | 'served' | 'prerequisiteOverrides'>,
): OfrepFlagResult {
  const candidates = overrides.get(flag.id);
  const override = candidates ? applicableOverride(candidates, request.deviceKeyId, now) : null;
  // An override whose value no longer fits the flag's type is ignored, by the kernel as by GET /flags.
  const overridden = override !== null && parseFlagValue(flag.valueType, override.forcedValue).ok;
  const result = evaluateFlag(flag, request.environment, request.context, { ...prerequisites, override });
  const parsed = parseFlagValue(flag.valueType, result.resolvedValue);
  if (!parsed.ok) {
    // GET /flags leaves such a flag out; OFREP says why.
    return {
      key: flag.key,
      errorCode: 'PARSE_ERROR',
      errorDetails: `The value this flag serves is not a valid ${flag.valueType}: ${parsed.message}`,
    };
  }
  const { reason, variant, extra } = outcomeOf(flag, result, overridden, request.caller === 'server');
  return {
    key: flag.key,
    value: parsed.value,
    reason,
    variant,
    metadata: { environment: result.environment, valueType: flag.valueType, ...extra },
  };
}

/** What a device is told served it when a rule did: not the rule's name (decision 0071). */
export const DEVICE_RULE_VARIANT = 'rule';

/** `targeting`: the caller may see the rule behind a value (a server's `flags:read` key), not a device. */
function outcomeOf(
  flag: CompiledFlag,
  result: EvaluationResult,
  overridden: boolean,
  targeting: boolean,
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
    const reason = split ? 'SPLIT' : 'TARGETING_MATCH';
    if (!targeting) return { reason, variant: DEVICE_RULE_VARIANT, extra: {} };
    return {
      reason,
      variant: winner.ruleName,
      extra: { ruleId: winner.ruleId, ...(split ? { rolloutPercentage: rollout } : {}) },
    };
  }
  const targeted = config.rules.length > 0 || config.prerequisites.length > 0;
  return { reason: targeted ? 'DEFAULT' : 'STATIC', variant: 'value', extra: {} };
}
