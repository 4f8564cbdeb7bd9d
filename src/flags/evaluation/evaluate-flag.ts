/**
 * Flag evaluation. Decisions the interface document leaves open:
 * - An unknown environment slug is served the flag's stored production value, as the
 *   document words it: production's `value` (or `defaultValue` when production is
 *   disabled), without running production's rules, so a mistyped slug never receives
 *   targeted values. The result's `environment` says `production`, the configuration that
 *   actually answered, so the caller can see the fallback happened.
 * - A disabled environment serves `defaultValue` with `isDefault` true and an empty trace:
 *   its rules are switched off with it.
 * - An override beats everything, a disabled environment included: overrides exist so a
 *   tester's device can see a value before it is switched on. An override whose value no
 *   longer fits the flag's type is ignored.
 * - Trace after the first match and rollout without a device id: see evaluateFlag and
 *   passesRollout.
 * - Prerequisites are checked when the environment is enabled, before its rules: when a
 *   prerequisite flag's value for this device (its override included, in GET /flags) differs
 *   from the one required, the flag serves its off value (`defaultValue`, what a disabled
 *   environment serves). Values compare typed (`1.0` equals `1` for a double).
 */

import { canonicalOf, compileFlag } from './compile-flag.js';
import type {
  CompiledEnvironment,
  CompiledFlag,
  CompiledPrerequisite,
  CompiledRule,
  CompiledValue,
} from './compile-flag.js';
import { conditionPasses, PreparedContext } from './conditions.js';
import { prerequisiteChain, type FlagSetIndex } from './flag-set-index.js';
import { isEnvironment } from './flag-types.js';
import type {
  Environment,
  EvaluationContext,
  EvaluationResult,
  FlagDefinition,
  FlagOverrideRecord,
  FlagValue,
  TraceEntry,
} from './flag-types.js';
import { parseFlagValue } from './flag-values.js';
import { passesRollout, rolloutBucket } from './rollout.js';

export interface EvaluateFlagOptions {
  /** Only GET /flags applies overrides; the evaluate endpoint never passes one. */
  readonly override?: { readonly forcedValue: string } | null;
  /**
   * The app's flags, indexed (indexFlagSet; the flag store holds each app's), against which
   * prerequisites are evaluated: only the flag's prerequisite chain is. None (and no `served`):
   * every prerequisite fails.
   */
  readonly set?: FlagSetIndex;
  /**
   * Instead of `set`, for a pass over the set in its order that evaluates each flag once (pass the
   * set's compiled flag): the values served to the flags before this one, canonical JSON by key.
   * The prerequisites are checked against it, nothing else is evaluated, and this flag's value is
   * added to it for the flags after it.
   */
  readonly served?: Map<string, string | null>;
  /**
   * The device's overrides by flag id, applied to the prerequisite flags as GET /flags applies them
   * (OpenFeature's evaluation passes them; the evaluate endpoint passes none).
   */
  readonly prerequisiteOverrides?: {
    readonly byFlagId: ReadonlyMap<string, readonly FlagOverrideRecord[]>;
    readonly deviceKeyId: string | null;
  };
}

/** The first prerequisite whose flag's value (canonical JSON, by key) differs, or null when all hold. */
export function failingPrerequisite(
  prerequisites: readonly CompiledPrerequisite[],
  served: Pick<ReadonlyMap<string, string | null>, 'get'>,
): CompiledPrerequisite | null {
  for (const prerequisite of prerequisites) {
    const actual = served.get(prerequisite.flagKey);
    if (prerequisite.expected === null || actual !== prerequisite.expected) return prerequisite;
  }
  return null;
}

export interface EvaluateFlagSetOptions {
  /** Whose overrides apply; defaults to the context's device id (the X-Device-ID value). */
  readonly deviceKeyId?: string | null;
  readonly now?: Date;
}

function resolveEnvironment(environment: string): { readonly environment: Environment; readonly known: boolean } {
  return isEnvironment(environment) ? { environment, known: true } : { environment: 'production', known: false };
}

function fallbackValue(flag: CompiledFlag): CompiledValue {
  const production = flag.environments.production;
  return production.enabled ? production.value : flag.defaultValue;
}

/** Hashes at most once per flag evaluation, and only if a partial rollout is reached. */
function lazyBucket(flagKey: string, context: PreparedContext): () => number | null {
  let bucket: number | null | undefined;
  return () => {
    if (bucket === undefined) {
      const deviceId = context.operand('device_id')?.text;
      bucket = deviceId === undefined ? null : rolloutBucket(flagKey, deviceId);
    }
    return bucket;
  };
}

function traceRule(rule: CompiledRule, context: PreparedContext, bucket: () => number | null): TraceEntry {
  const conditions = rule.conditions.map((condition) => {
    const actual = context.operand(condition.attribute);
    return {
      attribute: condition.attribute,
      operator: condition.operator,
      expected: condition.expected,
      actual: actual?.text ?? null,
      passed: actual !== null && condition.test(actual),
    };
  });
  // Computed even when a condition failed, so the trace shows which side of the rollout the device is on.
  const passedRollout = rule.rolloutPercentage === null ? null : passesRollout(rule.rolloutPercentage, bucket);
  return {
    ruleName: rule.name,
    ruleId: rule.id,
    priority: rule.priority,
    matched: conditions.every((condition) => condition.passed) && passedRollout !== false,
    rolloutPercentage: rule.rolloutPercentage,
    passedRollout,
    conditions,
    value: rule.value.raw,
  };
}

/**
 * The evaluate endpoint's answer, with a trace. Every active rule is traced, those after
 * the first match included, and each entry's `matched` says whether that rule matches this
 * context on its own; the first matching entry in priority order is the one that wins
 * (`matchedRule`). A trace that stopped at the winner could not show why a later rule
 * would not have applied, which is what a developer debugging targeting needs.
 */
export function evaluateFlag(
  flag: FlagDefinition | CompiledFlag,
  environment: string,
  context: EvaluationContext,
  options: EvaluateFlagOptions = {},
): EvaluationResult {
  // The flag store holds compiled flags only; a stored definition is compiled here.
  const compiled = 'keyJson' in flag ? flag : compileFlag(flag);
  const resolved = resolveEnvironment(environment);
  const result = (
    value: Pick<CompiledValue, 'raw' | 'canonical'>,
    matchedRule: string | null,
    trace: readonly TraceEntry[],
    isDefault = matchedRule === null,
  ): EvaluationResult => {
    // In a pass, what this flag served is what the prerequisites of later flags compare.
    options.served?.set(flag.key, value.canonical);
    return {
      flagKey: flag.key,
      flagId: flag.id,
      environment: resolved.environment,
      resolvedValue: value.raw,
      valueType: flag.valueType,
      matchedRule,
      isDefault,
      trace,
    };
  };

  const forced = options.override?.forcedValue;
  if (forced !== undefined) {
    const parsed = parseFlagValue(flag.valueType, forced);
    if (parsed.ok) return result({ raw: forced, canonical: canonicalOf(parsed) }, null, [], false);
  }
  if (!resolved.known) return result(fallbackValue(compiled), null, []);
  const config = compiled.environments[resolved.environment];
  if (!config.enabled) return result(compiled.defaultValue, null, []);

  if (config.prerequisites.length) {
    let served = options.served;
    let prerequisites = config.prerequisites;
    if (!served) {
      served = new Map<string, string | null>();
      const set = options.set;
      // A stored definition is compiled on its own (its prerequisites untyped): the set's copy types them.
      const withTypes = set?.byId.get(flag.id);
      if (withTypes) prerequisites = withTypes.environments[resolved.environment].prerequisites;
      const overrides = options.prerequisiteOverrides;
      if (set) {
        const until = set.positionByKey.get(flag.key) ?? set.flags.length;
        evaluateInto(
          prerequisiteChain(set, prerequisites, until, resolved.environment),
          resolved.environment,
          context,
          overrides?.byFlagId ?? NO_OVERRIDES,
          overrides?.deviceKeyId ?? null,
          undefined,
          served,
        );
      }
    }
    const failing = failingPrerequisite(prerequisites, served);
    if (failing) {
      const actual = served.get(failing.flagKey) ?? null;
      return result(compiled.defaultValue, null, [
        {
          ruleName: `prerequisite ${failing.flagKey}`,
          ruleId: `prerequisite:${failing.flagKey}`,
          priority: -1,
          matched: false,
          rolloutPercentage: null,
          passedRollout: null,
          conditions: [
            {
              attribute: `flag.${failing.flagKey}`,
              operator: 'equals',
              expected: failing.value,
              actual,
              passed: false,
            },
          ],
          value: compiled.defaultValue.raw,
          prerequisite: failing.flagKey,
        },
      ]);
    }
  }

  const prepared = new PreparedContext(context);
  const bucket = lazyBucket(compiled.key, prepared);
  const trace = config.rules.map((rule) => traceRule(rule, prepared, bucket));
  const winner = trace.findIndex((entry) => entry.matched);
  return winner >= 0
    ? result(config.rules[winner].value, trace[winner].ruleName, trace)
    : result(config.value, null, trace);
}

/** The override that applies to a device now; pass overrides newest first, as the list endpoint orders them. */
export function applicableOverride<T extends FlagOverrideRecord>(
  overrides: readonly T[],
  deviceKeyId: string,
  now: Date,
): T | null {
  const at = now.getTime();
  return (
    overrides.find(
      (override) =>
        override.deviceKeyId === deviceKeyId && (override.expiresAt === null || override.expiresAt.getTime() > at),
    ) ?? null
  );
}

/** What a flag serves in an environment (null: an unknown one) to a context, overrides and prerequisites aside. */
export function servedValue(
  flag: CompiledFlag,
  config: CompiledEnvironment | null,
  context: PreparedContext,
): CompiledValue {
  if (config === null) return fallbackValue(flag);
  if (!config.enabled) return flag.defaultValue;
  // Every condition, then the rollout as passesRollout decides it, written out for the hottest loop: no closure per
  // flag, and the device's bucket hashed at most once per flag, only if a partial rollout is reached.
  let bucket: number | null | undefined;
  rules: for (const rule of config.rules) {
    for (const condition of rule.conditions) {
      if (!conditionPasses(condition, context)) continue rules;
    }
    const percentage = rule.rolloutPercentage;
    if (percentage === null || percentage >= 100) return rule.value;
    if (!(percentage > 0)) continue;
    if (bucket === undefined) {
      const deviceId = context.operand('device_id')?.text;
      bucket = deviceId === undefined ? null : rolloutBucket(flag.key, deviceId);
    }
    if (bucket !== null && bucket < percentage) return rule.value;
  }
  return config.value;
}

/** Receives each served flag of a pass: its typed value and that value as JSON text. */
type ServedSink = (flag: CompiledFlag, value: FlagValue, json: string) => void;

/**
 * GET /flags: every flag's typed value for one device, with no trace. The per-request work
 * is parsing the context once and walking precompiled rules. A flag whose served value no
 * longer fits its type is left out, so the SDK falls back to its built-in default rather
 * than receiving a mistyped value.
 */
export function evaluateFlagSet(
  flags: readonly CompiledFlag[],
  environment: string,
  context: EvaluationContext,
  overridesByFlagId: ReadonlyMap<string, readonly FlagOverrideRecord[]> = NO_OVERRIDES,
  options: EvaluateFlagSetOptions = {},
): Record<string, FlagValue> {
  // No prototype, so a flag keyed `__proto__` is an ordinary entry.
  const values: Record<string, FlagValue> = Object.create(null) as Record<string, FlagValue>;
  evaluateSet(flags, environment, context, overridesByFlagId, options, (flag, value) => {
    values[flag.key] = value;
  });
  return values;
}

/**
 * The same values as `evaluateFlagSet`, as the JSON text of that object: each flag's key and
 * value were serialised when the set was compiled, so a request joins text and allocates no
 * object per flag. Keys come in the set's order.
 */
export function evaluateFlagSetJson(
  flags: readonly CompiledFlag[],
  environment: string,
  context: EvaluationContext,
  overridesByFlagId: ReadonlyMap<string, readonly FlagOverrideRecord[]> = NO_OVERRIDES,
  options: EvaluateFlagSetOptions = {},
): string {
  let json = '';
  evaluateSet(flags, environment, context, overridesByFlagId, options, (flag, _value, text) => {
    json += json ? `,${flag.keyJson}:${text}` : `${flag.keyJson}:${text}`;
  });
  return `{${json}}`;
}

const NO_OVERRIDES: ReadonlyMap<string, readonly FlagOverrideRecord[]> = new Map();

function evaluateSet(
  flags: readonly CompiledFlag[],
  environment: string,
  context: EvaluationContext,
  overridesByFlagId: ReadonlyMap<string, readonly FlagOverrideRecord[]>,
  options: EvaluateFlagSetOptions,
  sink: ServedSink,
): void {
  const deviceKeyId = options.deviceKeyId === undefined ? context.deviceId : options.deviceKeyId;
  evaluateInto(flags, environment, context, overridesByFlagId, deviceKeyId ?? null, options.now, null, sink);
}

/**
 * The one pass over a set in its compiled (topological) order. Each flag is evaluated once;
 * `served` collects each flag's value as canonical JSON for the prerequisites of later flags
 * (and for the caller), `sink` receives the typed values.
 */
function evaluateInto(
  flags: readonly CompiledFlag[],
  environment: string,
  context: EvaluationContext,
  overridesByFlagId: ReadonlyMap<string, readonly FlagOverrideRecord[]>,
  deviceKeyId: string | null,
  now: Date | undefined,
  servedOut: Map<string, string | null> | null,
  sink?: ServedSink,
): void {
  const resolved = resolveEnvironment(environment);
  const prepared = new PreparedContext(context);
  const served = servedOut ?? new Map<string, string | null>();
  const overridden = deviceKeyId !== null && overridesByFlagId.size > 0;
  const at = overridden ? (now ?? new Date()) : null;

  for (const flag of flags) {
    const overrides = overridden ? overridesByFlagId.get(flag.id) : undefined;
    const override = overrides ? applicableOverride(overrides, deviceKeyId!, at!) : null;
    if (override) {
      const forced = parseFlagValue(flag.valueType, override.forcedValue);
      if (forced.ok) {
        const text = canonicalOf(forced)!;
        sink?.(flag, forced.value, text);
        served.set(flag.key, text);
        continue;
      }
    }
    const config = resolved.known ? flag.environments[resolved.environment] : null;
    const value =
      config?.enabled && config.prerequisites.length && failingPrerequisite(config.prerequisites, served)
        ? flag.defaultValue
        : servedValue(flag, config, prepared);
    if (value.parsed.ok) sink?.(flag, value.parsed.value, value.canonical!);
    served.set(flag.key, value.canonical);
  }
}
