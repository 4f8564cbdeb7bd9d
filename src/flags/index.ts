/**
 * What the flags feature offers other features beyond its module and service: the in-memory flag
 * store and the one evaluation kernel over it, so that another protocol (OpenFeature's OFREP)
 * serves the very values GET /api/v1/flags serves, with the same rollout buckets, and the strong
 * ETags of its conditional fetches.
 */
export { FlagStore, overridesOf, type AppFlagSet } from './flag-store.js';
export { applicableOverride, evaluateFlag, type EvaluateFlagOptions } from './evaluation/evaluate-flag.js';
export type { CompiledFlag } from './evaluation/compile-flag.js';
export { flagByKey } from './evaluation/flag-set-index.js';
export { parseFlagValue } from './evaluation/flag-values.js';
export {
  ENVIRONMENTS,
  isEnvironment,
  type Environment,
  type EvaluationContext,
  type EvaluationResult,
  type FlagOverrideRecord,
  type FlagValue,
} from './evaluation/flag-types.js';
export { FLAG_KEY_PATTERN } from './flag-key-param.js';
export { ifNoneMatchHits, strongEtag } from './conditional-fetch.js';
